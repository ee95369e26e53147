package storetest

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/breadai/bread/core"
)

func runCases() []testCase {
	return []testCase{
		{name: "put and get", needs: needsRuns, run: testRunRoundTrip},
		{name: "PutRun on an existing id replaces only the mutable fields", needs: needsRuns, run: testRunReplace},
		{name: "StartedBy is stored and never replaced", needs: needsRuns, run: testRunStartedBy},
		{name: "a background run goes from queued through its attempts", needs: needsRuns, run: testRunAttempts},
		{name: "SessionStarters lists who started a session's runs", needs: needsRuns | needsSessionStarters, run: testSessionStarters},
		{name: "ListRuns filters, orders newest first and limits", needs: needsRuns | needsRunList, run: testListRuns},
		{name: "unknown ids and sessions", needs: needsRuns, run: testRunUnknown},
		{name: "RenewRunLeases renews only the owner's running runs", needs: needsRuns, run: testRunRenew},
		{name: "ExpiredRuns lists running runs with a lapsed lease, oldest lease first", needs: needsRuns, run: testRunExpired},
		{name: "LoseRun is one atomic compare-and-set", needs: needsRuns, run: testRunLose},
		{name: "of concurrent LoseRun calls exactly one wins", needs: needsRuns, run: testRunLoseRace},
		{name: "EndRun writes unless the record was taken from its owner", needs: needsRuns, run: testRunEnd},
		{name: "of a racing LoseRun and EndRun exactly one wins", needs: needsRuns, run: testRunEndRace},
		{name: "DeleteSession removes the session's runs", needs: needsRuns, run: testRunCascade},
	}
}

func runRecord(id, sessionID, owner string, status core.RunStatus, lease int64) core.RunRecord {
	r := core.RunRecord{
		ID: id, AgentID: "writer", SessionID: sessionID, Status: status,
		CreatedAt: baseTime, UpdatedAt: baseTime,
	}
	if status == core.RunRunning {
		r.Owner, r.LeaseUntil = owner, lease
	}
	return r
}

func testRunRoundTrip(t *testing.T, s core.BreadStore) {
	rs := capability[core.RunStore](t, s)
	createSession(t, s, core.NewSession{ID: "s"})
	want := runRecord("run-1", "s", "replica-a", core.RunRunning, baseTime+30_000)
	noErr(t, rs.PutRun(t.Context(), want), "PutRun")
	got, err := rs.GetRun(t.Context(), "run-1")
	noErr(t, err, "GetRun")
	assertJSONEqual(t, "the stored run", want, got)

	// A pipeline's own record has no session.
	p := core.RunRecord{ID: "pipe-1", AgentID: "pipeline", PipelineID: "review", Status: core.RunRunning, Owner: "replica-a", LeaseUntil: baseTime + 1, CreatedAt: baseTime, UpdatedAt: baseTime}
	noErr(t, rs.PutRun(t.Context(), p), "PutRun(pipeline)")
	got, err = rs.GetRun(t.Context(), "pipe-1")
	noErr(t, err, "GetRun(pipeline)")
	assertJSONEqual(t, "the stored pipeline run", p, got)
}

