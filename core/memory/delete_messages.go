package memory

import (
	"context"
	"slices"

	"github.com/breadai/bread/core"
)

// DeleteMessages implements core.MessageDeleter. The kept messages move to
// a new slice, so a reader still copying the old prefix outside the lock
// sees it unchanged.
func (s *Store) DeleteMessages(ctx context.Context, sessionID string, ids []string) (int, error) {
	if err := s.lock(ctx); err != nil {
		return 0, err
	}
	defer s.mu.Unlock()
	sess, ok := s.sessions[sessionID]
	if !ok || len(ids) == 0 {
		return 0, nil
	}
	kept := make([]core.SessionMessage, 0, len(sess.messages))
	for _, m := range sess.messages {
		if !slices.Contains(ids, m.ID) {
			kept = append(kept, m)
		}
	}
	n := len(sess.messages) - len(kept)
	if n > 0 {
		sess.messages = kept
		s.touchSession(sess, s.nowMillis())
	}
	return n, nil
}
