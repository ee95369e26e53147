package memory

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"

	"github.com/breadai/bread/core"
)

var _ core.SessionStateStore = (*Store)(nil)

// GetSessionState implements core.SessionStateStore.
func (s *Store) GetSessionState(ctx context.Context, sessionID string) (json.RawMessage, error) {
	if err := s.rlock(ctx); err != nil {
		return nil, err
	}
	sess, ok := s.sessions[sessionID]
	var state []byte
	if ok {
		state = sess.state
	}
	s.mu.RUnlock()
	if !ok {
		return nil, notFound(core.ErrSessionNotFound, "session %q not found", sessionID)
	}
	if state == nil {
		return nil, nil
	}
	return slices.Clone(state), nil
}

// PutSessionState implements core.SessionStateStore.
func (s *Store) PutSessionState(ctx context.Context, sessionID string, state json.RawMessage) error {
	var doc []byte
	if trimmed := bytes.TrimSpace(state); len(trimmed) > 0 && string(trimmed) != "null" {
		if !json.Valid(trimmed) {
			return invalid("the state of session %q is not JSON", sessionID)
		}
		doc = slices.Clone(trimmed)
	}
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	sess, ok := s.sessions[sessionID]
	if !ok {
		return notFound(core.ErrSessionNotFound, "session %q not found", sessionID)
	}
	sess.state = doc
	s.touchSession(sess, s.nowMillis())
	return nil
}