func testRunReplace(t *testing.T, s core.BreadStore) {
	rs := capability[core.RunStore](t, s)
	createSession(t, s, core.NewSession{ID: "s"})
	createSession(t, s, core.NewSession{ID: "other"})
	first := runRecord("run-1", "s", "replica-a", core.RunRunning, baseTime+30_000)
	noErr(t, rs.PutRun(t.Context(), first), "PutRun")
	// The run suspends, then is resumed on another replica and fails.
	steps := []core.RunRecord{
		{ID: "run-1", Status: core.RunSuspended, CheckpointID: "cp-1", UpdatedAt: baseTime + 10},
		{ID: "run-1", Status: core.RunRunning, Owner: "replica-b", LeaseUntil: baseTime + 60_000, UpdatedAt: baseTime + 20},
		{ID: "run-1", Status: core.RunFailed, ErrorCode: core.CodeProviderError, UpdatedAt: baseTime + 30},
	}
	for _, st := range steps {
		// Identity fields in the update are ignored: they never change.
		st.AgentID, st.SessionID, st.PipelineID, st.CreatedAt = "ignored", "other", "ignored", baseTime+99
		noErr(t, rs.PutRun(t.Context(), st), "PutRun(%s)", st.Status)
		got, err := rs.GetRun(t.Context(), "run-1")
		noErr(t, err, "GetRun after %s", st.Status)
		want := st
		want.AgentID, want.SessionID, want.PipelineID, want.CreatedAt = first.AgentID, first.SessionID, "", first.CreatedAt
		assertJSONEqual(t, "the run after "+string(st.Status), want, got)
	}
}

// testRunAttempts follows a background run: queued with no owner, then
// running its first attempt, lost, and running its second; the attempt is
// a mutable field, and a queued run is never an expired one.
func testRunAttempts(t *testing.T, s core.BreadStore) {
	rs := capability[core.RunStore](t, s)
	createSession(t, s, core.NewSession{ID: "s"})
	queued := core.RunRecord{ID: "run-1", AgentID: "writer", SessionID: "s", Status: core.RunQueued, CreatedAt: baseTime, UpdatedAt: baseTime}
	noErr(t, rs.PutRun(t.Context(), queued), "PutRun(queued)")
	expired, err := rs.ExpiredRuns(t.Context(), baseTime+1_000_000, 0)
	noErr(t, err, "ExpiredRuns")
	if len(expired) != 0 {
		t.Fatalf("ExpiredRuns lists a queued run: %+v", expired)
	}
	steps := []core.RunRecord{
		{ID: "run-1", Status: core.RunRunning, Owner: "replica-a", LeaseUntil: baseTime + 100, Attempt: 1, UpdatedAt: baseTime + 10},
		{ID: "run-1", Status: core.RunLost, ErrorCode: core.CodeRunLost, Attempt: 1, UpdatedAt: baseTime + 200},
		{ID: "run-1", Status: core.RunRunning, Owner: "replica-b", LeaseUntil: baseTime + 400, Attempt: 2, UpdatedAt: baseTime + 300},
	}
	for _, st := range steps {
		noErr(t, rs.PutRun(t.Context(), st), "PutRun(%s, attempt %d)", st.Status, st.Attempt)
		got, err := rs.GetRun(t.Context(), "run-1")
		noErr(t, err, "GetRun")
		want := st
		want.AgentID, want.SessionID, want.CreatedAt = queued.AgentID, queued.SessionID, queued.CreatedAt
		assertJSONEqual(t, fmt.Sprintf("the run at %s, attempt %d", st.Status, st.Attempt), want, got)
	}
}

func testRunStartedBy(t *testing.T, s core.BreadStore) {
	rs := capability[core.RunStore](t, s)
	createSession(t, s, core.NewSession{ID: "s"})
	first := runRecord("run-1", "s", "replica-a", core.RunRunning, baseTime+30_000)
	first.StartedBy = `"jwt" "https://issuer.example" "alice"`
	noErr(t, rs.PutRun(t.Context(), first), "PutRun")
	got, err := rs.GetRun(t.Context(), "run-1")
	noErr(t, err, "GetRun")
	equal(t, "StartedBy as stored", first.StartedBy, got.StartedBy)
	// A resume by someone else, or by nobody, records its own state but
	// keeps the starter.
	for _, by := range []string{`"jwt" "https://issuer.example" "bob"`, ""} {
		st := core.RunRecord{ID: "run-1", Status: core.RunRunning, Owner: "replica-b", LeaseUntil: baseTime + 60_000, UpdatedAt: baseTime + 20, StartedBy: by}
		noErr(t, rs.PutRun(t.Context(), st), "PutRun(resume by %q)", by)
		got, err = rs.GetRun(t.Context(), "run-1")
		noErr(t, err, "GetRun after a resume")
		equal(t, "StartedBy after a resume by "+by, first.StartedBy, got.StartedBy)
	}
	// A run nobody authenticated has no starter.
	anon := runRecord("run-2", "s", "replica-a", core.RunRunning, baseTime+30_000)
	noErr(t, rs.PutRun(t.Context(), anon), "PutRun(anonymous)")
	got, err = rs.GetRun(t.Context(), "run-2")
	noErr(t, err, "GetRun(anonymous)")
	equal(t, "StartedBy of an anonymous run", "", got.StartedBy)
}

