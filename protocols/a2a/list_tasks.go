package a2a

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/breadai/bread/core"
)

// ListTasks page sizes (spec v1.0: 1 to 100, 50 when unset).
const (
	defaultTaskPage = 50
	maxTaskPage     = 100
)

// listTasksParams is a v1.0 ListTasksRequest.
type listTasksParams struct {
	ContextID            string     `json:"contextId"`
	Status               stateParam `json:"status"`
	PageSize             *int       `json:"pageSize"`
	PageToken            string     `json:"pageToken"`
	HistoryLength        *int       `json:"historyLength"`
	StatusTimestampAfter string     `json:"statusTimestampAfter"`
	IncludeArtifacts     bool       `json:"includeArtifacts"`
}

// stateParam is a TaskState in a request: its name, or, as proto3's JSON
// mapping also allows, its number.
type stateParam string

// v1StateNames are the v1.0 TaskState names by number.
var v1StateNames = []string{"TASK_STATE_UNSPECIFIED", "TASK_STATE_SUBMITTED", "TASK_STATE_WORKING", "TASK_STATE_COMPLETED",
	"TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_INPUT_REQUIRED", "TASK_STATE_REJECTED", "TASK_STATE_AUTH_REQUIRED"}

func (s *stateParam) UnmarshalJSON(b []byte) error {
	var n int
	if json.Unmarshal(b, &n) == nil {
		if n < 0 || n >= len(v1StateNames) {
			return fmt.Errorf("task state %d is not a task state", n)
		}
		*s = stateParam(v1StateNames[n])
		return nil
	}
	return json.Unmarshal(b, (*string)(s))
}

// taskPage is what ListTasks answers, in a2a-go's types: the v1 binding
// writes each task in its own shape.
type taskPage struct {
	tasks    []*a2a.Task
	next     string
	pageSize int
	total    int
}

// statusesOf are the run statuses a v1.0 task state stands for. ok is false
// for a name that is no state; a state no bread run takes (rejected,
// auth-required) lists nothing.
func statusesOf(state string) (statuses []core.RunStatus, ok bool) {
	switch state {
	case "", "TASK_STATE_UNSPECIFIED":
		return nil, true
	case "TASK_STATE_SUBMITTED":
		return []core.RunStatus{core.RunQueued}, true
	case "TASK_STATE_WORKING":
		return []core.RunStatus{core.RunRunning}, true
	case "TASK_STATE_INPUT_REQUIRED":
		return []core.RunStatus{core.RunSuspended}, true
	case "TASK_STATE_COMPLETED":
		return []core.RunStatus{core.RunCompleted}, true
	case "TASK_STATE_CANCELED":
		return []core.RunStatus{core.RunCancelled}, true
	case "TASK_STATE_FAILED":
		return []core.RunStatus{core.RunFailed, core.RunLost}, true
	case "TASK_STATE_REJECTED", "TASK_STATE_AUTH_REQUIRED":
		return []core.RunStatus{}, true
	}
	return nil, false
}

