package httpstream_test

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/protocol"
	"github.com/breadai/bread/transports/httpstream"
)

func goldenFrames() []core.Frame {
	return []core.Frame{
		{RunID: "r-1", Seq: 4, Crumb: &core.TextDelta{CrumbBase: core.CrumbBase{AgentID: "a", RunID: "r-1", Timestamp: 9, Seq: 4}, Delta: "hi <there>"}},
		{RunID: "", Seq: 0, Crumb: &core.AgentError{CrumbBase: core.CrumbBase{AgentID: "ghost"}, Error: &core.BreadError{Code: "AGENT_NOT_FOUND", Message: "no"}}},
		{RunID: "ü\"", Seq: -1, Crumb: &core.AgentRunEnd{CrumbBase: core.CrumbBase{AgentID: "a"}, Output: map[string]int{"n": 1}}},
	}
}

func TestNDJSONMatchesTheProtocolEncoder(t *testing.T) {
	for _, f := range goldenFrames() {
		want, err := protocol.EncodeCrumbFrame(f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := httpstream.NDJSON{}.AppendCrumb([]byte("x"), f)
		if err != nil || string(got) != "x"+string(want)+"\n" {
			t.Fatalf("got %s\nwant x%s", got, want)
		}
		got, err = httpstream.NDJSON{}.AppendFailure([]byte("x"), f)
		if err != nil || string(got) != "x"+string(want)+"\n" {
			t.Fatalf("failure: got %s\nwant x%s", got, want)
		}
	}
	var nilDelta *core.TextDelta
	for _, c := range []core.Crumb{nil, nilDelta} {
		got, err := httpstream.NDJSON{}.AppendCrumb([]byte("x"), core.Frame{Crumb: c})
		if err == nil || string(got) != "x" {
			t.Fatalf("a frame without a crumb: %q %v", got, err)
		}
	}
	var n httpstream.NDJSON
	if string(n.AppendOpen([]byte("x"))) != "x" || string(n.AppendHeartbeat([]byte("x"))) != "x\n" || n.ContentType() != "application/x-ndjson" {
		t.Fatal("NDJSON opens with nothing and beats with a blank line")
	}
}

func TestSSEBytes(t *testing.T) {
	var s httpstream.SSE
	fs := goldenFrames()
	cases := []struct {
		name string
		got  func() ([]byte, error)
		want string
	}{
		{"open", func() ([]byte, error) { return s.AppendOpen([]byte("x")), nil }, "xretry: 3000\n\n"},
		{"heartbeat", func() ([]byte, error) { return s.AppendHeartbeat([]byte("x")), nil }, "x: ping\n\n"},
		{"delta", func() ([]byte, error) { return s.AppendCrumb([]byte("x"), fs[0]) },
			"xid: 4\n\ndata: {\"type\":\"text:delta\",\"payload\":{\"type\":\"text:delta\",\"agentId\":\"a\",\"runId\":\"r-1\",\"timestamp\":9,\"seq\":4,\"delta\":\"hi \\u003cthere\\u003e\"}}\n\n"},
		{"no seq, no id", func() ([]byte, error) { return s.AppendCrumb(nil, fs[1]) },
			"data: {\"type\":\"agent:error\",\"payload\":{\"type\":\"agent:error\",\"agentId\":\"ghost\",\"timestamp\":0,\"error\":{\"name\":\"BreadError\",\"code\":\"AGENT_NOT_FOUND\",\"message\":\"no\"}}}\n\n"},
		{"failure before a run: the error event alone", func() ([]byte, error) { return s.AppendFailure(nil, fs[1]) },
			"data: {\"type\":\"error\",\"payload\":{\"code\":\"AGENT_NOT_FOUND\",\"message\":\"no\"}}\n\n"},
		{"failure of a run: its crumb, then the error event", func() ([]byte, error) {
			return s.AppendFailure(nil, core.Frame{RunID: "r", Seq: 2, Crumb: &core.AgentError{CrumbBase: core.CrumbBase{AgentID: "a", RunID: "r", Seq: 2}, Error: &core.BreadError{Code: "X", Message: "m"}}})
		}, "id: 2\n\ndata: {\"type\":\"agent:error\",\"payload\":{\"type\":\"agent:error\",\"agentId\":\"a\",\"runId\":\"r\",\"timestamp\":0,\"seq\":2,\"error\":{\"name\":\"BreadError\",\"code\":\"X\",\"message\":\"m\"}}}\n\n" +
			"data: {\"type\":\"error\",\"payload\":{\"code\":\"X\",\"message\":\"m\"}}\n\n"},
		{"failure without an error", func() ([]byte, error) { return s.AppendFailure(nil, core.Frame{Crumb: &core.AgentError{}}) },
			"data: {\"type\":\"error\",\"payload\":{\"code\":\"AGENT_ERROR\",\"message\":\"the run failed\"}}\n\n"},
	}
	for _, c := range cases {
		got, err := c.got()
		if err != nil || string(got) != c.want {
			t.Errorf("%s:\n got %q %v\nwant %q", c.name, got, err, c.want)
		}
	}
	if got, err := s.AppendCrumb([]byte("x"), core.Frame{}); err == nil || string(got) != "x" {
		t.Fatalf("an event without a crumb: %q %v", got, err)
	}
	if s.ContentType() != "text/event-stream" {
		t.Fatal(s.ContentType())
	}
}

// FuzzFormats: for any delta frame, NDJSON writes exactly the protocol's
// frame and SSE exactly its event around the crumb's encoding/json form.
func FuzzFormats(f *testing.F) {
	f.Add("writer", "run", "hello", int64(1), int64(2))
	f.Add("", "", "<&>\"\\\x00\xff\u2028", int64(0), int64(0))
	f.Add("a", "r", "x", int64(-3), int64(-1))
	f.Fuzz(func(t *testing.T, agent, run, delta string, ts, seq int64) {
		for _, c := range deltaCases(agent, run, "s", delta, ts, seq) {
			fr := core.Frame{RunID: run, Seq: seq, Crumb: c}
			want, err := protocol.EncodeCrumbFrame(fr)
			if err != nil {
				t.Fatal(err)
			}
			got, err := httpstream.NDJSON{}.AppendCrumb(nil, fr)
			if err != nil || string(got) != string(want)+"\n" {
				t.Fatalf("NDJSON got %s want %s", got, want)
			}
			payload, err := json.Marshal(c)
			if err != nil {
				t.Fatal(err)
			}
			ev := `data: {"type":"` + c.CrumbType() + `","payload":` + string(payload) + "}\n\n"
			if seq > 0 {
				ev = "id: " + strconv.FormatInt(seq, 10) + "\n\n" + ev
			}
			got, err = httpstream.SSE{}.AppendCrumb(nil, fr)
			if err != nil || string(got) != ev {
				t.Fatalf("SSE got %q want %q", got, ev)
			}
		}
	})
}