func testSessionStarters(t *testing.T, s core.BreadStore) {
	ss := capability[core.SessionStarters](t, s)
	rs := capability[core.RunStore](t, s)
	createSession(t, s, core.NewSession{ID: "s"})
	createSession(t, s, core.NewSession{ID: "other"})
	for i, by := range []string{"alice", "bob", "alice", ""} {
		r := runRecord(fmt.Sprintf("run-%d", i), "s", "replica-a", core.RunCompleted, 0)
		r.StartedBy = by
		noErr(t, rs.PutRun(t.Context(), r), "PutRun")
	}
	r := runRecord("run-other", "other", "replica-a", core.RunCompleted, 0)
	r.StartedBy = "carol"
	noErr(t, rs.PutRun(t.Context(), r), "PutRun(other)")
	got, err := ss.SessionStarters(t.Context(), "s")
	noErr(t, err, "SessionStarters")
	slices.Sort(got)
	equalList(t, "the starters of s", []string{"alice", "bob"}, got)
	for _, id := range []string{"no-such-session", "bad\x00id"} {
		got, err = ss.SessionStarters(t.Context(), id)
		noErr(t, err, "SessionStarters(%q)", id)
		equal(t, "the starters of an unknown session", 0, len(got))
	}
}

func testRunUnknown(t *testing.T, s core.BreadStore) {
	rs := capability[core.RunStore](t, s)
	_, err := rs.GetRun(t.Context(), "no-such-run")
	isErr(t, err, core.ErrRunNotFound, "GetRun of an unknown id")
	_, err = rs.GetRun(t.Context(), "bad\x00id")
	isErr(t, err, core.ErrRunNotFound, "GetRun of an id with a NUL byte")
	err = rs.PutRun(t.Context(), runRecord("run-1", "no-such-session", "a", core.RunRunning, baseTime))
	isErr(t, err, core.ErrSessionNotFound, "PutRun in a missing session")
	won, err := rs.LoseRun(t.Context(), "no-such-run", baseTime)
	noErr(t, err, "LoseRun of an unknown id")
	equal(t, "LoseRun of an unknown id", false, won)
}

func testRunRenew(t *testing.T, s core.BreadStore) {
	rs := capability[core.RunStore](t, s)
	createSession(t, s, core.NewSession{ID: "s"})
	for _, r := range []core.RunRecord{
		runRecord("a-1", "s", "a", core.RunRunning, baseTime),
		runRecord("a-2", "s", "a", core.RunRunning, baseTime),
		runRecord("b-1", "s", "b", core.RunRunning, baseTime),
		runRecord("a-done", "s", "a", core.RunCompleted, 0),
	} {
		noErr(t, rs.PutRun(t.Context(), r), "PutRun(%s)", r.ID)
	}
	n, err := rs.RenewRunLeases(t.Context(), "a", baseTime+5000)
	noErr(t, err, "RenewRunLeases")
	equal(t, "runs renewed", 2, n)
	for id, lease := range map[string]int64{"a-1": baseTime + 5000, "a-2": baseTime + 5000, "b-1": baseTime, "a-done": 0} {
		got, err := rs.GetRun(t.Context(), id)
		noErr(t, err, "GetRun(%s)", id)
		equal(t, "lease of "+id, lease, got.LeaseUntil)
	}
	n, err = rs.RenewRunLeases(t.Context(), "nobody", baseTime+5000)
	noErr(t, err, "RenewRunLeases(nobody)")
	equal(t, "runs renewed for an owner with none", 0, n)
}

