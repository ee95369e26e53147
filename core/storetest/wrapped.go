package storetest

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"

	"github.com/breadai/bread/core"
)

func wrapperCases() []testCase {
	return []testCase{
		{name: "a wrapper that counts calls and implements As keeps every capability", run: testWrapperKeepsCapabilities},
		{name: "closing a Storage over the wrapper closes the store", needs: needsClosedErrors, run: testWrapperCloses},
	}
}

// counting wraps a store the way a metrics or tracing wrapper does: it
// counts every BreadStore call and implements As, and no optional part.
type counting struct {
	s     core.BreadStore
	calls atomic.Int64
}

func (c *counting) As(target any) bool { return core.As(c.s, target) }

func (c *counting) CreateSession(ctx context.Context, n core.NewSession) (core.Session, error) {
	c.calls.Add(1)
	return c.s.CreateSession(ctx, n)
}

func (c *counting) GetSession(ctx context.Context, id string) (core.Session, error) {
	c.calls.Add(1)
	return c.s.GetSession(ctx, id)
}

func (c *counting) ListSessions(ctx context.Context, f core.SessionFilter) ([]core.Session, error) {
	c.calls.Add(1)
	return c.s.ListSessions(ctx, f)
}

func (c *counting) DeleteSession(ctx context.Context, id string) error {
	c.calls.Add(1)
	return c.s.DeleteSession(ctx, id)
}

func (c *counting) CleanupSessions(ctx context.Context, o core.CleanupOptions) (int, error) {
	c.calls.Add(1)
	return c.s.CleanupSessions(ctx, o)
}

func (c *counting) GetMessages(ctx context.Context, id string) ([]core.SessionMessage, error) {
	c.calls.Add(1)
	return c.s.GetMessages(ctx, id)
}

func (c *counting) AddMessage(ctx context.Context, id string, m core.SessionMessage) error {
	c.calls.Add(1)
	return c.s.AddMessage(ctx, id, m)
}

func (c *counting) SaveCheckpoint(ctx context.Context, cp core.CheckpointRecord) error {
	c.calls.Add(1)
	return c.s.SaveCheckpoint(ctx, cp)
}

func (c *counting) GetCheckpoint(ctx context.Context, id string) (core.CheckpointRecord, error) {
	c.calls.Add(1)
	return c.s.GetCheckpoint(ctx, id)
}

func (c *counting) DeleteCheckpoint(ctx context.Context, id string) (core.CheckpointRecord, error) {
	c.calls.Add(1)
	return c.s.DeleteCheckpoint(ctx, id)
}

func (c *counting) ClaimCheckpoint(ctx context.Context, id, claimant string, now, until int64) (core.CheckpointRecord, error) {
	c.calls.Add(1)
	return c.s.ClaimCheckpoint(ctx, id, claimant, now, until)
}

func (c *counting) RenewCheckpointClaims(ctx context.Context, claimant string, until int64) (int, error) {
	c.calls.Add(1)
	return c.s.RenewCheckpointClaims(ctx, claimant, until)
}

func (c *counting) SettleJoin(ctx context.Context, id string, slots, slot int, out json.RawMessage) ([]json.RawMessage, bool, error) {
	c.calls.Add(1)
	return c.s.SettleJoin(ctx, id, slots, slot, out)
}

func (c *counting) ListCheckpoints(ctx context.Context) ([]core.CheckpointRecord, error) {
	c.calls.Add(1)
	return c.s.ListCheckpoints(ctx)
}

func (c *counting) SuspendRun(ctx context.Context, id string, msgs []core.SessionMessage, cps ...core.CheckpointRecord) error {
	c.calls.Add(1)
	return c.s.SuspendRun(ctx, id, msgs, cps...)
}

