package memory

import (
	"cmp"
	"context"
	"maps"
	"slices"

	"github.com/breadai/bread/core"
)

// session is a stored session. info.Tags is never changed after creation
// (nil when there are none: copySession hands out an empty map);
// info.UpdatedAt changes under the write lock. messages only grows, and a
// stored message is never changed, so a reader may copy the prefix it saw
// after releasing the lock.
type session struct {
	info     core.Session
	seq      uint64
	messages []core.SessionMessage
	// older and newer link the session into the store's order of updates
	// (sessionOrder).
	older, newer *session
	// state is the session's state document (core.SessionStateStore),
	// replaced whole and never changed in place.
	state []byte
}

// CreateSession implements core.SessionStore. An id already in use is a
// VALIDATION_ERROR.
func (s *Store) CreateSession(ctx context.Context, ns core.NewSession) (core.Session, error) {
	id := ns.ID
	if id == "" {
		id = s.newID()
	}
	tags := storedTags(ns.Tags)
	now := s.nowMillis()
	info := core.Session{ID: id, CreatedAt: now, UpdatedAt: now, Tags: tags, AgentID: ns.AgentID, Owner: ns.Owner}

	if err := s.lock(ctx); err != nil {
		return core.Session{}, err
	}
	defer s.mu.Unlock()
	if _, ok := s.sessions[id]; ok {
		return core.Session{}, invalid("session %q already exists", id)
	}
	s.addSession(info)
	s.noteSession()
	return copySession(info), nil
}

// GetSession implements core.SessionStore.
func (s *Store) GetSession(ctx context.Context, id string) (core.Session, error) {
	if err := s.rlock(ctx); err != nil {
		return core.Session{}, err
	}
	sess, ok := s.sessions[id]
	var info core.Session
	if ok {
		info = sess.info
	}
	s.mu.RUnlock()
	if !ok {
		return core.Session{}, notFound(core.ErrSessionNotFound, "session %q not found", id)
	}
	return copySession(info), nil
}

// ListSessions implements core.SessionStore. Sessions come oldest first.
func (s *Store) ListSessions(ctx context.Context, filter core.SessionFilter) ([]core.Session, error) {
	if err := s.rlock(ctx); err != nil {
		return nil, err
	}
	type found struct {
		info core.Session
		seq  uint64
	}
	var hits []found
	for _, sess := range s.sessions {
		if hasTags(sess.info.Tags, filter.Tags) && (filter.Owner == "" || sess.info.Owner == filter.Owner) {
			hits = append(hits, found{sess.info, sess.seq})
		}
	}
	s.mu.RUnlock()
	slices.SortFunc(hits, func(a, b found) int { return cmp.Compare(a.seq, b.seq) })
	out := make([]core.Session, len(hits))
	for i, h := range hits {
		out[i] = copySession(h.info)
	}
	return out, nil
}

// DeleteSession implements core.SessionStore: the session goes with its
// messages, checkpoints and logged crumbs.
func (s *Store) DeleteSession(ctx context.Context, id string) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	s.dropSession(id)
	return nil
}

// CleanupSessions implements core.SessionStore.
func (s *Store) CleanupSessions(ctx context.Context, opts core.CleanupOptions) (int, error) {
	if err := s.lock(ctx); err != nil {
		return 0, err
	}
	defer s.mu.Unlock()
	if opts.OlderThan <= 0 {
		return 0, nil // tags alone never delete
	}
	cutoff := s.now().Add(-opts.OlderThan).UnixMilli()
	var doomed []string
	for id, sess := range s.sessions {
		if sess.info.UpdatedAt < cutoff && hasTags(sess.info.Tags, opts.Tags) && (opts.Owner == "" || sess.info.Owner == opts.Owner) {
			doomed = append(doomed, id)
		}
	}
	for _, id := range doomed {
		s.dropSession(id)
	}
	return len(doomed), nil
}

// dropSession deletes a session and everything anchored to it. The write
// lock must be held.
func (s *Store) dropSession(id string) {
	if sess := s.sessions[id]; sess != nil {
		s.order.remove(sess)
	}
	delete(s.sessions, id)
	for cpID, cp := range s.checkpoints {
		if cp.rec.SessionID == id {
			delete(s.checkpoints, cpID)
		}
	}
	s.dropSessionCrumbs(id)
	s.dropSessionRuns(id)
	s.dropSessionSubscriptions(id)
}

// GetMessages implements core.SessionStore. A missing session has no
// messages.
func (s *Store) GetMessages(ctx context.Context, sessionID string) ([]core.SessionMessage, error) {
	if err := s.rlock(ctx); err != nil {
		return nil, err
	}
	var msgs []core.SessionMessage
	if sess, ok := s.sessions[sessionID]; ok {
		msgs = sess.messages // a prefix no writer changes: copied below, unlocked
	}
	s.mu.RUnlock()
	return copyMessages(msgs), nil
}

// AddMessage implements core.SessionStore.
func (s *Store) AddMessage(ctx context.Context, sessionID string, m core.SessionMessage) error {
	m = s.prepareMessage(sessionID, m)
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if err := s.checkFence(ctx); err != nil {
		return err
	}
	sess, ok := s.sessions[sessionID]
	if !ok {
		return notFound(core.ErrSessionNotFound, "session %q not found", sessionID)
	}
	s.appendMessages(sess, s.nowMillis(), m)
	return nil
}

// prepareMessage copies m and gives it an id and its session, outside the
// lock.
func (s *Store) prepareMessage(sessionID string, m core.SessionMessage) core.SessionMessage {
	m.ID, m.SessionID, m.Content = s.newID(), sessionID, slices.Clone(m.Content)
	return m
}

// appendMessages adds prepared messages and touches the session. The write
// lock must be held.
func (s *Store) appendMessages(sess *session, now int64, msgs ...core.SessionMessage) {
	sess.messages = append(sess.messages, msgs...)
	s.touchSession(sess, now)
}

// hasTags reports whether tags carries every entry of want.
func hasTags(tags, want map[string]string) bool {
	for k, v := range want {
		if got, ok := tags[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// storedTags is the copy of a new session's tags the store keeps: nil for
// none, so a session per run without tags allocates no map.
func storedTags(tags map[string]string) map[string]string {
	if len(tags) == 0 {
		return nil
	}
	return maps.Clone(tags)
}

func copySession(info core.Session) core.Session {
	info.Tags = maps.Clone(info.Tags)
	if info.Tags == nil {
		info.Tags = map[string]string{}
	}
	return info
}

// copyMessages copies messages with all their contents in one allocation.
// Each content is capped at its own length, so appending to one cannot
// overwrite the next.
func copyMessages(msgs []core.SessionMessage) []core.SessionMessage {
	out := make([]core.SessionMessage, len(msgs))
	size := 0
	for _, m := range msgs {
		size += len(m.Content)
	}
	buf := make([]byte, 0, size)
	for i, m := range msgs {
		if m.Content != nil {
			start := len(buf)
			buf = append(buf, m.Content...)
			m.Content = buf[start:len(buf):len(buf)]
		}
		out[i] = m
	}
	return out
}

// ownedBy reports whether session id exists and its Owner is owner; the
// caller holds s.mu.
func (s *Store) ownedBy(id, owner string) bool {
	sess := s.sessions[id]
	return sess != nil && sess.info.Owner == owner
}