func testRunExpired(t *testing.T, s core.BreadStore) {
	rs := capability[core.RunStore](t, s)
	createSession(t, s, core.NewSession{ID: "s"})
	for _, r := range []core.RunRecord{
		runRecord("late", "s", "a", core.RunRunning, baseTime+300),
		runRecord("early", "s", "a", core.RunRunning, baseTime+100),
		runRecord("middle", "s", "b", core.RunRunning, baseTime+200),
		runRecord("alive", "s", "b", core.RunRunning, baseTime+10_000),
		runRecord("suspended", "s", "", core.RunSuspended, 0),
		runRecord("done", "s", "", core.RunCompleted, 0),
	} {
		noErr(t, rs.PutRun(t.Context(), r), "PutRun(%s)", r.ID)
	}
	got, err := rs.ExpiredRuns(t.Context(), baseTime+1000, 0)
	noErr(t, err, "ExpiredRuns")
	equalList(t, "expired runs", []string{"early", "middle", "late"}, ids(got, func(r core.RunRecord) string { return r.ID }))
	got, err = rs.ExpiredRuns(t.Context(), baseTime+1000, 2)
	noErr(t, err, "ExpiredRuns(limit 2)")
	equalList(t, "expired runs, limit 2", []string{"early", "middle"}, ids(got, func(r core.RunRecord) string { return r.ID }))
	got, err = rs.ExpiredRuns(t.Context(), baseTime+150, 0)
	noErr(t, err, "ExpiredRuns(earlier)")
	equalList(t, "expired runs at an earlier time", []string{"early"}, ids(got, func(r core.RunRecord) string { return r.ID }))
}

func testRunLose(t *testing.T, s core.BreadStore) {
	rs := capability[core.RunStore](t, s)
	createSession(t, s, core.NewSession{ID: "s"})
	for _, r := range []core.RunRecord{
		runRecord("lapsed", "s", "a", core.RunRunning, baseTime+100),
		runRecord("alive", "s", "a", core.RunRunning, baseTime+10_000),
		runRecord("suspended", "s", "", core.RunSuspended, 0),
	} {
		noErr(t, rs.PutRun(t.Context(), r), "PutRun(%s)", r.ID)
	}
	now := baseTime + 1000
	for id, want := range map[string]bool{"lapsed": true, "alive": false, "suspended": false} {
		won, err := rs.LoseRun(t.Context(), id, now)
		noErr(t, err, "LoseRun(%s)", id)
		equal(t, "LoseRun("+id+")", want, won)
	}
	got, err := rs.GetRun(t.Context(), "lapsed")
	noErr(t, err, "GetRun(lapsed)")
	equal(t, "status of the lost run", core.RunLost, got.Status)
	equal(t, "error code of the lost run", core.CodeRunLost, got.ErrorCode)
	equal(t, "owner of the lost run", "", got.Owner)
	equal(t, "updatedAt of the lost run", now, got.UpdatedAt)
	won, err := rs.LoseRun(t.Context(), "lapsed", now+1)
	noErr(t, err, "LoseRun again")
	equal(t, "LoseRun of a run already lost", false, won)
	for _, id := range []string{"alive", "suspended"} {
		got, err := rs.GetRun(t.Context(), id)
		noErr(t, err, "GetRun(%s)", id)
		if got.Status == core.RunLost {
			t.Errorf("LoseRun lost %s, whose lease had not lapsed", id)
		}
	}
}

