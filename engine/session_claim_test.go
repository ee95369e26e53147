package engine_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/engine"
)

// replicaOn is a second Instance ("replica") on b's store, with b's model.
func (b *busyBed) replicaOn(t *testing.T, policy core.ConcurrencyPolicy, mutate ...func(*engine.Config)) *busyBed {
	t.Helper()
	agent := &core.Agent{ID: "chat", Model: mockModel(), Concurrency: policy}
	cfg := engine.Config{Store: b.store, Agents: []*core.Agent{agent},
		Providers: core.ProviderRegistry{"mock": func(string) (core.LanguageModel, error) { return b.model, nil }}}
	for _, m := range mutate {
		m(&cfg)
	}
	in, err := engine.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := in.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Stop(context.Background()) })
	return &busyBed{in: in, store: b.store, model: b.model}
}

// Two replicas on one store: a run on a session another replica runs is
// refused with SESSION_BUSY under reject, and waits for it under enqueue;
// the session's messages never interleave.
func TestBusySessionAcrossReplicas(t *testing.T) {
	t.Run("reject", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			a := newBusyBed(t, core.ConcurrencyReject)
			b := a.replicaOn(t, core.ConcurrencyReject)
			first := a.start(t.Context(), "s", "hold one")
			a.waitStarted(t, "hold one")
			second := waitRun(t, b.start(t.Context(), "s", "two"))
			wantCode(t, second.err, core.CodeSessionBusy)
			close(a.model.release)
			if r := waitRun(t, first); r.err != nil {
				t.Fatal(r.err)
			}
			want := []string{"user:hold one", "assistant:partial echo: hold one"}
			if got := a.texts(t, "s"); asJSON(t, got) != asJSON(t, want) {
				t.Fatalf("session %q, want %q", got, want)
			}
			// The session is free again: the other replica's next run goes.
			if r := waitRun(t, b.start(t.Context(), "s", "three")); r.err != nil {
				t.Fatal(r.err)
			}
		})
	})
	t.Run("enqueue", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			a := newBusyBed(t, core.ConcurrencyEnqueue)
			b := a.replicaOn(t, core.ConcurrencyEnqueue, func(c *engine.Config) { c.RunLease = 400 * time.Millisecond })
			first := a.start(t.Context(), "s", "hold one")
			a.waitStarted(t, "hold one")
			second := b.start(t.Context(), "s", "two")
			b.notStarted(t)
			close(a.model.release)
			if r := waitRun(t, first); r.err != nil {
				t.Fatal(r.err)
			}
			b.waitStarted(t, "two")
			if r := waitRun(t, second); r.err != nil {
				t.Fatal(r.err)
			}
			want := []string{"user:hold one", "assistant:partial echo: hold one", "user:two", "assistant:echo: two"}
			if got := a.texts(t, "s"); asJSON(t, got) != asJSON(t, want) {
				t.Fatalf("session %q, want %q", got, want)
			}
		})
	})
}

// Background runs through a job queue on two replicas: the second run on a
// busy session (reject) ends under its own id, SESSION_BUSY in its record
// and its stream, instead of staying queued.
func TestQueuedRunOnABusySessionEndsUnderItsID(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newBusyBed(t, core.ConcurrencyReject)
		b := a.replicaOn(t, core.ConcurrencyReject, func(c *engine.Config) { c.Jobs = memory.NewQueue(memory.QueueOptions{}) })
		first := a.start(t.Context(), "s", "hold one")
		a.waitStarted(t, "hold one")
		d, err := b.in.RunBackground(t.Context(), "chat", "two", core.RunOptions{Session: core.SessionOptions{ID: "s"}}, core.BackgroundOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rec := waitRecord(t, a.store, d.RunID, status(core.RunFailed))
		if rec.ErrorCode != core.CodeSessionBusy {
			t.Fatalf("record %+v", rec)
		}
		if got := loggedTypes(t, a.store, d.RunID); len(got) == 0 || got[len(got)-1] != core.TypeAgentError {
			t.Fatalf("the refused run's log %v, want it to end with agent:error", got)
		}
		close(a.model.release)
		waitRun(t, first)
	})
}

// A background run queued before another run started on its session, and
// taken by a worker after, comes second: claims are ordered by when runs
// go running, not by when they were queued.
func TestAnEarlierQueuedRunDoesNotJumpARunningOne(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newBusyBed(t, core.ConcurrencyReject)
		b := a.replicaOn(t, core.ConcurrencyReject)
		if _, err := a.store.CreateSession(t.Context(), core.NewSession{ID: "s", AgentID: "chat"}); err != nil {
			t.Fatal(err)
		}
		old := core.NowMillis() - 10_000
		if err := a.store.PutRun(t.Context(), core.RunRecord{ID: "queued-run", AgentID: "chat", SessionID: "s", Status: core.RunQueued, CreatedAt: old, UpdatedAt: old}); err != nil {
			t.Fatal(err)
		}
		first := a.start(t.Context(), "s", "hold one")
		a.waitStarted(t, "hold one")
		job := engine.RunJobForTest("queued-run", "chat", "two", "s", "")
		if err := b.in.WorkJobForTest(t.Context(), job); err != nil {
			t.Fatal(err)
		}
		rec := waitRecord(t, a.store, "queued-run", status(core.RunFailed))
		if rec.ErrorCode != core.CodeSessionBusy {
			t.Fatalf("record %+v, want SESSION_BUSY", rec)
		}
		close(a.model.release)
		if r := waitRun(t, first); r.err != nil {
			t.Fatal(r.err)
		}
	})
}
