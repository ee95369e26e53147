package engine_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
	"github.com/breadai/bread/typed"
)

// sweptBefore is another replica's sweeper acting at the worst moment
// for a check-then-write: right before the owner's first write of one
// kind lands (after any check the owner made), the run's lease lapses
// (its owner was paused past it), the sweeper declares it lost and logs
// its RUN_LOST; then the owner's write goes to the store, under the run's
// fence (core.RunFence) in its context.
type sweptBefore struct {
	*memory.Store
	at   string // "messages" or "crumb"
	once sync.Once
	hit  bool
}

func (s *sweptBefore) sweep(ctx context.Context) {
	f, ok := core.RunFenceFrom(ctx)
	if !ok {
		return
	}
	s.once.Do(func() {
		s.hit = true
		ctx := context.Background() // the other replica's
		cur, err := s.GetRun(ctx, f.RunID)
		if err != nil {
			panic(err)
		}
		cur.LeaseUntil = 1
		if err := s.Store.PutRun(ctx, cur); err != nil {
			panic(err)
		}
		if won, err := s.LoseRun(ctx, f.RunID, core.NowMillis()); err != nil || !won {
			panic("the sweeper did not win")
		}
		last, _ := s.MaxCrumbSeq(ctx, f.RunID)
		lost := &core.AgentError{CrumbBase: core.CrumbBase{AgentID: cur.AgentID, RunID: f.RunID, SessionID: cur.SessionID, Seq: last + 1}, Error: &core.BreadError{Code: core.CodeRunLost, Message: "lost"}}
		if err := s.Store.AppendCrumbs(ctx, []core.CrumbLogEntry{{RunID: f.RunID, Seq: last + 1, SessionID: cur.SessionID, AgentID: cur.AgentID, Type: core.TypeAgentError, Crumb: lost}}); err != nil {
			panic(err)
		}
	})
}

func (s *sweptBefore) SuspendRun(ctx context.Context, sessionID string, msgs []core.SessionMessage, cps ...core.CheckpointRecord) error {
	if s.at == "messages" {
		s.sweep(ctx)
	}
	return s.Store.SuspendRun(ctx, sessionID, msgs, cps...)
}

func (s *sweptBefore) AddMessage(ctx context.Context, sessionID string, m core.SessionMessage) error {
	if s.at == "messages" {
		s.sweep(ctx)
	}
	return s.Store.AddMessage(ctx, sessionID, m)
}

func (s *sweptBefore) AppendCrumbs(ctx context.Context, entries []core.CrumbLogEntry) error {
	if s.at == "crumb" && len(entries) > 0 && entries[0].Type == core.TypeToolResult {
		s.sweep(ctx)
	}
	return s.Store.AppendCrumbs(ctx, entries)
}

