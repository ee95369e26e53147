package memory

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"

	"github.com/breadai/bread/core"
)

// storedEvalRun is an eval run: its summary, with Results left out, and
// the results as JSON, decoded afresh for each GetEvalRun so a caller
// never shares them (and gets them as a SQL store returns them: outputs
// as JSON values).
type storedEvalRun struct {
	sum     core.EvalRun
	results []byte
}

// SaveEvalRun implements core.EvalRunStore. An empty id or agent, a taken
// id or results that are not JSON are a VALIDATION_ERROR.
func (s *Store) SaveEvalRun(ctx context.Context, r core.EvalRun) error {
	if r.ID == "" || r.AgentID == "" {
		return invalid("an eval run needs an id and an agent")
	}
	results, err := json.Marshal(r.Results)
	if err != nil {
		return invalid("eval run %q: results are not JSON: %v", r.ID, err)
	}
	r.Results = nil
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if _, ok := s.evalRuns[r.ID]; ok {
		return invalid("eval run %q already exists", r.ID)
	}
	s.evalRuns[r.ID] = &storedEvalRun{sum: r, results: results}
	return nil
}

// GetEvalRun implements core.EvalRunStore.
func (s *Store) GetEvalRun(ctx context.Context, id string) (core.EvalRun, error) {
	if err := s.rlock(ctx); err != nil {
		return core.EvalRun{}, err
	}
	er, ok := s.evalRuns[id]
	s.mu.RUnlock()
	if !ok {
		return core.EvalRun{}, notFound(core.ErrEvalRunNotFound, "eval run %q not found", id)
	}
	r := er.sum
	if err := json.Unmarshal(er.results, &r.Results); err != nil {
		return core.EvalRun{}, err // marshalled by SaveEvalRun: never
	}
	return r, nil
}

// ListEvalRuns implements core.EvalRunStore: newest first.
func (s *Store) ListEvalRuns(ctx context.Context, f core.EvalRunFilter) ([]core.EvalRun, error) {
	if err := s.rlock(ctx); err != nil {
		return nil, err
	}
	out := []core.EvalRun{}
	for _, er := range s.evalRuns {
		r := er.sum
		if (f.AgentID == "" || r.AgentID == f.AgentID) && (f.StartedBy == "" || r.StartedBy == f.StartedBy) && f.After.Before(r) {
			out = append(out, r)
		}
	}
	s.mu.RUnlock()
	slices.SortFunc(out, func(a, b core.EvalRun) int {
		return cmp.Or(cmp.Compare(b.CreatedAt, a.CreatedAt), cmp.Compare(b.ID, a.ID))
	})
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return out, nil
}
