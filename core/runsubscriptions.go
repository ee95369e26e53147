package core

import (
	"context"
	"encoding/json"
)

// RunSubscriptionStore is the optional record of who asked to hear about a
// run: each subscription an opaque JSON document (an A2A push notification
// config: a receiver's URL, token and credentials) under its run and an id
// the caller chooses, kept in the store so every replica sharing it sees a
// subscription made on any of them, across restarts. Subscriptions go with
// their run's session. Every first-party store implements it;
// core/storetest holds them to it.
type RunSubscriptionStore interface {
	// PutRunSubscription inserts s, or replaces the document of the
	// subscription with its RunID and ID (keeping its place in the
	// list). A missing session is ErrSessionNotFound; an empty RunID or
	// ID, or a Config that is not JSON, is VALIDATION_ERROR.
	PutRunSubscription(ctx context.Context, s RunSubscription) error
	// ListRunSubscriptions returns a run's subscriptions in the order they
	// were first put; none is an empty list, not an error.
	ListRunSubscriptions(ctx context.Context, runID string) ([]RunSubscription, error)
	// DeleteRunSubscription removes one and reports whether it was there.
	DeleteRunSubscription(ctx context.Context, runID, id string) (bool, error)
	// DeleteRunSubscriptions removes every subscription of a run (it will
	// not change again) and returns how many it removed.
	DeleteRunSubscriptions(ctx context.Context, runID string) (int, error)
}

// RunSubscription is one subscription to a run's changes.
type RunSubscription struct {
	RunID     string `json:"runId"`
	ID        string `json:"id"`
	SessionID string `json:"sessionId"`
	// Config is the subscriber's document, kept as written.
	Config json.RawMessage `json:"config"`
	// CreatedAt (Unix ms) is when it was first put; the store sets it.
	CreatedAt int64 `json:"createdAt"`
}

// PutRunSubscription implements RunSubscriptionStore. A subscription
// without run, id or session, or whose config is not JSON, is refused
// here, before the store.
func (s *Storage) PutRunSubscription(ctx context.Context, sub RunSubscription) error {
	if err := s.can(StoreRunSubscriptions); err != nil {
		return err
	}
	if sub.RunID == "" || sub.ID == "" || sub.SessionID == "" {
		return &BreadError{Code: CodeValidationError, Message: "a run subscription needs a run, an id and a session"}
	}
	if !json.Valid(sub.Config) {
		return &BreadError{Code: CodeValidationError, Message: "a run subscription's config is not JSON"}
	}
	return s.subs.PutRunSubscription(ctx, sub)
}

// ListRunSubscriptions implements RunSubscriptionStore.
func (s *Storage) ListRunSubscriptions(ctx context.Context, runID string) ([]RunSubscription, error) {
	if err := s.can(StoreRunSubscriptions); err != nil {
		return nil, err
	}
	return s.subs.ListRunSubscriptions(ctx, runID)
}

// DeleteRunSubscription implements RunSubscriptionStore.
func (s *Storage) DeleteRunSubscription(ctx context.Context, runID, id string) (bool, error) {
	if err := s.can(StoreRunSubscriptions); err != nil {
		return false, err
	}
	return s.subs.DeleteRunSubscription(ctx, runID, id)
}

// DeleteRunSubscriptions implements RunSubscriptionStore.
func (s *Storage) DeleteRunSubscriptions(ctx context.Context, runID string) (int, error) {
	if err := s.can(StoreRunSubscriptions); err != nil {
		return 0, err
	}
	return s.subs.DeleteRunSubscriptions(ctx, runID)
}
