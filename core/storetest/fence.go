package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/breadai/bread/core"
)

// fenceCases hold the stores that keep run records to core.RunFence: a
// write made under a run's fence is made only while the run's record holds
// the fence's token, checked in the store with the write, so an owner
// paused past its lease and declared lost writes nothing when it wakes.
func fenceCases() []testCase {
	return []testCase{
		{name: "a run's fence round-trips and LoseRun clears it", needs: needsRuns, run: testFenceStored},
		{name: "every fenced write lands while the record holds the token", needs: needsRuns | needsCrumbLog, run: testFenceAdmits},
		{name: "every fenced write is refused once the run was taken, and leaves nothing behind", needs: needsRuns | needsCrumbLog, run: testFenceRefuses},
		{name: "of a fenced record write racing LoseRun exactly one wins", needs: needsRuns, run: testFenceRecordRace},
		{name: "a fenced write racing LoseRun lands whole before the loss or not at all", needs: needsRuns | needsCrumbLog, run: testFenceWriteRace},
	}
}

// fencedRun is a running record holding token, its lease lapsed at
// baseTime+1 (a LoseRun at baseTime+1000 takes it).
func fencedRun(id, sessionID, token string) core.RunRecord {
	r := runRecord(id, sessionID, "paused", core.RunRunning, baseTime)
	r.Fence = token
	return r
}

func testFenceStored(t *testing.T, s core.BreadStore) {
	rs := capability[core.RunStore](t, s)
	createSession(t, s, core.NewSession{ID: "s"})
	noErr(t, rs.PutRun(t.Context(), fencedRun("r", "s", "t1")), "PutRun")
	got, err := rs.GetRun(t.Context(), "r")
	noErr(t, err, "GetRun")
	equal(t, "the stored fence", "t1", got.Fence)
	// The attempt ends its own run: the token stays, so the crumbs that
	// follow the end are still its.
	end := runRecord("r", "s", "", core.RunCompleted, 0)
	end.Fence = "t1"
	wrote, err := rs.EndRun(core.WithRunFence(t.Context(), core.RunFence{RunID: "r", Token: "t1"}), end, "paused")
	noErr(t, err, "EndRun")
	equal(t, "EndRun wrote", true, wrote)
	got, err = rs.GetRun(t.Context(), "r")
	noErr(t, err, "GetRun after EndRun")
	equal(t, "the fence after its own end", "t1", got.Fence)

	noErr(t, rs.PutRun(t.Context(), fencedRun("lost", "s", "t2")), "PutRun(lost)")
	won, err := rs.LoseRun(t.Context(), "lost", baseTime+1000)
	noErr(t, err, "LoseRun")
	equal(t, "LoseRun won", true, won)
	got, err = rs.GetRun(t.Context(), "lost")
	noErr(t, err, "GetRun(lost)")
	equal(t, "the fence of a lost run", "", got.Fence)
}

// fencedWrite is one kind of write a run makes, made under ctx.
type fencedWrite struct {
	name  string
	write func(ctx context.Context, i int) error
}

