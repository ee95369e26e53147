package enginetest_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/transports/httpstream"
	"github.com/breadai/bread/transports/httpstream/streamtest"
)

// A client that drops the passive stream of a 10,000-delta run at 20 seeded
// points and reconnects with Last-Event-ID each time, while the run goes
// on, loses nothing: under the coarse rule every delta arrives in order
// (each reconnect repeats at most the text of the watermark it resumed
// in), under the exact rule the text is the run's, each byte once.
//
// The run is paced three ways: 100 deltas ahead of the client, which then
// resumes in the open delta window (not in the log yet); 1,200 ahead, in a
// window of which the oldest frames are more than a thousand back (what an
// older replay buffer kept); 3,000 ahead, windows behind the head.
func TestPassiveStreamReconnectsAtAnyMomentLosingNothing(t *testing.T) {
	for _, c := range []struct {
		format string
		lead   int
	}{
		{httpstream.ContentTypeNDJSON, 100}, {httpstream.ContentTypeSSE, 100},
		{httpstream.ContentTypeNDJSON, 1200}, {httpstream.ContentTypeSSE, 1200},
		{httpstream.ContentTypeNDJSON, 3000}, {httpstream.ContentTypeSSE, 3000},
	} {
		format := c.format
		t.Run(format+"/"+strconv.Itoa(c.lead), func(t *testing.T) {
			run := streamtest.NewLongRun(10000, c.lead)
			e := newEnv(t, setup{turns: []modeltest.Turn{run.Turn()}})
			a := e.post(t, "/agents/writer/run", `{"input":"hi","background":true}`)
			if a.status != http.StatusAccepted {
				t.Fatalf("%d %s", a.status, a.body)
			}
			got := tailWithCuts(t, e, a.run.RunID, format, run, streamtest.Cuts(28, len(run.Text), 20))
			checkAtLeastOnce(t, got.frames, run.Text)
			if got.text != run.Text {
				t.Fatalf("the exact text has %d bytes, the run's %d; first difference at %d", len(got.text), len(run.Text), firstDiff(got.text, run.Text))
			}
			if got.reconnects != 20 {
				t.Fatalf("%d reconnects, want 20", got.reconnects)
			}
		})
	}
}

type tailed struct {
	frames     []core.Frame // everything received, repeats included
	text       string       // the text under the exact rule
	reconnects int
}

// tailWithCuts follows a run on its passive stream, dropping the
// connection once the exact text reaches each cut (in bytes) and
// reconnecting with the Dedup's Last-Event-ID, until the terminal crumb.
func tailWithCuts(t *testing.T, e *env, runID, format string, run *streamtest.LongRun, cuts []int) tailed {
	t.Helper()
	var out tailed
	var d httpstream.Dedup
	var text strings.Builder
	for {
		hdr := []string{"Accept", format}
		if d.Last > 0 {
			hdr = append(hdr, "Last-Event-ID", strconv.FormatInt(d.Last, 10))
		}
		s := e.open(t, "GET", "/runs/"+runID+"/stream", "", hdr...)
		d.Restart(s.res.Header.Get(httpstream.DeltaSeqHeader) == httpstream.DeltaSeqWatermark)
		ended, cut := false, false
		for !ended && !cut {
			f, ok := s.next()
			if !ok {
				break
			}
			out.frames = append(out.frames, f)
			if g, ok := d.Frame(f); ok {
				if td, ok := g.Crumb.(*core.TextDelta); ok {
					text.WriteString(td.Delta)
					run.Saw(td.Delta)
				}
			}
			ended = core.IsTerminal(f.Crumb.CrumbType())
			// A cut the text passed while reconnecting (an aggregated
			// entry brings a whole window) drops the next connection at
			// its first frame: every cut is a reconnect.
			if len(cuts) > 0 && text.Len() >= cuts[0] {
				cuts, cut = cuts[1:], true
			}
		}
		s.close()
		if ended {
			out.text = text.String()
			return out
		}
		if !cut {
			t.Fatalf("the stream closed after %d bytes of text without the terminal crumb", text.Len())
		}
		out.reconnects++
	}
}

func firstDiff(a, b string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