// TestARunLostBetweenAnyCheckAndItsWriteWritesNothingMore is the chaos
// harness's last SIGSTOP violation (issue 31): a replica paused past its
// lease had its run declared lost by another; on SIGCONT it went on
// writing, between SIGCONT and its first renewal, so a run declared lost
// ended completed with two terminal crumbs, and a session got
// user,assistant,assistant,tool,assistant. Checking the record before a
// write left the pause between the check and the write. Each durable write
// of a run is now made under its fence, refused in the store once the
// run was taken: here the sweeper acts after every check, right before
// the write, and the run still writes nothing more (no message, no crumb
// after the RUN_LOST, no second end) and stops quietly with RUN_LOST.
func TestARunLostBetweenAnyCheckAndItsWriteWritesNothingMore(t *testing.T) {
	type args struct {
		N int `json:"n"`
	}
	for _, tc := range []struct {
		name  string
		at    string
		model func() *modeltest.Model
		agent func(ran *int) *core.Agent
	}{
		{"its suspension", "messages", func() *modeltest.Model {
			return modeltest.New(modeltest.ToolCall("human_approve_publish", map[string]string{"url": "https://bread.dev"}))
		}, func(*int) *core.Agent { return askAgent() }},
		{"a tool's result crumb", "crumb", func() *modeltest.Model {
			return modeltest.New(modeltest.ToolCalls(modeltest.Call{ID: "c1", Name: "tool_double", Args: args{N: 2}}), modeltest.Text("four"))
		}, func(ran *int) *core.Agent {
			double := typed.DefineTool("double", "doubles", func(_ context.Context, a args, _ core.ToolContext) (int, error) { *ran++; return a.N * 2, nil })
			return &core.Agent{ID: "a", Model: mockModel(), Tools: []core.Tool{double}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ran := 0
				agent := tc.agent(&ran)
				store := &sweptBefore{Store: memory.New(), at: tc.at}
				tb := newTestbed(t, tc.model(), []*core.Agent{agent}, func(c *engine.Config) { c.Store = store })
				cs, err := tb.run(t, agent.ID, "go", core.RunOptions{})
				if !store.hit {
					t.Fatalf("the sweeper never acted: the run made no fenced write of that kind (%v, %v)", types(cs), err)
				}
				wantCode(t, err, core.CodeRunLost)
				id, sid := cs[0].Base().RunID, cs[0].Base().SessionID
				if r := getRun(t, store, id); r.Status != core.RunLost {
					t.Fatalf("the record of a run declared lost mid-way: %+v", r)
				}
				if n, last := terminals(t, store, id); n != 1 || last != core.TypeAgentError {
					t.Fatalf("the log has %d terminal crumbs and ends with %s, want the sweeper's RUN_LOST alone", n, last)
				}
				logged, err := store.GetCrumbs(context.Background(), id, 0, 0)
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range logged {
					if e.Type == core.TypeHumanRequired || e.Type == core.TypeToolResult {
						t.Errorf("the log holds a %s the run wrote after it was declared lost", e.Type)
					}
				}
				msgs, err := store.GetMessages(context.Background(), sid)
				if err != nil {
					t.Fatal(err)
				}
				for _, m := range msgs {
					if m.Role != core.RoleUser {
						t.Errorf("the session holds a %s message the run wrote after it was declared lost", m.Role)
					}
				}
				if cps, _ := store.ListCheckpoints(context.Background()); len(cps) != 0 {
					t.Errorf("a run declared lost left %d checkpoints to resume it", len(cps))
				}
				if len(find[*core.AgentRunEnd](cs)) != 0 || len(find[*core.HumanRequired](cs)) != 0 {
					t.Errorf("the run told its caller it ended or suspended after it was declared lost: %v", types(cs))
				}
			})
		})
	}
}

// takenBeforeTake is another replica's resume of the same checkpoint
// taking the run at the worst moment for this one: after this resume
// claimed the checkpoint and read the run's record, right before its
// running write (it was paused between the two past its claim, and the
// other resume claimed the checkpoint again and took the run).
type takenBeforeTake struct {
	*memory.Store
	once sync.Once
}

func (s *takenBeforeTake) PutRun(ctx context.Context, r core.RunRecord) error {
	if f, ok := core.RunFenceFrom(ctx); ok && f.RunID == r.ID && r.Status == core.RunRunning {
		s.once.Do(func() {
			other := r
			other.Owner, other.Fence = "other-replica", "other-replica/1"
			if err := s.Store.PutRun(context.Background(), other); err != nil {
				panic(err)
			}
		})
	}
	return s.Store.PutRun(ctx, r)
}

// TestAResumeWhoseRunWasTakenBeforeItsTakeRunsNothing: a resume's own
// running write is made only while the record holds the token the resume
// read when it claimed its checkpoint (issue 31's run fences). Another
// resume that took the run in between keeps it: this one writes nothing,
// logs nothing (not even human:resumed), leaves the checkpoint to the
// other and ends its caller's stream with RUN_LOST.
func TestAResumeWhoseRunWasTakenBeforeItsTakeRunsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &takenBeforeTake{Store: memory.New()}
		tb := newTestbed(t, modeltest.New(
			modeltest.ToolCall("human_approve_publish", map[string]string{"url": "https://bread.dev"}),
			modeltest.Text("Published."),
		), []*core.Agent{askAgent()}, func(c *engine.Config) { c.Store = store })
		cs, err := tb.run(t, "publisher", "publish", core.RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		hr := suspendOn(t, cs)
		ctx := context.Background()
		before, _ := store.GetMessages(ctx, hr.SessionID)
		logged, _ := store.MaxCrumbSeq(ctx, hr.RunID)
		_, err = collect(tb.in.Resume(ctx, hr.CheckpointID, okAnswer))
		wantCode(t, err, core.CodeRunLost)
		if r := getRun(t, store, hr.RunID); r.Fence != "other-replica/1" || r.Status != core.RunRunning {
			t.Errorf("the record after the refused take: %+v, want the other resume's", r)
		}
		if after, _ := store.GetMessages(ctx, hr.SessionID); len(after) != len(before) {
			t.Errorf("the session went from %d to %d messages", len(before), len(after))
		}
		if seq, _ := store.MaxCrumbSeq(ctx, hr.RunID); seq != logged {
			t.Errorf("the log went from seq %d to %d", logged, seq)
		}
		if _, err := store.GetCheckpoint(ctx, hr.CheckpointID); err != nil {
			t.Errorf("the checkpoint, the other resume's now: %v", err)
		}
	})
}