// fencedWrites are the writes core.RunFence conditions, each writing
// something new on each call i (a crumb at seq i, a message, a checkpoint
// fence-cp-i, a record update).
func fencedWrites(s core.BreadStore, runID, sessionID, token string) []fencedWrite {
	st := core.NewStorage(s)
	record := func(status core.RunStatus, i int) core.RunRecord {
		r := runRecord(runID, sessionID, "paused", core.RunRunning, baseTime)
		r.Status, r.Fence, r.UpdatedAt = status, token, baseTime+int64(i)
		if status != core.RunRunning {
			r.Owner, r.LeaseUntil = "", 0
		}
		return r
	}
	return []fencedWrite{
		{"AppendCrumbs", func(ctx context.Context, i int) error {
			return st.AppendCrumbs(ctx, []core.CrumbLogEntry{textEntry(runID, int64(i), sessionID)})
		}},
		{"AddMessage", func(ctx context.Context, i int) error {
			return st.AddMessage(ctx, sessionID, textMessage(core.RoleAssistant, fmt.Sprint("m", i), baseTime+int64(i)))
		}},
		{"SuspendRun", func(ctx context.Context, i int) error {
			cp := checkpoint(fmt.Sprint("fence-cp-", i), sessionID, baseTime)
			cp.RunID = runID
			return st.SuspendRun(ctx, sessionID, turnMessages(baseTime+int64(i)), cp)
		}},
		{"SaveCheckpoint", func(ctx context.Context, i int) error {
			cp := checkpoint(fmt.Sprint("fence-save-", i), sessionID, baseTime)
			cp.RunID = runID
			return st.SaveCheckpoint(ctx, cp)
		}},
		{"PutRun", func(ctx context.Context, i int) error {
			return st.PutRun(ctx, record(core.RunRunning, i))
		}},
		{"WriteRun", func(ctx context.Context, i int) error {
			r := record(core.RunRunning, i)
			_, err := st.WriteRun(ctx, core.RunWrite{SessionID: sessionID, Messages: []core.SessionMessage{textMessage(core.RoleUser, fmt.Sprint("w", i), baseTime)}, Run: &r})
			return err
		}},
		{"EndRun", func(ctx context.Context, i int) error {
			_, err := st.EndRun(ctx, record(core.RunRunning, i), "paused")
			return err
		}},
		// Last: it ends the run. PostgreSQL checks the fence as it locks
		// the run's row here, and in WriteRun's and PutRun's upserts above.
		{"WriteRun, the owner's end with its crumbs", func(ctx context.Context, i int) error {
			r := record(core.RunCompleted, i)
			_, err := st.WriteRun(ctx, core.RunWrite{SessionID: sessionID, Owner: "paused", Run: &r,
				Messages: []core.SessionMessage{textMessage(core.RoleAssistant, fmt.Sprint("end", i), baseTime+int64(i))},
				Crumbs:   []core.CrumbLogEntry{textEntry(runID, int64(i), sessionID)}})
			return err
		}},
	}
}

// storedState is what the fenced writes change: the run's log, the
// session's messages, the checkpoints and the record.
type storedState struct {
	seq         int64
	messages    int
	checkpoints int
	record      core.RunRecord
	updatedAt   int64
}

func readState(t *testing.T, s core.BreadStore, runID, sessionID string) storedState {
	t.Helper()
	var st storedState
	var err error
	st.seq, err = capability[core.CrumbLog](t, s).MaxCrumbSeq(t.Context(), runID)
	noErr(t, err, "MaxCrumbSeq")
	msgs, err := s.GetMessages(t.Context(), sessionID)
	noErr(t, err, "GetMessages")
	st.messages = len(msgs)
	cps, err := s.ListCheckpoints(t.Context())
	noErr(t, err, "ListCheckpoints")
	st.checkpoints = len(cps)
	st.record, err = capability[core.RunStore](t, s).GetRun(t.Context(), runID)
	noErr(t, err, "GetRun")
	sess, err := s.GetSession(t.Context(), sessionID)
	noErr(t, err, "GetSession")
	st.updatedAt = sess.UpdatedAt
	return st
}

func testFenceAdmits(t *testing.T, s core.BreadStore) {
	rs := capability[core.RunStore](t, s)
	createSession(t, s, core.NewSession{ID: "s"})
	noErr(t, rs.PutRun(t.Context(), fencedRun("r", "s", "t1")), "PutRun")
	ctx := core.WithRunFence(t.Context(), core.RunFence{RunID: "r", Token: "t1"})
	for i, w := range fencedWrites(s, "r", "s", "t1") {
		noErr(t, w.write(ctx, i+1), "%s under the record's own fence", w.name)
	}
	st := readState(t, s, "r", "s")
	equal(t, "crumbs logged, the last by the end", int64(len(fencedWrites(s, "r", "s", "t1"))), st.seq)
	equal(t, "messages stored", 1+4+1+1, st.messages) // AddMessage, SuspendRun, WriteRun, the end
	equal(t, "checkpoints stored", 2, st.checkpoints)
	equal(t, "the record's fence", "t1", st.record.Fence)
	equal(t, "the record's status", core.RunCompleted, st.record.Status)

	// A run without a record (its running write failed) has nothing to be
	// taken: its fenced writes land.
	noErr(t, core.NewStorage(s).AddMessage(core.WithRunFence(t.Context(), core.RunFence{RunID: "no-record", Token: "t9"}), "s", textMessage(core.RoleUser, "x", baseTime)),
		"AddMessage under the fence of a run without a record")
}

