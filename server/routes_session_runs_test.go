package server_test

import (
	"context"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/server"
)

// TestSessionRunsRoute: GET /sessions/{id}/runs lists a session's runs,
// newest first, each with the tokens of every agent:run:end in its crumb
// log and its own end's duration, leaving out runs the caller may not
// stream.
func TestSessionRunsRoute(t *testing.T) {
	f := newFixture(t, fakeConfig{})
	ctx := context.Background()
	for _, id := range []string{"s1", "quiet"} {
		if _, err := f.store.CreateSession(ctx, core.NewSession{ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	end := func(agent string, ms int64, u *core.Usage) core.Crumb {
		return &core.AgentRunEnd{CrumbBase: core.CrumbBase{AgentID: agent}, Output: "x", DurationMs: ms, Usage: u}
	}
	runs := []struct {
		id      string
		created int64
		crumbs  []core.Crumb
	}{
		{"r1", 1000, []core.Crumb{end("helper", 5, &core.Usage{InputTokens: 1, OutputTokens: 2, TotalTokens: 3}), end("writer", 40, &core.Usage{InputTokens: 10, OutputTokens: 20, TotalTokens: 30})}},
		{"r2", 2000, []core.Crumb{end("writer", 7, nil)}},
		{"secret", 3000, []core.Crumb{end("writer", 9, &core.Usage{TotalTokens: 99})}},
	}
	for _, r := range runs {
		if err := f.store.PutRun(ctx, core.RunRecord{ID: r.id, AgentID: "writer", SessionID: "s1", Status: core.RunCompleted, CreatedAt: r.created, UpdatedAt: r.created}); err != nil {
			t.Fatal(err)
		}
		var entries []core.CrumbLogEntry
		for i, c := range r.crumbs {
			entries = append(entries, core.CrumbLogEntry{RunID: r.id, Seq: int64(i + 1), AgentID: c.Base().AgentID, Type: c.CrumbType(), Crumb: c, CreatedAt: r.created})
		}
		if err := f.store.AppendCrumbs(ctx, entries); err != nil {
			t.Fatal(err)
		}
	}
	ts := f.serve(t, server.Options{Streams: allowStreams(func(_ *core.AuthIdentity, runID string) bool { return runID != "secret" })})

	var got []struct {
		ID         string      `json:"id"`
		AgentID    string      `json:"agentId"`
		Status     string      `json:"status"`
		DurationMs int64       `json:"durationMs"`
		Usage      *core.Usage `json:"usage"`
	}
	r := do(t, ts.URL, "GET", "/sessions/s1/runs", "")
	r.decode(t, &got)
	if r.status != 200 || len(got) != 2 {
		t.Fatalf("GET /sessions/s1/runs = %d %s", r.status, r.body)
	}
	if got[0].ID != "r2" || got[0].Usage != nil || got[0].DurationMs != 7 {
		t.Errorf("the newest run: %+v", got[0])
	}
	if got[1].ID != "r1" || got[1].Usage == nil || *got[1].Usage != (core.Usage{InputTokens: 11, OutputTokens: 22, TotalTokens: 33}) || got[1].DurationMs != 40 || got[1].Status != "completed" {
		t.Errorf("the run with a delegation: %+v (usage %+v)", got[1], got[1].Usage)
	}
	cases := []struct {
		path, want string
		status     int
	}{
		{"/sessions/quiet/runs", "[]\n", 200},
		{"/sessions/ghost/runs", "", 404},
	}
	for _, tc := range cases {
		r := do(t, ts.URL, "GET", tc.path, "")
		if r.status != tc.status || (tc.want != "" && string(r.body) != tc.want) {
			t.Errorf("GET %s = %d %q", tc.path, r.status, r.body)
		}
	}
}
