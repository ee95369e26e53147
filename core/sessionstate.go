package core

import (
	"context"
	"encoding/json"
)

// SessionStateStore is the optional state document of a session: one JSON
// value a client and the session's runs share (AG-UI's agent state), kept
// beside the session's messages and deleted with it. Every first-party
// store implements it; core/storetest holds them to it.
type SessionStateStore interface {
	// GetSessionState returns the session's state document as it was
	// last put, byte for byte, or nil when none was. A missing session is
	// ErrSessionNotFound.
	GetSessionState(ctx context.Context, sessionID string) (json.RawMessage, error)
	// PutSessionState replaces the session's state document (nil or JSON
	// null removes it) and touches its UpdatedAt. A missing session is
	// ErrSessionNotFound; a value that is not JSON is VALIDATION_ERROR.
	PutSessionState(ctx context.Context, sessionID string, state json.RawMessage) error
}

// GetSessionState implements SessionStateStore; under the ownership rule
// another identity's session is ErrSessionNotFound.
func (s *Storage) GetSessionState(ctx context.Context, sessionID string) (json.RawMessage, error) {
	if err := s.can(StoreSessionState); err != nil {
		return nil, err
	}
	if err := s.mayUseSession(ctx, sessionID); err != nil {
		return nil, err
	}
	return s.state.GetSessionState(ctx, sessionID)
}

// PutSessionState implements SessionStateStore; under the ownership rule
// another identity's session is ErrSessionNotFound. A value that is not
// JSON is refused here, before the store.
func (s *Storage) PutSessionState(ctx context.Context, sessionID string, state json.RawMessage) error {
	if err := s.can(StoreSessionState); err != nil {
		return err
	}
	if len(state) > 0 && !json.Valid(state) {
		return &BreadError{Code: CodeValidationError, Message: "the session state is not JSON"}
	}
	if err := s.mayUseSession(ctx, sessionID); err != nil {
		return err
	}
	return s.state.PutSessionState(ctx, sessionID, state)
}