// encodePageToken and decodePageToken make a run cursor an opaque token.
func encodePageToken(c *core.RunCursor) string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodePageToken(token string) (*core.RunCursor, error) {
	if token == "" {
		return nil, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(token)
	var c core.RunCursor
	if err != nil || json.Unmarshal(b, &c) != nil || c.ID == "" {
		return nil, invalidParams("pageToken is not a token this server issued")
	}
	return &c, nil
}

// listTasks implements ListTasks over the run records of the plugin's
// agent, newest first, paged by a keyset cursor so tasks created between
// two pages never shift them. A caller with an identity lists the tasks it
// started (or, with Options.AuthorizeTask, those it allows); a caller
// without one, on a server without auth, lists them all.
func (h *handler) listTasks(ctx context.Context, p listTasksParams) (*taskPage, error) {
	size := defaultTaskPage
	if p.PageSize != nil {
		size = *p.PageSize
	}
	if size < 1 || size > maxTaskPage {
		return nil, invalidParams(fmt.Sprintf("pageSize must be from 1 to %d", maxTaskPage))
	}
	if p.HistoryLength != nil && *p.HistoryLength < 0 {
		return nil, invalidParams("historyLength must not be negative")
	}
	statuses, ok := statusesOf(string(p.Status))
	if !ok {
		return nil, invalidParams("status " + quote(string(p.Status)) + " is not a task state")
	}
	after, err := decodePageToken(p.PageToken)
	if err != nil {
		return nil, err
	}
	f := core.RunFilter{AgentID: h.p.opts.Agent, SessionID: p.ContextID, Statuses: statuses, NoPipelines: true, After: after}
	if p.StatusTimestampAfter != "" {
		at, err := time.Parse(time.RFC3339Nano, p.StatusTimestampAfter)
		if err != nil {
			return nil, invalidParams("statusTimestampAfter is not an RFC 3339 timestamp")
		}
		f.UpdatedSince = max(at.UnixMilli(), 1)
	}
	page := &taskPage{pageSize: size, tasks: []*a2a.Task{}}
	if statuses != nil && len(statuses) == 0 {
		return page, nil
	}
	id := core.IdentityFrom(ctx)
	custom := h.p.opts.AuthorizeTask != nil && id != nil
	if id != nil && !custom {
		if f.StartedBy = core.OwnerKey(id); f.StartedBy == "" {
			// An identity without a subject started no run it could own.
			return page, nil
		}
	}
	st := h.p.runs
	if !custom {
		if page.total, err = st.CountRuns(ctx, f); err != nil {
			return nil, h.internal(ctx, "counting tasks", err)
		}
	}
	var recs []core.RunRecord
	for {
		f.Limit = size + 1 - len(recs)
		batch, err := st.ListRuns(ctx, f)
		if err != nil {
			return nil, h.internal(ctx, "listing tasks", err)
		}
		for _, r := range batch {
			if !custom || h.allowed(ctx, r) {
				recs = append(recs, r)
			}
		}
		if len(batch) < f.Limit || len(recs) > size {
			break
		}
		f.After = core.CursorOf(batch[len(batch)-1])
	}
	if len(recs) > size {
		recs = recs[:size]
		page.next = encodePageToken(core.CursorOf(recs[size-1]))
	}
	if custom {
		if page.total, err = h.countAllowed(ctx, f); err != nil {
			return nil, err
		}
	}
	for _, r := range recs {
		page.tasks = append(page.tasks, h.listed(ctx, r, p.IncludeArtifacts))
	}
	return page, nil
}

// countAllowed counts the records of f that Options.AuthorizeTask allows:
// the callback decides per run, so every matching record is read.
func (h *handler) countAllowed(ctx context.Context, f core.RunFilter) (int, error) {
	f.After, f.Limit = nil, 0
	all, err := h.p.runs.ListRuns(ctx, f)
	if err != nil {
		return 0, h.internal(ctx, "counting tasks", err)
	}
	n := 0
	for _, r := range all {
		if h.allowed(ctx, r) {
			n++
		}
	}
	return n, nil
}

// listed is a task as ListTasks shows it: from its run record alone (its
// state, when it changed, why it failed), or, with artifacts asked for, the
// snapshot tasks/get answers.
func (h *handler) listed(ctx context.Context, rec core.RunRecord, artifacts bool) *a2a.Task {
	if artifacts {
		return h.snapshot(ctx, rec)
	}
	info := taskInfo(rec.ID, rec.SessionID)
	t := &a2a.Task{ID: info.TaskID, ContextID: info.ContextID, Status: a2a.TaskStatus{State: stateOf(rec.Status)}}
	if rec.ErrorCode != "" && rec.Status.Final() {
		t.Status.Message = errorMessage(rec.ErrorCode, "the run ended with "+rec.ErrorCode)
	}
	if rec.UpdatedAt > 0 {
		ts := time.UnixMilli(rec.UpdatedAt).UTC()
		t.Status.Timestamp = &ts
	}
	return t
}
