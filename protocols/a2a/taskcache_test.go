package a2a_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/core/stream"
	"github.com/breadai/bread/engine"
	a2ap "github.com/breadai/bread/protocols/a2a"
	"github.com/breadai/bread/server"
	"github.com/breadai/bread/stores/teststores"
)

// longRun logs a run of n text deltas straight into st, as a long streamed
// answer leaves it, running, and returns its id and a func that logs m
// more deltas and the run's end and completes its record.
func longRun(tb testing.TB, st core.BreadStore, n int) (string, func(m int)) {
	tb.Helper()
	ctx := tb.Context()
	s := core.NewStorage(st)
	sess, err := s.CreateSession(ctx, core.NewSession{AgentID: "assistant"})
	if err != nil {
		tb.Fatal(err)
	}
	now := core.NowMillis()
	rec := core.RunRecord{ID: "run-long", AgentID: "assistant", SessionID: sess.ID, Status: core.RunRunning, CreatedAt: now, UpdatedAt: now,
		Owner: "another-replica", LeaseUntil: now + 3_600_000} // not swept as lost
	if err := s.PutRun(ctx, rec); err != nil {
		tb.Fatal(err)
	}
	base := core.CrumbBase{RunID: rec.ID, SessionID: sess.ID, AgentID: "assistant"}
	seq := int64(0)
	log := func(cs ...core.Crumb) {
		var entries []core.CrumbLogEntry
		for _, c := range cs {
			seq++
			entries = append(entries, core.CrumbLogEntry{RunID: rec.ID, Seq: seq, SessionID: sess.ID, AgentID: "assistant", Type: c.CrumbType(), Crumb: c, CreatedAt: now})
		}
		for len(entries) > 0 {
			k := min(len(entries), 500)
			if err := s.AppendCrumbs(ctx, entries[:k]); err != nil {
				tb.Fatal(err)
			}
			entries = entries[k:]
		}
	}
	deltas := func(from, m int) {
		var cs []core.Crumb
		for i := from; i < from+m; i++ {
			cs = append(cs, &core.TextDelta{CrumbBase: base, Delta: fmt.Sprintf("word%04d ", i)})
		}
		log(cs...)
	}
	deltas(0, n)
	return rec.ID, func(m int) {
		deltas(n, m)
		log(&core.AgentRunEnd{CrumbBase: base, Output: "done"})
		rec.Status, rec.UpdatedAt, rec.Owner, rec.LeaseUntil = core.RunCompleted, core.NowMillis(), "", 0
		if err := s.PutRun(ctx, rec); err != nil {
			tb.Fatal(err)
		}
	}
}

// taskServer serves the plugin (cache on or off) over st.
func taskServer(tb testing.TB, st core.BreadStore, cache bool) string {
	tb.Helper()
	p, err := a2ap.New(a2ap.Options{Agent: "assistant", URL: "/a2a"})
	if err != nil {
		tb.Fatal(err)
	}
	in, err := engine.New(engine.Config{Store: st, Bus: stream.New(stream.Options{}), Agents: []*core.Agent{scripted("assistant", modeltest.Text("hi"))}, Plugins: []core.BreadPlugin{p}})
	if err != nil {
		tb.Fatal(err)
	}
	if err := in.Start(tb.Context()); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = in.Stop(tb.Context()) })
	if !cache {
		a2ap.WithoutTaskCache(p)
	}
	srv, err := server.New(in, server.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	tb.Cleanup(hs.Close)
	return hs.URL + "/a2a"
}

// getTask reads a task over tasks/get: its state and its text.
func getTask(tb testing.TB, url, id string) (state, text string) {
	res, err := http.Post(url, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"`+id+`"}}`))
	if err != nil {
		tb.Fatal(err)
	}
	defer res.Body.Close()
	var out struct {
		Result struct {
			Status    struct{ State string } `json:"status"`
			Artifacts []struct {
				Parts []struct{ Text string } `json:"parts"`
			} `json:"artifacts"`
		} `json:"result"`
	}
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil || len(out.Result.Artifacts) != 1 {
		tb.Fatalf("tasks/get: %+v, %v", out, err)
	}
	return out.Result.Status.State, out.Result.Artifacts[0].Parts[0].Text
}

// TestTaskCacheReadsWhatTheLogGained: with the task cache, tasks/get
// answers what a replay of the whole log answers, on every store, and a
// cached task gains what its log gained since (the rest of the text, the
// end): it is extended, never frozen.
func TestTaskCacheReadsWhatTheLogGained(t *testing.T) {
	eachStore(t, func(t *testing.T, open func(testing.TB) core.BreadStore) {
		st := open(t)
		id, finish := longRun(t, st, 50)
		cached, scanned := taskServer(t, st, true), taskServer(t, st, false)
		for round := range 2 {
			ws, wt := getTask(t, scanned, id)
			gs, gt := getTask(t, cached, id)
			gs2, gt2 := getTask(t, cached, id)
			if gs != ws || gt != wt || gs2 != ws || gt2 != wt || !strings.HasPrefix(gt, "word0000 ") {
				t.Fatalf("round %d: cached %s %q then %s %q, scanned %s %q", round, gs, gt, gs2, gt2, ws, wt)
			}
			switch round {
			case 0:
				if ws != "working" || !strings.HasSuffix(wt, "word0049 ") {
					t.Fatalf("before: %s %q", ws, wt)
				}
				finish(10)
			case 1:
				if ws != "completed" || !strings.HasSuffix(wt, "word0059 ") {
					t.Fatalf("after: %s %q", ws, wt)
				}
			}
		}
	})
}

// BenchmarkGetTaskLongRun: tasks/get of a finished task whose log holds
// 2000 text deltas, over HTTP, replaying the whole log on each call
// (log-scan) or from the task cache (indexed). Run both in one go to
// compare: go test -run '^$' -bench GetTaskLongRun -benchmem -count 3.
func BenchmarkGetTaskLongRun(b *testing.B) {
	for _, s := range teststores.All()[:2] { // memory, sqlite
		for _, mode := range []struct {
			name  string
			cache bool
		}{{"log-scan", false}, {"indexed", true}} {
			b.Run(s.Name+"/"+mode.name, func(b *testing.B) {
				// A store of its own: the engine closes its store when it stops.
				st := s.Open(b)
				id, finish := longRun(b, st, 2000)
				finish(0)
				url := taskServer(b, st, mode.cache)
				getTask(b, url, id)
				b.ReportAllocs()
				for b.Loop() {
					getTask(b, url, id)
				}
			})
		}
	}
}
