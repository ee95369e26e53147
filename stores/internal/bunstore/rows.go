package bunstore

import (
	"encoding/json"

	"github.com/uptrace/bun"

	"github.com/breadai/bread/core"
)

// The row types mirror the bread_* tables of every dialect's schema. JSON
// columns are json.RawMessage or string, never maps or structs, so bun
// writes the exact bytes it was given and reads back exactly what is stored;
// the (un)marshal to domain types happens here, once. nullzero makes an
// empty value NULL.

type sessionRow struct {
	bun.BaseModel `bun:"table:bread_sessions"`

	ID        string `bun:"id,pk"`
	CreatedAt int64  `bun:"created_at"`
	UpdatedAt int64  `bun:"updated_at"`
	AgentID   string `bun:"agent_id,nullzero"`
	Tags      string `bun:"tags"`
	Owner     string `bun:"owner,nullzero"`
}

func (r sessionRow) session(e errs) (core.Session, error) {
	s := core.Session{ID: r.ID, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, AgentID: r.AgentID, Owner: r.Owner, Tags: map[string]string{}}
	if err := json.Unmarshal([]byte(r.Tags), &s.Tags); err != nil {
		return core.Session{}, e.corrupt("bread_sessions.tags", r.ID, err)
	}
	return s, nil
}

type messageRow struct {
	bun.BaseModel `bun:"table:bread_session_messages"`

	ID        string          `bun:"id"`
	SessionID string          `bun:"session_id"`
	Role      string          `bun:"role"`
	Content   json.RawMessage `bun:"content"`
	Timestamp int64           `bun:"timestamp"`
}

func (r messageRow) message() core.SessionMessage {
	return core.SessionMessage{ID: r.ID, SessionID: r.SessionID, Role: core.MessageRole(r.Role), Content: r.Content, Timestamp: r.Timestamp}
}

type checkpointRow struct {
	bun.BaseModel `bun:"table:bread_checkpoints"`

	ID         string          `bun:"id,pk"`
	AgentID    string          `bun:"agent_id"`
	RunID      string          `bun:"run_id"`
	SessionID  string          `bun:"session_id,nullzero"`
	ToolName   string          `bun:"tool_name"`
	ToolCallID string          `bun:"tool_call_id"`
	Schema     json.RawMessage `bun:"schema"`
	Prompt     string          `bun:"prompt,nullzero"`
	Kind       string          `bun:"kind,nullzero"`
	Skill      string          `bun:"skill,nullzero"`
	Parent     json.RawMessage `bun:"parent"`
	Pending    json.RawMessage `bun:"pending"`
	CreatedAt  int64           `bun:"created_at"`
	Meta       json.RawMessage `bun:"meta"`
	HumanSet   json.RawMessage `bun:"human_set"`
	// ClaimedBy and ClaimedUntil hold a resume's claim.
	ClaimedBy    string `bun:"claimed_by,nullzero"`
	ClaimedUntil int64  `bun:"claimed_until,nullzero"`
	// Pos is only read back: where the table has a pos column (PostgreSQL's
	// insertion order), DELETE … RETURNING * returns it too.
	Pos int64 `bun:"pos,scanonly"`
}