// sweptBeforeResumeEnd is a sweeper acting right before a resume's end
// write: the resumer was paused past its lease, and the run went back to
// waiting for a retry of the same checkpoint (suspended, RUN_LOST).
type sweptBeforeResumeEnd struct {
	*memory.Store
	once sync.Once
	hit  bool
}

func (s *sweptBeforeResumeEnd) WriteRun(ctx context.Context, w core.RunWrite) (bool, error) {
	if f, ok := core.RunFenceFrom(ctx); ok && w.Run != nil && w.Run.Status.Final() {
		s.once.Do(func() {
			s.hit = true
			ctx := context.Background() // the other replica's
			cp := sweepNow(s.Store, f.RunID).CheckpointID
			cur, _ := s.GetRun(ctx, f.RunID)
			cur.Status, cur.Owner, cur.LeaseUntil, cur.ErrorCode, cur.CheckpointID = core.RunSuspended, "", 0, core.CodeRunLost, cp
			if err := s.Store.PutRun(ctx, cur); err != nil {
				panic(err)
			}
		})
	}
	return s.Store.WriteRun(ctx, w)
}

// TestAResumeTakenBeforeItsEndLeavesItsCheckpointForTheRetry is a
// violation the chaos harness found (issue 31, 90 s, seed 3): a resumer
// paused past its lease woke after a sweeper had put its run back to
// waiting for a retry of the same checkpoint; its end write was refused
// (the run was taken), and it removed the checkpoint all the same, so
// the run waited on a checkpoint that no longer existed and its retry
// found none. A resume whose run was taken leaves the checkpoint.
func TestAResumeTakenBeforeItsEndLeavesItsCheckpointForTheRetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &sweptBeforeResumeEnd{Store: memory.New()}
		tb := newTestbed(t, modeltest.New(
			modeltest.ToolCall("human_approve_publish", map[string]string{"url": "https://bread.dev"}),
			modeltest.Text("Published."),
		), []*core.Agent{askAgent()}, func(c *engine.Config) { c.Store = store })
		cs, err := tb.run(t, "publisher", "publish", core.RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		hr := suspendOn(t, cs)
		ctx := context.Background()
		_, err = collect(tb.in.Resume(ctx, hr.CheckpointID, okAnswer))
		if !store.hit {
			t.Fatalf("the resume made no fenced end write (%v)", err)
		}
		wantCode(t, err, core.CodeRunLost)
		r := getRun(t, store, hr.RunID)
		if r.Status != core.RunSuspended || r.CheckpointID != hr.CheckpointID {
			t.Fatalf("the record: %+v, want suspended on %s for a retry", r, hr.CheckpointID)
		}
		cp, err := store.GetCheckpoint(ctx, hr.CheckpointID)
		if err != nil {
			t.Fatalf("the checkpoint the run waits on for its retry: %v", err)
		}
		if cp.ClaimedBy != "" {
			t.Errorf("the taken resume kept its claim on the checkpoint (%s): its keeper would renew it while the retry waits", cp.ClaimedBy)
		}
	})
}

// sweepNow is another replica's sweeper acting on runID at once: its lease
// made lapsed, then LoseRun, which it must win. It returns the record as it
// was before the sweep, with the lapsed lease.
func sweepNow(s *memory.Store, runID string) core.RunRecord {
	ctx := context.Background()
	cur, err := s.GetRun(ctx, runID)
	if err != nil {
		panic(err)
	}
	cur.LeaseUntil = 1
	if err := s.PutRun(ctx, cur); err != nil {
		panic(err)
	}
	if won, err := s.LoseRun(ctx, runID, core.NowMillis()); err != nil || !won {
		panic("the sweeper did not win")
	}
	return cur
}
