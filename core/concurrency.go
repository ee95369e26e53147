package core

import "context"

// ConcurrencyPolicy decides what happens when a run arrives for a session
// that already has a run running: two runs never write one session's
// messages at the same time.
type ConcurrencyPolicy string

// The busy-session policies.
const (
	// ConcurrencyReject refuses the new run with SESSION_BUSY (HTTP 409).
	// It is the default.
	ConcurrencyReject ConcurrencyPolicy = "reject"
	// ConcurrencyEnqueue holds the new run until the running one (and every
	// run queued before it) ends, then starts it.
	ConcurrencyEnqueue ConcurrencyPolicy = "enqueue"
	// ConcurrencyInterrupt cancels the running run (it ends with
	// RUN_CANCELLED and its session records the interruption), waits for it
	// to end, then starts the new run.
	ConcurrencyInterrupt ConcurrencyPolicy = "interrupt"
	// ConcurrencyRollback cancels the running run like interrupt and removes
	// every message it added to the session before the new run starts, so
	// the new run sees the session as it was before. It needs a store that
	// implements MessageDeleter.
	ConcurrencyRollback ConcurrencyPolicy = "rollback"
)

// Valid reports whether p is one of the policies or empty (the default).
func (p ConcurrencyPolicy) Valid() bool {
	switch p {
	case "", ConcurrencyReject, ConcurrencyEnqueue, ConcurrencyInterrupt, ConcurrencyRollback:
		return true
	}
	return false
}

// MessageDeleter is implemented by stores that can remove messages from a
// session: the rollback busy-session policy uses it to undo the messages of
// the run it cancels. All first-party stores implement it.
type MessageDeleter interface {
	// DeleteMessages removes the messages of sessionID whose ids are in
	// ids and returns how many it removed; ids that are not in the session
	// are ignored. The order of the remaining messages is kept.
	DeleteMessages(ctx context.Context, sessionID string, ids []string) (int, error)
}

// LostAction is what becomes of a background run whose process died while
// it ran (its lease lapsed).
type LostAction string

// The lost-run actions.
const (
	// LostFail ends the run with RUN_LOST (the default).
	LostFail LostAction = "fail"
	// LostRetry runs it again under the same run id, from its last durable
	// point: the messages the lost attempt added are removed first, so
	// the retry sees the session as the lost attempt found it.
	LostRetry LostAction = "retry"
)

// DefaultLostAttempts bounds the attempts of a LostRetry policy that sets
// none.
const DefaultLostAttempts = 3

// LostPolicy is an agent's onLost policy (agent.yaml `onLost`).
type LostPolicy struct {
	Action LostAction `json:"action,omitempty"`
	// MaxAttempts bounds the attempts of a retried run, the first included
	// (<= 0: DefaultLostAttempts); the last lost attempt ends with RUN_LOST.
	MaxAttempts int `json:"maxAttempts,omitempty"`
}

// Attempts is p.MaxAttempts, or DefaultLostAttempts when unset; 1 for
// LostFail.
func (p LostPolicy) Attempts() int {
	if p.Action != LostRetry {
		return 1
	}
	if p.MaxAttempts > 0 {
		return p.MaxAttempts
	}
	return DefaultLostAttempts
}

// Valid reports whether p's action is fail, retry or empty.
func (p LostPolicy) Valid() bool {
	return p.Action == "" || p.Action == LostFail || p.Action == LostRetry
}
