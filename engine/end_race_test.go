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
)

// sweptAtEnd is another replica's sweeper acting at the worst moment: the
// first time the owner writes a run's completed record, before the write
// lands, the run's lease lapses (its owner was paused) and the sweeper
// declares it lost and logs its RUN_LOST after the last logged crumb.
type sweptAtEnd struct {
	*memory.Store
	once sync.Once
}

func (s *sweptAtEnd) sweep(r core.RunRecord) {
	if r.Status != core.RunCompleted {
		return
	}
	// The other replica's context: not the owner's, nor under its fence.
	ctx := context.Background()
	s.once.Do(func() {
		cur, err := s.GetRun(ctx, r.ID)
		if err != nil {
			panic(err)
		}
		cur.LeaseUntil = 1 // lapsed: the owner was paused past it
		if err := s.Store.PutRun(ctx, cur); err != nil {
			panic(err)
		}
		if won, err := s.LoseRun(ctx, r.ID, core.NowMillis()); err != nil || !won {
			panic("the sweeper did not win")
		}
		last, _ := s.MaxCrumbSeq(ctx, r.ID)
		lost := &core.AgentError{CrumbBase: core.CrumbBase{AgentID: r.AgentID, RunID: r.ID, SessionID: r.SessionID, Seq: last + 1}, Error: &core.BreadError{Code: core.CodeRunLost, Message: "lost"}}
		if err := s.AppendCrumbs(ctx, []core.CrumbLogEntry{{RunID: r.ID, Seq: last + 1, SessionID: r.SessionID, AgentID: r.AgentID, Type: core.TypeAgentError, Crumb: lost}}); err != nil {
			panic(err)
		}
	})
}

func (s *sweptAtEnd) PutRun(ctx context.Context, r core.RunRecord) error {
	s.sweep(r)
	return s.Store.PutRun(ctx, r)
}

func (s *sweptAtEnd) EndRun(ctx context.Context, r core.RunRecord, owner string) (bool, error) {
	s.sweep(r)
	return s.Store.EndRun(ctx, r, owner)
}

// WriteRun is the owner's end written with the run's answer
// (core.RunWriter).
func (s *sweptAtEnd) WriteRun(ctx context.Context, w core.RunWrite) (bool, error) {
	if w.Run != nil {
		s.sweep(*w.Run)
	}
	return s.Store.WriteRun(ctx, w)
}

// terminals counts a run's logged agent:run:end and agent:error entries
// and returns the type of the last entry.
func terminals(t *testing.T, s core.CrumbLog, runID string) (int, string) {
	t.Helper()
	logged, err := s.GetCrumbs(context.Background(), runID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range logged {
		if core.IsTerminal(e.Type) {
			n++
		}
	}
	if len(logged) == 0 {
		return 0, ""
	}
	return n, logged[len(logged)-1].Type
}

// TestARunLostBetweenItsRecordCheckAndItsEndWriteStaysLost is a violation
// the chaos harness found (issue 31): a replica paused (SIGSTOP) after it
// read its run's record (still running, its own) and before it wrote the
// run's end had the run declared lost meanwhile; on SIGCONT it wrote
// completed over lost ("completed but ends with agent:error RUN_LOST"),
// or logged its own end after the RUN_LOST ("lost with 2 terminal
// crumbs"). The end write is now EndRun (write only while the record is
// not taken from its owner), and a run whose end was refused ends with
// RUN_LOST for its caller, logged and published by nobody but the sweeper.
func TestARunLostBetweenItsRecordCheckAndItsEndWriteStaysLost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &sweptAtEnd{Store: memory.New()}
		tb := newTestbed(t, modeltest.New(modeltest.Text("done")), []*core.Agent{textAgent("a")}, func(c *engine.Config) { c.Store = store })
		cs, err := tb.run(t, "a", "hi", core.RunOptions{})
		wantCode(t, err, core.CodeRunLost)
		id := cs[0].Base().RunID
		if r := getRun(t, store, id); r.Status != core.RunLost || r.ErrorCode != core.CodeRunLost {
			t.Fatalf("the record of a run declared lost before its end write: %+v", r)
		}
		if n, last := terminals(t, store, id); n != 1 || last != core.TypeAgentError {
			t.Fatalf("the log has %d terminal crumbs and ends with %s, want one RUN_LOST", n, last)
		}
	})
}

// TestASweeperKeepsAnEndItsOwnerLoggedButCouldNotRecord: an owner that
// logged its run's end but never recorded it (its end write failed, then
// it died) leaves a running record whose lease lapses. The sweeper finds
// the log ended: it writes no second end, and the record agrees with the
// logged one (the chaos harness saw "lost with 2 terminal crumbs").
func TestASweeperKeepsAnEndItsOwnerLoggedButCouldNotRecord(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memory.New()
		ctx := context.Background()
		sess, err := store.CreateSession(ctx, core.NewSession{})
		if err != nil {
			t.Fatal(err)
		}
		const id = "run-ended-unrecorded"
		if err := store.PutRun(ctx, core.RunRecord{ID: id, AgentID: "a", SessionID: sess.ID, Status: core.RunRunning, Owner: "dead", LeaseUntil: 1, CreatedAt: 1, UpdatedAt: 1}); err != nil {
			t.Fatal(err)
		}
		base := core.CrumbBase{AgentID: "a", RunID: id, SessionID: sess.ID}
		start, end := base, base
		start.Seq, end.Seq = 1, 2
		if err := store.AppendCrumbs(ctx, []core.CrumbLogEntry{
			{RunID: id, Seq: 1, SessionID: sess.ID, AgentID: "a", Type: core.TypeAgentRunStart, Crumb: &core.AgentRunStart{CrumbBase: start}},
			{RunID: id, Seq: 2, SessionID: sess.ID, AgentID: "a", Type: core.TypeAgentRunEnd, Crumb: &core.AgentRunEnd{CrumbBase: end, Output: "done"}},
		}); err != nil {
			t.Fatal(err)
		}
		newTestbed(t, modeltest.New(), []*core.Agent{textAgent("a")}, func(c *engine.Config) { c.Store = store })
		settle(t, "the sweeper ends the lapsed run", func() bool { return getRun(t, store, id).Status != core.RunRunning })
		if r := getRun(t, store, id); r.Status != core.RunCompleted || r.ErrorCode != "" || r.Owner != "" {
			t.Fatalf("the record of a run whose end was logged: %+v, want completed", r)
		}
		if n, last := terminals(t, store, id); n != 1 || last != core.TypeAgentRunEnd {
			t.Fatalf("the log has %d terminal crumbs and ends with %s, want the owner's agent:run:end alone", n, last)
		}
	})
}
