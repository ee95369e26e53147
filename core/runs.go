package core

import (
	"context"
	"slices"
	"strconv"
)

// RunStore is the optional durable record of every run's lifecycle. With
// it, a run survives the process that ran it: GET /runs/{id} answers from
// any replica, and a run whose process died is found by its lapsed lease
// and ended with RUN_LOST instead of leaving its tails waiting forever.
//
// Leases are per owner (an engine instance): the owner renews all of its
// running runs in one RenewRunLeases call, so a dead process stops renewing
// every run it held at once.
type RunStore interface {
	// PutRun inserts a run record, or replaces the mutable fields (Status,
	// Owner, LeaseUntil, CheckpointID, Attempt, ErrorCode, Fence, UpdatedAt) of the record
	// with that ID, keeping its CreatedAt, AgentID, SessionID, PipelineID
	// and StartedBy: a resumed run reuses its id and keeps its starter. A record whose session does
	// not exist is ErrSessionNotFound.
	PutRun(ctx context.Context, r RunRecord) error
	// EndRun writes r as PutRun does, unless the stored record was taken
	// from owner: it is lost (LoseRun declared it so), or running under
	// another owner. It reports whether it wrote. The check and the write
	// are one atomic step, so an owner that was paused between reading its
	// record and writing its run's end never overwrites a sweeper's lost
	// (whose RUN_LOST every tail already saw). A record that does not
	// exist is inserted (its running write failed).
	EndRun(ctx context.Context, r RunRecord, owner string) (bool, error)
	// GetRun returns a run's record; an unknown id is ErrRunNotFound.
	GetRun(ctx context.Context, id string) (RunRecord, error)
	// RenewRunLeases sets LeaseUntil on every running run of owner and
	// returns how many it renewed. UpdatedAt stays when the run last changed
	// state.
	RenewRunLeases(ctx context.Context, owner string, until int64) (int, error)
	// ExpiredRuns lists running runs whose LeaseUntil is before now, oldest
	// lease first, at most limit (<= 0: 100).
	ExpiredRuns(ctx context.Context, now int64, limit int) ([]RunRecord, error)
	// LoseRun marks a running run whose lease lapsed before now as lost, in
	// one atomic compare-and-set, clearing its Fence (every write fenced
	// on the owner's token is refused from then on), and reports whether this call did it: of
	// concurrent callers (replicas sweeping at once) exactly one wins, so
	// exactly one RUN_LOST crumb is written.
	LoseRun(ctx context.Context, id string, now int64) (bool, error)
}

// RunLister is implemented by run stores that list their records
// (`bread runs list`). All first-party stores implement it.
type RunLister interface {
	// ListRuns returns the records matching every non-zero field of
	// filter, newest first (by CreatedAt, then id), at most filter.Limit
	// (<= 0: all).
	ListRuns(ctx context.Context, filter RunFilter) ([]RunRecord, error)
}

// RunFilter narrows ListRuns: a record is listed when it matches every
// non-zero field.
type RunFilter struct {
	SessionID string
	AgentID   string
	Status    RunStatus
	// Statuses keeps the records whose status is one of these (as well as
	// Status, when both are set): one protocol state may be several run
	// statuses (A2A's failed is failed or lost).
	Statuses []RunStatus
	// StartedBy keeps the runs one identity started (its OwnerKey): a
	// protocol lists a caller's own runs without reading the others.
	StartedBy string
	// UpdatedSince keeps the records whose UpdatedAt is at or after it
	// (Unix milliseconds).
	UpdatedSince int64
	// NoPipelines leaves out pipelines' own run records (PipelineID set).
	NoPipelines bool
	// After, when set, keeps the records that come after it in the
	// listing's order (newest first): a page's last record, as a
	// RunCursor, asks for the next page. Records created meanwhile never
	// shift a page, as an offset would.
	After *RunCursor
	// Limit caps the records returned (<= 0: all).
	Limit int
}

// RunCursor is a position in a listing of runs: the record it was made of
// (CursorOf) and every record listed before it are behind it.
type RunCursor struct {
	CreatedAt int64  `json:"c"`
	ID        string `json:"i"`
}

// CursorOf is the position of r in a listing.
func CursorOf(r RunRecord) *RunCursor { return &RunCursor{CreatedAt: r.CreatedAt, ID: r.ID} }

// Matches reports whether r passes every field of f but After and Limit:
// stores that filter in memory use it, and those that filter in SQL hold
// to it (storetest checks both against it).
func (f RunFilter) Matches(r RunRecord) bool {
	return (f.SessionID == "" || r.SessionID == f.SessionID) &&
		(f.AgentID == "" || r.AgentID == f.AgentID) &&
		(f.Status == "" || r.Status == f.Status) &&
		(len(f.Statuses) == 0 || slices.Contains(f.Statuses, r.Status)) &&
		(f.StartedBy == "" || r.StartedBy == f.StartedBy) &&
		(f.UpdatedSince == 0 || r.UpdatedAt >= f.UpdatedSince) &&
		(!f.NoPipelines || r.PipelineID == "")
}