func newCheckpointRow(e errs, cp core.CheckpointRecord) (checkpointRow, error) {
	if err := e.checkText("a checkpoint field", cp.ID, cp.AgentID, cp.RunID, cp.SessionID, cp.ToolName,
		cp.ToolCallID, cp.Prompt, string(cp.Kind), cp.Skill, cp.ClaimedBy); err != nil {
		return checkpointRow{}, err
	}
	r := checkpointRow{
		ID: cp.ID, AgentID: cp.AgentID, RunID: cp.RunID, SessionID: cp.SessionID,
		ToolName: cp.ToolName, ToolCallID: cp.ToolCallID, Prompt: cp.Prompt,
		Kind: string(cp.Kind), Skill: cp.Skill, CreatedAt: cp.CreatedAt,
		ClaimedBy: cp.ClaimedBy, ClaimedUntil: cp.ClaimedUntil,
	}
	var err error
	if cp.Meta != nil {
		if r.Meta, err = e.marshalJSON("checkpoint meta", cp.Meta); err != nil {
			return r, err
		}
	}
	if r.Schema, err = e.rawJSON("checkpoint schema", cp.Schema); err != nil {
		return r, err
	}
	if cp.Parent != nil {
		if r.Parent, err = e.marshalJSON("checkpoint parent", cp.Parent); err != nil {
			return r, err
		}
	}
	if cp.Pending != nil {
		if r.Pending, err = e.marshalJSON("checkpoint pending", cp.Pending); err != nil {
			return r, err
		}
	}
	if cp.Set != nil {
		if r.HumanSet, err = e.marshalJSON("checkpoint set", cp.Set); err != nil {
			return r, err
		}
	}
	return r, nil
}

func (r checkpointRow) checkpoint(e errs) (core.CheckpointRecord, error) {
	cp := core.CheckpointRecord{
		ID: r.ID, AgentID: r.AgentID, RunID: r.RunID, SessionID: r.SessionID,
		ToolName: r.ToolName, ToolCallID: r.ToolCallID, Schema: r.Schema, Prompt: r.Prompt,
		Kind: core.HumanKind(r.Kind), Skill: r.Skill, CreatedAt: r.CreatedAt,
		ClaimedBy: r.ClaimedBy, ClaimedUntil: r.ClaimedUntil,
	}
	if r.Parent != nil {
		cp.Parent = new(core.CheckpointParent)
		if err := json.Unmarshal(r.Parent, cp.Parent); err != nil {
			return cp, e.corrupt("bread_checkpoints.parent", r.ID, err)
		}
	}
	if r.Pending != nil {
		if err := json.Unmarshal(r.Pending, &cp.Pending); err != nil {
			return cp, e.corrupt("bread_checkpoints.pending", r.ID, err)
		}
	}
	if r.Meta != nil {
		if err := json.Unmarshal(r.Meta, &cp.Meta); err != nil {
			return cp, e.corrupt("bread_checkpoints.meta", r.ID, err)
		}
	}
	if r.HumanSet != nil {
		cp.Set = new(core.HumanSet)
		if err := json.Unmarshal(r.HumanSet, cp.Set); err != nil {
			return cp, e.corrupt("bread_checkpoints.human_set", r.ID, err)
		}
	}
	return cp, nil
}

type loopRow struct {
	bun.BaseModel `bun:"table:bread_loops"`

	ID            string          `bun:"id,pk"`
	AgentID       string          `bun:"agent_id"`
	SessionID     string          `bun:"session_id"`
	RunID         string          `bun:"run_id"`
	Pool          json.RawMessage `bun:"pool"`
	Pipeline      json.RawMessage `bun:"pipeline"`
	MaxIterations int             `bun:"max_iterations"`
	Status        string          `bun:"status"`
	Iterations    int             `bun:"iterations"`
	Result        json.RawMessage `bun:"result"`
	StartedAt     int64           `bun:"started_at"`
	CompletedAt   int64           `bun:"completed_at,nullzero"`
}

func newLoopRow(e errs, l core.LoopRecord) (loopRow, error) {
	if err := e.checkText("a loop field", l.ID, l.AgentID, l.SessionID, l.RunID, string(l.Status)); err != nil {
		return loopRow{}, err
	}
	r := loopRow{
		ID: l.ID, AgentID: l.AgentID, SessionID: l.SessionID, RunID: l.RunID,
		MaxIterations: l.MaxIterations, Status: string(l.Status), Iterations: l.Iterations,
		StartedAt: l.StartedAt, CompletedAt: l.CompletedAt,
	}
	var err error
	if r.Pool, err = e.marshalJSON("loop pool", nonNil(l.Pool)); err != nil {
		return r, err
	}
	if r.Pipeline, err = e.marshalJSON("loop pipeline", nonNil(l.Pipeline)); err != nil {
		return r, err
	}
	if r.Result, err = e.rawJSON("loop result", l.Result); err != nil {
		return r, err
	}
	return r, nil
}

