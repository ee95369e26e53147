package core

import (
	"context"
	"time"
)

// EvalResult is one eval case's outcome: what `bread eval` prints and
// POST /agents/{id}/evals answers. The project loader produces it; the
// server only relays it, so it lives here, where both can name it.
type EvalResult struct {
	// Suite is the eval file, relative to the project.
	Suite string `json:"suite"`
	// Type tags the suite: functional, prompt-injection, jailbreak or
	// data-exfiltration.
	Type     string   `json:"type"`
	Case     string   `json:"case"`
	Passed   bool     `json:"passed"`
	Problems []string `json:"problems,omitempty"`
	Output   any      `json:"output,omitempty"`
	// DurationMs is how long the case ran, in milliseconds.
	DurationMs int64 `json:"durationMs"`
}

// EvalRun is one run of an agent's eval suites, kept by an EvalRunStore so
// a console can chart an agent's pass rate over time and open a past run's
// cases.
type EvalRun struct {
	ID      string `json:"id"`
	AgentID string `json:"agentId"`
	// StartedBy is the owner key (OwnerKey) of the identity that ran the
	// evals, "" for none. Storage.SaveEvalRun sets it, when empty, from
	// the caller's identity; under the ownership rule (OwnSessions) only
	// that identity and admins see the run.
	StartedBy string `json:"startedBy,omitempty"`
	// CreatedAt is when the evals started, DurationMs how long they ran.
	CreatedAt  int64 `json:"createdAt"`
	DurationMs int64 `json:"durationMs"`
	// Passed and Total count the cases: the score is Passed/Total.
	Passed int `json:"passed"`
	Total  int `json:"total"`
	// Results are the cases in the order they ran. ListEvalRuns leaves
	// them out (a chart needs the scores only); GetEvalRun has them.
	Results []EvalResult `json:"results,omitempty"`
}

// NewEvalRun is the record of agentID's eval run id, which started at
// start and ends now with results: its time, duration and score. The
// server's POST /agents/{id}/evals and `bread eval` make theirs with it.
func NewEvalRun(id, agentID string, start time.Time, results []EvalResult) EvalRun {
	r := EvalRun{ID: id, AgentID: agentID, CreatedAt: start.UnixMilli(), DurationMs: time.Since(start).Milliseconds(),
		Total: len(results), Results: results}
	for _, res := range results {
		if res.Passed {
			r.Passed++
		}
	}
	return r
}

// EvalRunFilter narrows ListEvalRuns: a run is listed when it matches
// every non-zero field.
type EvalRunFilter struct {
	AgentID string
	// StartedBy keeps the runs one identity started (its OwnerKey).
	StartedBy string
	// After, when set, keeps the runs that come after it in the listing's
	// order (newest first): a page's last run, as a cursor, asks for the
	// next page.
	After *EvalRunCursor
	// Limit caps the runs returned (<= 0: all).
	Limit int
}

// EvalRunCursor is a position in a listing of eval runs: the run it was
// made of (EvalCursorOf) and every run listed before it are behind it.
type EvalRunCursor struct {
	CreatedAt int64  `json:"c"`
	ID        string `json:"i"`
}

// EvalCursorOf is the position of r in a listing.
func EvalCursorOf(r EvalRun) *EvalRunCursor { return &EvalRunCursor{CreatedAt: r.CreatedAt, ID: r.ID} }

// Before reports whether r comes after c in a listing (newest first, by
// CreatedAt, then ID): stores that page in memory use it, and those that
// page in SQL hold to it.
func (c *EvalRunCursor) Before(r EvalRun) bool {
	return c == nil || r.CreatedAt < c.CreatedAt || (r.CreatedAt == c.CreatedAt && r.ID < c.ID)
}

// EvalRunStore is the optional history of eval runs: each run's score and
// cases, kept with its time. POST /agents/{id}/evals saves every run there,
// GET /agents/{id}/evals lists them.
type EvalRunStore interface {
	// SaveEvalRun inserts a finished eval run with its results. An empty
	// ID or AgentID is VALIDATION_ERROR; an ID already saved is an error
	// and leaves the saved run as it was.
	SaveEvalRun(ctx context.Context, r EvalRun) error
	// GetEvalRun returns a run with its results; an unknown id is
	// ErrEvalRunNotFound.
	GetEvalRun(ctx context.Context, id string) (EvalRun, error)
	// ListEvalRuns returns the runs matching filter, newest first (by
	// CreatedAt, then ID, both descending), at most filter.Limit (<= 0:
	// all), without their Results.
	ListEvalRuns(ctx context.Context, filter EvalRunFilter) ([]EvalRun, error)
}
