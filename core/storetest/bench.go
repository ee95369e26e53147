package storetest

import (
	"strconv"
	"testing"

	"github.com/breadai/bread/core"
)

// Bench measures a store on bread's hot paths: the choke point's crumb-log
// appends, a reconnecting client's catch-up read, a run suspending for a
// human, and the message writes of one run turn. newStore returns a fresh,
// empty, migrated store and registers its teardown with b.Cleanup.
//
// Long benchmarks would grow one store without bound, so writers move to a
// new session every few thousand operations and the previous one is
// deleted, with its cascade, while the timer is stopped.
func Bench(b *testing.B, newStore func(b *testing.B) core.BreadStore) {
	b.Run("AppendCrumbs", func(b *testing.B) {
		for _, size := range []int{1, 32} {
			b.Run("batch="+strconv.Itoa(size), func(b *testing.B) { benchAppendCrumbs(b, newStore(b), size, false) })
		}
		// Under the run's fence (core.RunFence), as the engine appends a
		// run's crumbs: what the store's check of the run's token costs.
		b.Run("batch=1/fenced", func(b *testing.B) { benchAppendCrumbs(b, newStore(b), 1, true) })
	})
	b.Run("GetCrumbs", func(b *testing.B) {
		b.Run("entries=10000", func(b *testing.B) { benchGetCrumbs(b, newStore(b), 0) })
		b.Run("entries=10000/tail=100", func(b *testing.B) { benchGetCrumbs(b, newStore(b), 9900) })
	})
	b.Run("SuspendRun", func(b *testing.B) { benchSuspendRun(b, newStore(b)) })
	b.Run("TurnMessages", func(b *testing.B) { benchTurnMessages(b, newStore(b)) })
}

// rotation is how many operations share one session before it is replaced.
const rotation = 4096

// rotor hands out the session of the current rotation and replaces it,
// untimed, when the rotation is used up.
type rotor struct {
	b       *testing.B
	s       core.BreadStore
	every   int
	n, used int
	current string
}

func newRotor(b *testing.B, s core.BreadStore, every int) *rotor {
	r := &rotor{b: b, s: s, every: every}
	r.current = r.create()
	return r
}

func (r *rotor) create() string {
	r.n++
	sess, err := r.s.CreateSession(r.b.Context(), core.NewSession{ID: "bench-" + strconv.Itoa(r.n)})
	if err != nil {
		r.b.Fatalf("CreateSession: %v", err)
	}
	return sess.ID
}

// session returns the session for the next operation.
func (r *rotor) session() string {
	if r.used == r.every {
		r.b.StopTimer()
		if err := r.s.DeleteSession(r.b.Context(), r.current); err != nil {
			r.b.Fatalf("DeleteSession: %v", err)
		}
		r.current, r.used = r.create(), 0
		r.b.StartTimer()
	}
	r.used++
	return r.current
}

func benchCrumbLog(b *testing.B, s core.BreadStore) core.CrumbLog {
	cl, ok := optional[core.CrumbLog](s)
	if !ok {
		b.Skipf("%T does not implement core.CrumbLog", s)
	}
	return cl
}

// benchAppendCrumbs appends batches of size entries the way the choke point
// does: one run at a time, seqs increasing, a new run every 1024 entries.
func benchAppendCrumbs(b *testing.B, s core.BreadStore, size int, fenced bool) {
	cl := benchCrumbLog(b, s)
	var rs core.RunStore
	if fenced {
		var ok bool
		if rs, ok = optional[core.RunStore](s); !ok {
			b.Skipf("%T does not implement core.RunStore", s)
		}
	}
	ctx := b.Context()
	const perRun = 1024
	rot := newRotor(b, s, rotation/size)
	crumb := &core.TextDelta{CrumbBase: core.CrumbBase{AgentID: "agent-a", RunID: "run", SessionID: "s", Timestamp: baseTime, Seq: 1}, Delta: "a few aggregated words of the answer"}
	batch := make([]core.CrumbLogEntry, size)
	var (
		run   string
		runs  int
		seq   int64
		entry = core.CrumbLogEntry{AgentID: "agent-a", Type: core.TypeTextDelta, Crumb: crumb, CreatedAt: baseTime}
	)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		sessionID := rot.session()
		for j := range batch {
			if seq%perRun == 0 {
				runs++
				run, seq = "run-"+strconv.Itoa(runs), 0
				if fenced {
					b.StopTimer()
					r := runRecord(run, sessionID, "bench", core.RunRunning, baseTime+1_000_000)
					r.Fence = "bench/" + run
					if err := rs.PutRun(b.Context(), r); err != nil {
						b.Fatalf("PutRun: %v", err)
					}
					ctx = core.WithRunFence(b.Context(), core.RunFence{RunID: run, Token: r.Fence})
					b.StartTimer()
				}
			}
			seq++
			entry.RunID, entry.Seq, entry.SessionID = run, seq, sessionID
			batch[j] = entry
		}
		if err := cl.AppendCrumbs(ctx, batch); err != nil {
			b.Fatalf("AppendCrumbs: %v", err)
		}
	}
	b.ReportMetric(float64(b.N*size)/b.Elapsed().Seconds(), "entries/s")
}

// benchGetCrumbs reads a 10,000-entry run from afterSeq: all of it, or the
// tail a reconnecting client misses.
func benchGetCrumbs(b *testing.B, s core.BreadStore, afterSeq int64) {
	const total = 10_000
	cl := benchCrumbLog(b, s)
	createSession(b, s, core.NewSession{ID: "s"})
	for first := int64(1); first <= total; first += 500 {
		if err := cl.AppendCrumbs(b.Context(), textEntries("run", "s", first, first+499)); err != nil {
			b.Fatalf("AppendCrumbs: %v", err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		got, err := cl.GetCrumbs(b.Context(), "run", afterSeq, 0)
		if err != nil {
			b.Fatalf("GetCrumbs: %v", err)
		}
		if len(got) != total-int(afterSeq) {
			b.Fatalf("GetCrumbs: want %d entries, got %d", total-afterSeq, len(got))
		}
	}
}

// benchSuspendRun suspends runs: two messages (the user's input and the
// pending tool call) and a checkpoint, as one unit.
func benchSuspendRun(b *testing.B, s core.BreadStore) {
	rot := newRotor(b, s, rotation)
	msgs := turnMessages(baseTime)[:2]
	// Checkpoint ids repeat across rotations: the previous session's
	// checkpoints went with it.
	cps := make([]string, rotation)
	for i := range cps {
		cps[i] = "cp-" + strconv.Itoa(i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		sessionID := rot.session()
		cp := checkpoint(cps[rot.used-1], sessionID, baseTime)
		if err := s.SuspendRun(b.Context(), sessionID, msgs, cp); err != nil {
			b.Fatalf("SuspendRun: %v", err)
		}
	}
}

// benchTurnMessages writes the messages of one run turn: the user's input,
// the assistant's tool call, the tool's result and the assistant's answer.
func benchTurnMessages(b *testing.B, s core.BreadStore) {
	rot := newRotor(b, s, rotation/4)
	turn := turnMessages(baseTime)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		sessionID := rot.session()
		for _, m := range turn {
			if err := s.AddMessage(b.Context(), sessionID, m); err != nil {
				b.Fatalf("AddMessage: %v", err)
			}
		}
	}
}
