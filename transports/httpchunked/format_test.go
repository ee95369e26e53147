package httpchunked

import (
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/protocol"
)

func TestFramesMatchTheProtocolEncoder(t *testing.T) {
	frames := []core.Frame{
		{RunID: "r-1", Seq: 4, Crumb: &core.TextDelta{CrumbBase: core.CrumbBase{AgentID: "a", RunID: "r-1", Timestamp: 9, Seq: 4}, Delta: "hi <there>"}},
		{RunID: "", Seq: 0, Crumb: &core.AgentError{CrumbBase: core.CrumbBase{AgentID: "ghost"}, Error: &core.BreadError{Code: "AGENT_NOT_FOUND", Message: "no"}}},
		{RunID: "ü\"", Seq: -1, Crumb: &core.AgentRunEnd{CrumbBase: core.CrumbBase{AgentID: "a"}, Output: map[string]int{"n": 1}}},
	}
	for _, f := range frames {
		want, err := protocol.EncodeCrumbFrame(f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ndjson{}.AppendCrumb([]byte("x"), f)
		if err != nil || string(got) != "x"+string(want)+"\n" {
			t.Fatalf("got %s\nwant x%s", got, want)
		}
	}
	var nilDelta *core.TextDelta
	for _, c := range []core.Crumb{nil, nilDelta} {
		got, err := ndjson{}.AppendCrumb([]byte("x"), core.Frame{Crumb: c})
		if err == nil || string(got) != "x" {
			t.Fatalf("a frame without a crumb: %q %v", got, err)
		}
	}
}