func testFenceRefuses(t *testing.T, s core.BreadStore) {
	rs := capability[core.RunStore](t, s)
	createSession(t, s, core.NewSession{ID: "s"})
	for _, tc := range []struct {
		name string
		take func(t *testing.T, id string)
	}{
		{"declared lost", func(t *testing.T, id string) {
			won, err := rs.LoseRun(t.Context(), id, baseTime+1000)
			noErr(t, err, "LoseRun")
			equal(t, "LoseRun won", true, won)
		}},
		{"lost, then queued again for a retry", func(t *testing.T, id string) {
			_, err := rs.LoseRun(t.Context(), id, baseTime+1000)
			noErr(t, err, "LoseRun")
			noErr(t, rs.PutRun(t.Context(), runRecord(id, "s", "", core.RunQueued, 0)), "PutRun(queued)")
		}},
		{"lost, then suspended again for a resume's retry", func(t *testing.T, id string) {
			_, err := rs.LoseRun(t.Context(), id, baseTime+1000)
			noErr(t, err, "LoseRun")
			noErr(t, rs.PutRun(t.Context(), runRecord(id, "s", "", core.RunSuspended, 0)), "PutRun(suspended)")
		}},
		{"run by another attempt", func(t *testing.T, id string) {
			noErr(t, rs.PutRun(t.Context(), fencedRun(id, "s", "t2")), "PutRun(another attempt)")
		}},
		{"ended by another attempt", func(t *testing.T, id string) {
			noErr(t, rs.PutRun(t.Context(), fencedRun(id, "s", "t2")), "PutRun(another attempt)")
			end := runRecord(id, "s", "", core.RunCompleted, 0)
			end.Fence = "t2"
			noErr(t, rs.PutRun(t.Context(), end), "PutRun(its end)")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := "r-" + tc.name
			noErr(t, rs.PutRun(t.Context(), fencedRun(id, "s", "t1")), "PutRun")
			tc.take(t, id)
			before := readState(t, s, id, "s")
			ctx := core.WithRunFence(t.Context(), core.RunFence{RunID: id, Token: "t1"})
			for i, w := range fencedWrites(s, id, "s", "t1") {
				err := w.write(ctx, 100+i)
				if !isCode(err, core.CodeRunTaken) {
					t.Errorf("%s under a fence the record no longer holds: %v, want %s", w.name, err, core.CodeRunTaken)
				}
			}
			after := readState(t, s, id, "s")
			if after != before {
				t.Errorf("refused writes changed the store:\nbefore %+v\nafter  %+v", before, after)
			}
		})
	}
}

// testFenceRecordRace: a paused owner's record write (a suspension, or an
// update of its running record) under its fence, while sweepers lose its
// lapsed lease: exactly one of them wins.
func testFenceRecordRace(t *testing.T, s core.BreadStore) {
	rs := capability[core.RunStore](t, s)
	createSession(t, s, core.NewSession{ID: "s"})
	const runs, sweepers = 8, 3
	for i := range runs {
		noErr(t, rs.PutRun(t.Context(), fencedRun(fmt.Sprint("run-", i), "s", "t1")), "PutRun")
	}
	var mu sync.Mutex
	wins, writes := map[string]int{}, map[string]bool{}
	var wg sync.WaitGroup
	for range sweepers {
		wg.Go(func() {
			for i := range runs {
				id := fmt.Sprint("run-", i)
				won, err := rs.LoseRun(t.Context(), id, baseTime+1000)
				if err != nil {
					t.Errorf("LoseRun(%s): %v", id, err)
					return
				}
				if won {
					mu.Lock()
					wins[id]++
					mu.Unlock()
				}
			}
		})
	}
	wg.Go(func() {
		for i := range runs {
			id := fmt.Sprint("run-", i)
			r := runRecord(id, "s", "", core.RunSuspended, 0)
			r.Fence, r.CheckpointID = "t1", "cp"
			err := rs.PutRun(core.WithRunFence(t.Context(), core.RunFence{RunID: id, Token: "t1"}), r)
			if err != nil && !isCode(err, core.CodeRunTaken) {
				t.Errorf("PutRun(%s): %v", id, err)
				return
			}
			mu.Lock()
			writes[id] = err == nil
			mu.Unlock()
		}
	})
	wg.Wait()
	for i := range runs {
		id := fmt.Sprint("run-", i)
		got, err := rs.GetRun(t.Context(), id)
		noErr(t, err, "GetRun(%s)", id)
		switch {
		case writes[id] && (wins[id] != 0 || got.Status != core.RunSuspended):
			t.Errorf("%s: the fenced write landed, yet %d sweepers won and the record is %s", id, wins[id], got.Status)
		case !writes[id] && (wins[id] != 1 || got.Status != core.RunLost):
			t.Errorf("%s: the fenced write was refused, yet %d sweepers won and the record is %s", id, wins[id], got.Status)
		}
	}
}