// testWrapperKeepsCapabilities: a core.Storage over the counting wrapper
// has every capability the store has, each call through it reaches the
// store (what it writes is read back from the store directly), and the
// wrapper counts the BreadStore calls.
func testWrapperKeepsCapabilities(t *testing.T, s core.BreadStore) {
	w := &counting{s: s}
	st := core.NewStorage(w)
	equal(t, "capabilities through the wrapper", core.NewStorage(s).Capabilities(), st.Capabilities())
	ctx := t.Context()
	createSession(t, st, core.NewSession{ID: "s"})
	noErr(t, st.AddMessage(ctx, "s", textMessage(core.RoleUser, "hi", baseTime)), "AddMessage")
	if w.calls.Load() != 2 {
		t.Errorf("the wrapper counted %d calls, want 2", w.calls.Load())
	}
	if st.Has(core.StoreRuns) {
		rec := runRecord("run", "s", "a", core.RunRunning, baseTime)
		rec.StartedBy = "someone"
		noErr(t, st.PutRun(ctx, rec), "PutRun")
		_, err := capability[core.RunStore](t, s).GetRun(ctx, "run")
		noErr(t, err, "GetRun from the store of a run put through the wrapper")
	}
	if st.Has(core.StoreRuns | core.StoreRunList) {
		runs, err := st.ListRuns(ctx, core.RunFilter{SessionID: "s"})
		noErr(t, err, "ListRuns")
		equal(t, "runs listed through the wrapper", 1, len(runs))
	}
	if st.Has(core.StoreRuns | core.StoreSessionStarters) {
		starters, err := st.SessionStarters(ctx, "s")
		noErr(t, err, "SessionStarters")
		equal(t, "starters through the wrapper", 1, len(starters))
	}
	if st.Has(core.StoreMessageDelete) {
		msgs, err := s.GetMessages(ctx, "s")
		noErr(t, err, "GetMessages")
		n, err := st.DeleteMessages(ctx, "s", []string{msgs[0].ID})
		noErr(t, err, "DeleteMessages")
		equal(t, "messages deleted through the wrapper", 1, n)
	}
	if st.Has(core.StoreLoops) {
		noErr(t, st.CreateLoop(ctx, loop("loop", "s", baseTime)), "CreateLoop")
		_, err := capability[core.LoopStore](t, s).GetLoop(ctx, "loop")
		noErr(t, err, "GetLoop from the store of a loop created through the wrapper")
	}
	if st.Has(core.StoreCrumbLog) {
		noErr(t, st.AppendCrumbs(ctx, textEntries("run", "s", 1, 3)), "AppendCrumbs")
		max, err := capability[core.CrumbLog](t, s).MaxCrumbSeq(ctx, "run")
		noErr(t, err, "MaxCrumbSeq")
		equal(t, "the store's last seq of entries appended through the wrapper", int64(3), max)
	}
	if st.Has(core.StoreTaskRuns) {
		noErr(t, st.CreateTaskRun(ctx, taskRun("tr", "extract", baseTime)), "CreateTaskRun")
		_, err := capability[core.TaskRunStore](t, s).GetTaskRun(ctx, "tr")
		noErr(t, err, "GetTaskRun from the store")
	}
	if st.Has(core.StoreEvalRuns) {
		noErr(t, st.SaveEvalRun(ctx, evalRun("ev", "a", baseTime)), "SaveEvalRun")
		_, err := capability[core.EvalRunStore](t, s).GetEvalRun(ctx, "ev")
		noErr(t, err, "GetEvalRun from the store")
	}
	if st.Has(core.StoreKnowledge) {
		n, err := st.AddKnowledgeNode(ctx, core.NewKnowledgeNode{AgentID: "a", SessionID: "s", Label: "fact"})
		noErr(t, err, "AddKnowledgeNode")
		nodes, err := capability[core.KnowledgeStore](t, s).KnowledgeContext(ctx, "a", "s", 0)
		noErr(t, err, "KnowledgeContext")
		equal(t, "nodes in the store", 1, len(nodes))
		equal(t, "the node added through the wrapper", n.ID, nodes[0].ID)
	}
	if st.Has(core.StoreDocuments) {
		d, err := st.IngestDocument(ctx, core.NewDocument{AgentID: "a", Title: "t", Content: "c"})
		noErr(t, err, "IngestDocument")
		_, err = capability[core.DocumentStore](t, s).ReadDocument(ctx, "a", d.ID)
		noErr(t, err, "ReadDocument from the store")
	}
	noErr(t, st.Ping(ctx), "Ping")
}

func testWrapperCloses(t *testing.T, s core.BreadStore) {
	st := core.NewStorage(&counting{s: s})
	createSession(t, st, core.NewSession{ID: "s"})
	noErr(t, st.Close(), "Close")
	_, err := s.GetSession(t.Context(), "s")
	isErr(t, err, core.ErrStoreClosed, "GetSession from the store after the Storage over the wrapper closed")
}