func (r loopRow) loop(e errs) (core.LoopRecord, error) {
	l := core.LoopRecord{
		ID: r.ID, AgentID: r.AgentID, SessionID: r.SessionID, RunID: r.RunID,
		MaxIterations: r.MaxIterations, Status: core.LoopStatus(r.Status), Iterations: r.Iterations,
		Result: r.Result, StartedAt: r.StartedAt, CompletedAt: r.CompletedAt,
	}
	if err := json.Unmarshal(r.Pool, &l.Pool); err != nil {
		return l, e.corrupt("bread_loops.pool", r.ID, err)
	}
	if err := json.Unmarshal(r.Pipeline, &l.Pipeline); err != nil {
		return l, e.corrupt("bread_loops.pipeline", r.ID, err)
	}
	return l, nil
}

type loopIterationRow struct {
	bun.BaseModel `bun:"table:bread_loop_iterations"`

	ID          string          `bun:"id,pk"`
	LoopID      string          `bun:"loop_id"`
	Index       int             `bun:"idx"`
	Input       json.RawMessage `bun:"input"`
	Output      json.RawMessage `bun:"output"`
	StartedAt   int64           `bun:"started_at"`
	CompletedAt int64           `bun:"completed_at"`
}

func (r loopIterationRow) iteration() core.LoopIteration {
	return core.LoopIteration{
		ID: r.ID, LoopID: r.LoopID, Index: r.Index, Input: r.Input, Output: r.Output,
		StartedAt: r.StartedAt, CompletedAt: r.CompletedAt,
	}
}

type crumbRow struct {
	bun.BaseModel `bun:"table:bread_crumbs"`

	RunID     string          `bun:"run_id,pk"`
	Seq       int64           `bun:"seq,pk"`
	SessionID string          `bun:"session_id,nullzero"`
	AgentID   string          `bun:"agent_id,nullzero"`
	Type      string          `bun:"type"`
	Crumb     json.RawMessage `bun:"crumb"`
	CreatedAt int64           `bun:"created_at"`
}

func newCrumbRow(e errs, c core.CrumbLogEntry) (crumbRow, error) {
	if err := e.checkText("a crumb log entry field", c.RunID, c.SessionID, c.AgentID, c.Type); err != nil {
		return crumbRow{}, err
	}
	if c.Crumb == nil {
		return crumbRow{}, e.validation("crumb log entry %s/%d has no crumb", c.RunID, c.Seq)
	}
	raw, err := core.EncodeCrumb(c.Crumb)
	if err != nil {
		return crumbRow{}, e.validation("crumb log entry %s/%d does not encode: %v", c.RunID, c.Seq, err)
	}
	return crumbRow{
		RunID: c.RunID, Seq: c.Seq, SessionID: c.SessionID, AgentID: c.AgentID,
		Type: c.Type, Crumb: raw, CreatedAt: c.CreatedAt,
	}, nil
}

func (r crumbRow) entry(e errs) (core.CrumbLogEntry, error) {
	c, err := core.DecodeCrumb(r.Crumb)
	if err != nil {
		return core.CrumbLogEntry{}, e.corrupt("bread_crumbs.crumb", r.RunID, err)
	}
	return core.CrumbLogEntry{
		RunID: r.RunID, Seq: r.Seq, SessionID: r.SessionID, AgentID: r.AgentID,
		Type: r.Type, Crumb: c, CreatedAt: r.CreatedAt,
	}, nil
}

