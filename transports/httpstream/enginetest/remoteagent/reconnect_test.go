package remoteagent_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
	"github.com/breadai/bread/transports/httpstream"
	"github.com/breadai/bread/transports/httpstream/remoteagent"
	"github.com/breadai/bread/transports/httpstream/streamtest"
)

// serve runs an engine with one scripted agent, "writer", behind an
// httpstream.Ingress on a loopback server.
func serve(t *testing.T, turns ...modeltest.Turn) string {
	t.Helper()
	model := modeltest.New(turns...)
	inst, err := engine.New(engine.Config{
		Store: memory.New(), Providers: model.Registry("scripted"),
		Agents: []*core.Agent{{ID: "writer", Model: core.ModelRef{Provider: "scripted", Model: "m"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := inst.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = inst.Stop(context.Background()) })
	return streamtest.Serve(t, httpstream.New(httpstream.Options{}), inst).URL
}

// A remote run of 10,000 distinct deltas whose connection the client loses
// at 20 seeded points relays exactly the run's text, each byte once, in
// both formats, with the run paced 100, 1,200 and 3,000 deltas ahead of the
// client (see httpstream's TestPassiveStreamReconnectsAtAnyMomentLosingNothing).
func TestRemoteAgentRelaysALongRunExactlyAcrossReconnects(t *testing.T) {
	for _, format := range []remoteagent.Format{remoteagent.NDJSON, remoteagent.SSE} {
		for _, lead := range []int{100, 1200, 3000} {
			t.Run(format.String()+"/"+strconv.Itoa(lead), func(t *testing.T) {
				run := streamtest.NewLongRun(10000, lead)
				url := serve(t, run.Turn())
				cutter := &streamtest.Cutter{}
				agent := remoteagent.New(remoteagent.Options{
					URL: url, Format: format, RetryDelay: time.Millisecond,
					HTTPClient: &http.Client{Transport: cutter},
				})
				got := streamtest.RelayWithCuts(t, agent, "writer", run, cutter, streamtest.Cuts(28, len(run.Text)*9/10, 20))
				checkRelayed(t, got, run, cutter)
			})
		}
	}
}

func checkRelayed(t *testing.T, got streamtest.Relayed, run *streamtest.LongRun, cutter *streamtest.Cutter) {
	t.Helper()
	if got.Err != nil {
		t.Fatalf("the run failed: %v", got.Err)
	}
	if got.Last == nil || got.Last.CrumbType() != core.TypeAgentRunEnd {
		t.Fatalf("the run's last crumb is %v, want agent:run:end", got.Last)
	}
	if got.Text != run.Text {
		t.Fatalf("relayed %d bytes of text, the run's %d; first difference at byte %d", len(got.Text), len(run.Text), firstDiff(got.Text, run.Text))
	}
	// Every cut is followed by a reconnect; a reconnect attempt that
	// itself fails on a loaded machine is retried, so there may be more
	// reconnects than cuts (the text above is exact whatever their number).
	if got.Points != 20 || got.Cuts > cutter.Tails() {
		t.Fatalf("%d of 20 cut points passed, %d connections cut, %d reconnects", got.Points, got.Cuts, cutter.Tails())
	}
	t.Logf("%d connections cut at 20 points, %d reconnects, %d deltas relayed", got.Cuts, cutter.Tails(), got.Deltas)
}

func firstDiff(a, b string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
