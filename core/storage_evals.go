package core

import (
	"context"
	"fmt"
)

// The eval history follows the session ownership rule (OwnSessions): an
// eval run belongs to the identity that ran it, and to any other caller it
// is a missing one. Without the rule, or for a caller without an identity
// or an admin, every run is visible.

// SaveEvalRun implements EvalRunStore. An empty StartedBy is set from the
// caller's identity (IdentityFrom), as CreateSession sets a session's
// Owner.
func (s *Storage) SaveEvalRun(ctx context.Context, r EvalRun) error {
	if err := s.can(StoreEvalRuns); err != nil {
		return err
	}
	if r.StartedBy == "" {
		if id := IdentityFrom(ctx); id != nil {
			r.StartedBy = OwnerKey(id)
		}
	}
	return s.evals.SaveEvalRun(ctx, r)
}

// GetEvalRun implements EvalRunStore. Under the ownership rule, another
// identity's run answers ErrEvalRunNotFound's code with a missing run's
// message.
func (s *Storage) GetEvalRun(ctx context.Context, id string) (EvalRun, error) {
	if err := s.can(StoreEvalRuns); err != nil {
		return EvalRun{}, err
	}
	r, err := s.evals.GetEvalRun(ctx, id)
	if err != nil {
		return EvalRun{}, err
	}
	if owner, all := s.sessionScope(ctx); !all && (owner == "" || r.StartedBy != owner) {
		return EvalRun{}, &BreadError{Code: CodeEvalRunNotFound, Message: fmt.Sprintf("eval run %q not found", id)}
	}
	return r, nil
}

// ListEvalRuns implements EvalRunStore. Under the ownership rule a caller
// lists only its own runs, whatever f.StartedBy says.
func (s *Storage) ListEvalRuns(ctx context.Context, f EvalRunFilter) ([]EvalRun, error) {
	if err := s.can(StoreEvalRuns); err != nil {
		return nil, err
	}
	if owner, all := s.sessionScope(ctx); !all {
		if owner == "" || (f.StartedBy != "" && f.StartedBy != owner) {
			return []EvalRun{}, nil
		}
		f.StartedBy = owner
	}
	return s.evals.ListEvalRuns(ctx, f)
}