func testRunLoseRace(t *testing.T, s core.BreadStore) {
	rs := capability[core.RunStore](t, s)
	createSession(t, s, core.NewSession{ID: "s"})
	const runs, sweepers = 4, 8
	for i := range runs {
		noErr(t, rs.PutRun(t.Context(), runRecord(fmt.Sprintf("run-%d", i), "s", "dead", core.RunRunning, baseTime)), "PutRun")
	}
	var mu sync.Mutex
	wins := map[string]int{}
	var wg sync.WaitGroup
	for range sweepers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range runs {
				id := fmt.Sprintf("run-%d", i)
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
		}()
	}
	wg.Wait()
	for i := range runs {
		id := fmt.Sprintf("run-%d", i)
		if wins[id] != 1 {
			t.Errorf("%s was lost by %d sweepers, want exactly 1", id, wins[id])
		}
	}
}

func testRunCascade(t *testing.T, s core.BreadStore) {
	rs := capability[core.RunStore](t, s)
	createSession(t, s, core.NewSession{ID: "s"})
	createSession(t, s, core.NewSession{ID: "keep"})
	noErr(t, rs.PutRun(t.Context(), runRecord("gone", "s", "a", core.RunRunning, baseTime)), "PutRun")
	noErr(t, rs.PutRun(t.Context(), runRecord("kept", "keep", "a", core.RunRunning, baseTime)), "PutRun")
	noErr(t, s.DeleteSession(t.Context(), "s"), "DeleteSession")
	_, err := rs.GetRun(t.Context(), "gone")
	isErr(t, err, core.ErrRunNotFound, "GetRun of a deleted session's run")
	_, err = rs.GetRun(t.Context(), "kept")
	noErr(t, err, "GetRun of another session's run")
}