// testFenceWriteRace: a paused owner's suspension (its messages and its
// checkpoint) and its crumbs, under its fence, while a sweeper loses its
// lapsed lease: each lands whole, before the loss, or not at all; once
// the loss is in, every fenced write is refused.
func testFenceWriteRace(t *testing.T, s core.BreadStore) {
	rs := capability[core.RunStore](t, s)
	st := core.NewStorage(s)
	const runs = 6
	for i := range runs {
		sid, id := fmt.Sprint("s-", i), fmt.Sprint("run-", i)
		createSession(t, s, core.NewSession{ID: sid})
		noErr(t, rs.PutRun(t.Context(), fencedRun(id, sid, "t1")), "PutRun")
	}
	var wg sync.WaitGroup
	for i := range runs {
		sid, id := fmt.Sprint("s-", i), fmt.Sprint("run-", i)
		ctx := core.WithRunFence(t.Context(), core.RunFence{RunID: id, Token: "t1"})
		wg.Go(func() {
			if _, err := rs.LoseRun(t.Context(), id, baseTime+1000); err != nil {
				t.Errorf("LoseRun(%s): %v", id, err)
			}
		})
		wg.Go(func() {
			cp := checkpoint("cp-"+id, sid, baseTime)
			cp.RunID = id
			if err := st.SuspendRun(ctx, sid, turnMessages(baseTime), cp); err != nil && !isCode(err, core.CodeRunTaken) {
				t.Errorf("SuspendRun(%s): %v", id, err)
			}
		})
		wg.Go(func() {
			if err := st.AppendCrumbs(ctx, textEntries(id, sid, 1, 3)); err != nil && !isCode(err, core.CodeRunTaken) {
				t.Errorf("AppendCrumbs(%s): %v", id, err)
			}
		})
	}
	wg.Wait()
	for i := range runs {
		sid, id := fmt.Sprint("s-", i), fmt.Sprint("run-", i)
		msgs, err := s.GetMessages(t.Context(), sid)
		noErr(t, err, "GetMessages(%s)", sid)
		_, cpErr := s.GetCheckpoint(t.Context(), "cp-"+id)
		switch {
		case len(msgs) == 4 && cpErr == nil, len(msgs) == 0 && isCode(cpErr, core.CodeCheckpointNotFound):
		default:
			t.Errorf("%s: a suspension landed in part: %d messages, checkpoint %v", id, len(msgs), cpErr)
		}
		max, err := capability[core.CrumbLog](t, s).MaxCrumbSeq(t.Context(), id)
		noErr(t, err, "MaxCrumbSeq(%s)", id)
		if max != 0 && max != 3 {
			t.Errorf("%s: crumbs landed in part: up to seq %d of 3", id, max)
		}
		got, err := rs.GetRun(t.Context(), id)
		noErr(t, err, "GetRun(%s)", id)
		equal(t, "the record after the race", core.RunLost, got.Status)
		late := st.AddMessage(core.WithRunFence(t.Context(), core.RunFence{RunID: id, Token: "t1"}), sid, textMessage(core.RoleUser, "late", baseTime))
		if !isCode(late, core.CodeRunTaken) {
			t.Errorf("%s: a fenced write after the loss: %v, want %s", id, late, core.CodeRunTaken)
		}
	}
}