// RunCounter is implemented by run listers that count matching records
// without reading them (Storage.CountRuns falls back to listing them).
type RunCounter interface {
	// CountRuns returns how many records match f, ignoring its After and
	// Limit.
	CountRuns(ctx context.Context, f RunFilter) (int, error)
}

// SessionStarters is implemented by run stores that tell who started a
// session's runs: the server's ownership policy lets a caller read or
// delete a session in which it started a run. All first-party stores
// implement it.
type SessionStarters interface {
	// SessionStarters returns the distinct, non-empty StartedBy of the
	// runs of a session, in no particular order; none for a session with
	// no identified run or an unknown one.
	SessionStarters(ctx context.Context, sessionID string) ([]string, error)
}

// RunStatus is where a run is in its life.
type RunStatus string

// The run statuses. Queued, running and suspended are the live ones; the others
// are final.
const (
	// RunQueued is a background run stored in a JobQueue that no worker
	// has started yet; cancelling it means it never starts.
	RunQueued    RunStatus = "queued"
	RunRunning   RunStatus = "running"
	RunSuspended RunStatus = "suspended"
	RunCompleted RunStatus = "completed"
	RunFailed    RunStatus = "failed"
	RunCancelled RunStatus = "cancelled"
	RunLost      RunStatus = "lost"
)

// Final reports whether s is a status a run never leaves: an owner that was
// only paused or partitioned when its run was declared lost stops the run
// and leaves the record lost, as its tails were told.
func (s RunStatus) Final() bool {
	switch s {
	case RunCompleted, RunFailed, RunCancelled, RunLost:
		return true
	}
	return false
}

// RunRecord is one run's lifecycle. Timestamps are Unix milliseconds.
type RunRecord struct {
	ID        string `json:"runId"`
	AgentID   string `json:"agentId"`
	SessionID string `json:"sessionId,omitempty"`
	// PipelineID is set on a pipeline's own run record.
	PipelineID string `json:"pipelineId,omitempty"`
	// StartedBy is the owner key (OwnerKey) of the caller that started the
	// run, empty when no auth strategy authenticated it. It never changes:
	// a resumed run keeps the identity that started it.
	StartedBy string    `json:"startedBy,omitempty"`
	Status    RunStatus `json:"status"`
	// Owner is the engine instance executing the run; LeaseUntil is when
	// its claim lapses unless renewed. Both are cleared when the run stops
	// running.
	Owner      string `json:"owner,omitempty"`
	LeaseUntil int64  `json:"leaseUntil,omitempty"`
	// CheckpointID is the checkpoint a suspended run waits on, or, while a
	// resumed run runs, the checkpoint it continues from.
	CheckpointID string `json:"checkpointId,omitempty"`
	// Attempt is which attempt of a background run this is (1 for the
	// first; a run its agent's LostPolicy retries after its process died
	// counts up), 0 for a run started in a request.
	Attempt int `json:"attempt,omitempty"`
	// ErrorCode is the code a failed, cancelled or lost run ended with. On
	// a suspended run, RUN_LOST says a resume of its checkpoint was lost
	// mid-way (the process running it died): the run has not ended, and
	// resuming the checkpoint again continues it.
	ErrorCode string `json:"errorCode,omitempty"`
	// Fence is the token of the attempt that holds the run, or last held
	// it (see RunFence): written by PutRun, EndRun and WriteRun as the
	// other mutable fields are, kept when the run ends by its own
	// attempt (so the crumbs that follow its end are still its), cleared
	// by LoseRun. It is the store's, never shown to clients.
	Fence string `json:"-"`
	// CreatedAt is when the run first started; UpdatedAt when its status
	// last changed (a resumed run's UpdatedAt is when it resumed).
	CreatedAt int64 `json:"createdAt"`
	UpdatedAt int64 `json:"updatedAt"`
}

// OwnerKey is the stable key of an identity that StartedBy records: the
// name of the strategy that authenticated it (its "bread.strategy" claim,
// which the CLI sets), its issuer (the "iss" claim) and its subject, joined
// by spaces after quoting each, so two strategies or two issuers never
// share a key for one subject. A nil identity, or one without a subject,
// has no key ("").
func OwnerKey(id *AuthIdentity) string {
	if id == nil || id.Subject == "" {
		return ""
	}
	strategy, _ := id.Claims["bread.strategy"].(string)
	issuer, _ := id.Claims["iss"].(string)
	return strconv.Quote(strategy) + " " + strconv.Quote(issuer) + " " + strconv.Quote(id.Subject)
}