func testListRuns(t *testing.T, s core.BreadStore) {
	rl := capability[core.RunLister](t, s)
	rs := capability[core.RunStore](t, s)
	createSession(t, s, core.NewSession{ID: "s1"})
	createSession(t, s, core.NewSession{ID: "s2"})
	put := func(id, session, agent string, status core.RunStatus, created int64, edit ...func(*core.RunRecord)) {
		t.Helper()
		r := runRecord(id, session, "o", status, baseTime+60_000)
		r.AgentID, r.CreatedAt, r.UpdatedAt = agent, created, created
		for _, e := range edit {
			e(&r)
		}
		noErr(t, rs.PutRun(t.Context(), r), "PutRun(%s)", id)
	}
	by := func(who string) func(*core.RunRecord) { return func(r *core.RunRecord) { r.StartedBy = who } }
	put("r1", "s1", "writer", core.RunCompleted, baseTime, by("alice"))
	put("r2", "s1", "critic", core.RunSuspended, baseTime+1, by("bob"))
	put("r3", "s2", "writer", core.RunRunning, baseTime+2, by("alice"))
	put("r4", "s2", "writer", core.RunCompleted, baseTime+3, func(r *core.RunRecord) { r.UpdatedAt = baseTime + 10 })
	// r5 shares r4's CreatedAt: the listing orders ties by id, and a
	// cursor between them splits them exactly.
	put("r5", "s2", "writer", core.RunCompleted, baseTime+3, func(r *core.RunRecord) { r.PipelineID = "review" })
	ids := func(f core.RunFilter) []string {
		t.Helper()
		got, err := rl.ListRuns(t.Context(), f)
		noErr(t, err, "ListRuns(%+v)", f)
		out := make([]string, len(got))
		for i, r := range got {
			out[i] = r.ID
		}
		return out
	}
	for _, c := range []struct {
		f    core.RunFilter
		want []string
	}{
		{core.RunFilter{}, []string{"r5", "r4", "r3", "r2", "r1"}},
		{core.RunFilter{SessionID: "s1"}, []string{"r2", "r1"}},
		{core.RunFilter{AgentID: "writer"}, []string{"r5", "r4", "r3", "r1"}},
		{core.RunFilter{Status: core.RunCompleted}, []string{"r5", "r4", "r1"}},
		{core.RunFilter{SessionID: "s2", Status: core.RunRunning}, []string{"r3"}},
		{core.RunFilter{Limit: 2}, []string{"r5", "r4"}},
		{core.RunFilter{StartedBy: "alice"}, []string{"r3", "r1"}},
		{core.RunFilter{Statuses: []core.RunStatus{core.RunRunning, core.RunSuspended}}, []string{"r3", "r2"}},
		{core.RunFilter{Statuses: []core.RunStatus{core.RunRunning, core.RunSuspended}, Status: core.RunRunning}, []string{"r3"}},
		{core.RunFilter{UpdatedSince: baseTime + 3}, []string{"r5", "r4"}},
		{core.RunFilter{NoPipelines: true, AgentID: "writer"}, []string{"r4", "r3", "r1"}},
		{core.RunFilter{After: &core.RunCursor{CreatedAt: baseTime + 3, ID: "r5"}}, []string{"r4", "r3", "r2", "r1"}},
		{core.RunFilter{After: &core.RunCursor{CreatedAt: baseTime + 3, ID: "r4"}, Limit: 2}, []string{"r3", "r2"}},
		{core.RunFilter{After: &core.RunCursor{CreatedAt: baseTime + 1, ID: "r2"}, StartedBy: "alice"}, []string{"r1"}},
		{core.RunFilter{After: &core.RunCursor{CreatedAt: baseTime, ID: "r1"}}, []string{}},
		{core.RunFilter{SessionID: "nobody"}, []string{}},
		{core.RunFilter{AgentID: "a\x00b"}, []string{}},
		{core.RunFilter{StartedBy: "a\x00b"}, []string{}},
	} {
		if got := ids(c.f); !slices.Equal(got, c.want) {
			t.Errorf("ListRuns(%+v) = %v, want %v", c.f, got, c.want)
		}
		// CountRuns ignores After and Limit, through the store's counter
		// or by listing: both agree with the listing.
		whole := c.f
		whole.After, whole.Limit = nil, 0
		n, err := core.NewStorage(s).CountRuns(t.Context(), c.f)
		noErr(t, err, "CountRuns(%+v)", c.f)
		if want := len(ids(whole)); n != want {
			t.Errorf("CountRuns(%+v) = %d, want %d", c.f, n, want)
		}
	}
	// Paging with cursors visits every record once, in order.
	var paged []string
	f := core.RunFilter{Limit: 2}
	for range 10 {
		page, err := rl.ListRuns(t.Context(), f)
		noErr(t, err, "ListRuns(%+v)", f)
		for _, r := range page {
			paged = append(paged, r.ID)
		}
		if len(page) < f.Limit {
			break
		}
		f.After = core.CursorOf(page[len(page)-1])
	}
	if want := []string{"r5", "r4", "r3", "r2", "r1"}; !slices.Equal(paged, want) {
		t.Errorf("paged through %v, want %v", paged, want)
	}
	got, err := rl.ListRuns(t.Context(), core.RunFilter{SessionID: "s1", Status: core.RunSuspended})
	noErr(t, err, "ListRuns")
	if len(got) != 1 || got[0].AgentID != "critic" || got[0].SessionID != "s1" {
		t.Errorf("the listed record: %+v", got)
	}
}

