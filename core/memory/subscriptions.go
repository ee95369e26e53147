package memory

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/breadai/bread/core"
)

var _ core.RunSubscriptionStore = (*Store)(nil)

// PutRunSubscription implements core.RunSubscriptionStore.
func (s *Store) PutRunSubscription(ctx context.Context, sub core.RunSubscription) error {
	if sub.RunID == "" || sub.ID == "" {
		return invalid("a run subscription needs a run and an id")
	}
	if !json.Valid(sub.Config) {
		return invalid("the config of run subscription %q is not JSON", sub.ID)
	}
	sub.Config = slices.Clone(sub.Config)
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if _, ok := s.sessions[sub.SessionID]; !ok {
		return notFound(core.ErrSessionNotFound, "session %q not found", sub.SessionID)
	}
	if s.subs == nil {
		s.subs = map[string][]core.RunSubscription{}
	}
	list := s.subs[sub.RunID]
	for i, old := range list {
		if old.ID == sub.ID {
			sub.CreatedAt = old.CreatedAt
			list[i] = sub
			return nil
		}
	}
	sub.CreatedAt = s.nowMillis()
	s.subs[sub.RunID] = append(list, sub)
	return nil
}

// ListRunSubscriptions implements core.RunSubscriptionStore.
func (s *Store) ListRunSubscriptions(ctx context.Context, runID string) ([]core.RunSubscription, error) {
	if err := s.rlock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	out := make([]core.RunSubscription, 0, len(s.subs[runID]))
	for _, sub := range s.subs[runID] {
		sub.Config = slices.Clone(sub.Config)
		out = append(out, sub)
	}
	return out, nil
}

// DeleteRunSubscription implements core.RunSubscriptionStore.
func (s *Store) DeleteRunSubscription(ctx context.Context, runID, id string) (bool, error) {
	if err := s.lock(ctx); err != nil {
		return false, err
	}
	defer s.mu.Unlock()
	list := s.subs[runID]
	for i, sub := range list {
		if sub.ID == id {
			list = slices.Delete(slices.Clone(list), i, i+1)
			if len(list) == 0 {
				delete(s.subs, runID)
			} else {
				s.subs[runID] = list
			}
			return true, nil
		}
	}
	return false, nil
}

// DeleteRunSubscriptions implements core.RunSubscriptionStore.
func (s *Store) DeleteRunSubscriptions(ctx context.Context, runID string) (int, error) {
	if err := s.lock(ctx); err != nil {
		return 0, err
	}
	defer s.mu.Unlock()
	n := len(s.subs[runID])
	delete(s.subs, runID)
	return n, nil
}

// dropSessionSubscriptions removes the subscriptions of a session's runs.
// The lock must be held.
func (s *Store) dropSessionSubscriptions(sessionID string) {
	for runID, list := range s.subs {
		if len(list) > 0 && list[0].SessionID == sessionID {
			delete(s.subs, runID)
		}
	}
}