type taskRunRow struct {
	bun.BaseModel `bun:"table:bread_task_runs"`

	ID          string          `bun:"id,pk"`
	TaskID      string          `bun:"task_id"`
	AgentID     string          `bun:"agent_id,nullzero"`
	SessionID   string          `bun:"session_id,nullzero"`
	RunID       string          `bun:"run_id,nullzero"`
	Model       json.RawMessage `bun:"model"`
	Input       json.RawMessage `bun:"input"`
	Output      json.RawMessage `bun:"output"`
	Status      string          `bun:"status"`
	Usage       json.RawMessage `bun:"usage"`
	Error       string          `bun:"error,nullzero"`
	DurationMs  int64           `bun:"duration_ms,nullzero"`
	CreatedAt   int64           `bun:"created_at"`
	CompletedAt int64           `bun:"completed_at,nullzero"`
}

func newTaskRunRow(e errs, t core.TaskRunRecord) (taskRunRow, error) {
	if err := e.checkText("a task run field", t.ID, t.TaskID, t.AgentID, t.SessionID, t.RunID, string(t.Status), t.Error); err != nil {
		return taskRunRow{}, err
	}
	r := taskRunRow{
		ID: t.ID, TaskID: t.TaskID, AgentID: t.AgentID, SessionID: t.SessionID, RunID: t.RunID,
		Status: string(t.Status), Error: t.Error, DurationMs: t.DurationMs,
		CreatedAt: t.CreatedAt, CompletedAt: t.CompletedAt,
	}
	var err error
	if r.Model, err = e.marshalJSON("task run model", t.Model); err != nil {
		return r, err
	}
	if r.Input, err = e.rawJSON("task run input", t.Input); err != nil {
		return r, err
	}
	if r.Output, err = e.rawJSON("task run output", t.Output); err != nil {
		return r, err
	}
	if t.Usage != nil {
		if r.Usage, err = e.marshalJSON("task run usage", t.Usage); err != nil {
			return r, err
		}
	}
	return r, nil
}

func (r taskRunRow) taskRun(e errs) (core.TaskRunRecord, error) {
	t := core.TaskRunRecord{
		ID: r.ID, TaskID: r.TaskID, AgentID: r.AgentID, SessionID: r.SessionID, RunID: r.RunID,
		Input: r.Input, Output: r.Output, Status: core.TaskRunStatus(r.Status), Error: r.Error,
		DurationMs: r.DurationMs, CreatedAt: r.CreatedAt, CompletedAt: r.CompletedAt,
	}
	if err := json.Unmarshal(r.Model, &t.Model); err != nil {
		return t, e.corrupt("bread_task_runs.model", r.ID, err)
	}
	if r.Usage != nil {
		t.Usage = new(core.Usage)
		if err := json.Unmarshal(r.Usage, t.Usage); err != nil {
			return t, e.corrupt("bread_task_runs.usage", r.ID, err)
		}
	}
	return t, nil
}

type kgNodeRow struct {
	bun.BaseModel `bun:"table:bread_kg_nodes"`

	ID        string `bun:"id,pk"`
	AgentID   string `bun:"agent_id"`
	SessionID string `bun:"session_id,nullzero"`
	Label     string `bun:"label"`
	Data      string `bun:"data"`
	CreatedAt int64  `bun:"created_at"`
}

func (r kgNodeRow) node(e errs) (core.KnowledgeNode, error) {
	n := core.KnowledgeNode{ID: r.ID, Label: r.Label, Data: map[string]any{}}
	if err := json.Unmarshal([]byte(r.Data), &n.Data); err != nil {
		return n, e.corrupt("bread_kg_nodes.data", r.ID, err)
	}
	if n.Data == nil {
		n.Data = map[string]any{}
	}
	return n, nil
}

type kgEdgeRow struct {
	bun.BaseModel `bun:"table:bread_kg_edges"`

	ID       string `bun:"id,pk"`
	FromID   string `bun:"from_id"`
	ToID     string `bun:"to_id"`
	Relation string `bun:"relation"`
}

type documentRow struct {
	bun.BaseModel `bun:"table:bread_documents"`

	ID        string `bun:"id,pk"`
	AgentID   string `bun:"agent_id"`
	Title     string `bun:"title"`
	Content   string `bun:"content"`
	Source    string `bun:"source,nullzero"`
	CreatedAt int64  `bun:"created_at"`
}