func testRunEnd(t *testing.T, s core.BreadStore) {
	rs := capability[core.RunStore](t, s)
	createSession(t, s, core.NewSession{ID: "s"})
	lost := runRecord("lost", "s", "", core.RunLost, 0)
	lost.ErrorCode = core.CodeRunLost
	for _, r := range []core.RunRecord{
		runRecord("mine", "s", "a", core.RunRunning, baseTime+100),
		runRecord("theirs", "s", "b", core.RunRunning, baseTime+100),
		runRecord("suspended", "s", "", core.RunSuspended, 0),
		runRecord("queued", "s", "", core.RunQueued, 0),
		lost,
	} {
		noErr(t, rs.PutRun(t.Context(), r), "PutRun(%s)", r.ID)
	}
	for _, tc := range []struct {
		id     string
		wrote  bool
		status core.RunStatus // the record afterwards
	}{
		{"mine", true, core.RunCompleted},      // its owner ends it
		{"theirs", false, core.RunRunning},     // another owner runs it now
		{"suspended", true, core.RunCompleted}, // a cancelled or resumed waiting run
		{"queued", true, core.RunCompleted},    // a background run refused before it ran
		{"lost", false, core.RunLost},          // a sweeper declared it lost
		{"missing", true, core.RunCompleted},   // its running write failed
		{"mine", true, core.RunCompleted},      // written again (a retried end write)
	} {
		end := runRecord(tc.id, "s", "", core.RunCompleted, 0)
		end.UpdatedAt = baseTime + 500
		wrote, err := rs.EndRun(t.Context(), end, "a")
		noErr(t, err, "EndRun(%s)", tc.id)
		equal(t, "EndRun("+tc.id+") wrote", tc.wrote, wrote)
		got, err := rs.GetRun(t.Context(), tc.id)
		noErr(t, err, "GetRun(%s)", tc.id)
		equal(t, "status of "+tc.id+" after EndRun", tc.status, got.Status)
		if !tc.wrote && got.UpdatedAt != baseTime {
			t.Errorf("EndRun(%s) refused but changed updatedAt to %d", tc.id, got.UpdatedAt)
		}
	}
	got, err := rs.GetRun(t.Context(), "lost")
	noErr(t, err, "GetRun(lost)")
	equal(t, "error code of the lost run after a refused EndRun", core.CodeRunLost, got.ErrorCode)
	if _, err := rs.EndRun(t.Context(), runRecord("orphan", "no-such-session", "", core.RunCompleted, 0), "a"); !isCode(err, core.CodeSessionNotFound) {
		t.Errorf("EndRun of a new record in an unknown session: %v, want %s", err, core.CodeSessionNotFound)
	}
}

// testRunEndRace: an owner ending its run while sweepers lose its lapsed
// lease. Whichever comes first, the other does nothing: the record is
// completed and no sweeper won, or it is lost and the end was refused.
func testRunEndRace(t *testing.T, s core.BreadStore) {
	rs := capability[core.RunStore](t, s)
	createSession(t, s, core.NewSession{ID: "s"})
	const runs, sweepers = 4, 4
	for i := range runs {
		noErr(t, rs.PutRun(t.Context(), runRecord(fmt.Sprintf("run-%d", i), "s", "paused", core.RunRunning, baseTime)), "PutRun")
	}
	var mu sync.Mutex
	wins, ends := map[string]int{}, map[string]bool{}
	var wg sync.WaitGroup
	for range sweepers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range runs {
				id := fmt.Sprintf("run-%d", i)
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
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range runs {
			id := fmt.Sprintf("run-%d", i)
			wrote, err := rs.EndRun(t.Context(), runRecord(id, "s", "", core.RunCompleted, 0), "paused")
			if err != nil {
				t.Errorf("EndRun(%s): %v", id, err)
				return
			}
			mu.Lock()
			ends[id] = wrote
			mu.Unlock()
		}
	}()
	wg.Wait()
	for i := range runs {
		id := fmt.Sprintf("run-%d", i)
		got, err := rs.GetRun(t.Context(), id)
		noErr(t, err, "GetRun(%s)", id)
		switch {
		case ends[id] && (wins[id] != 0 || got.Status != core.RunCompleted):
			t.Errorf("%s: the end was written, yet %d sweepers won and the record is %s", id, wins[id], got.Status)
		case !ends[id] && (wins[id] != 1 || got.Status != core.RunLost):
			t.Errorf("%s: the end was refused, yet %d sweepers won and the record is %s", id, wins[id], got.Status)
		}
	}
}
