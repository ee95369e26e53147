package httpstream_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/transports/httpstream"
)

func deltaCases(agent, run, session, delta string, ts, seq int64) []core.Crumb {
	base := core.CrumbBase{AgentID: agent, RunID: run, SessionID: session, Timestamp: ts, Seq: seq}
	return []core.Crumb{
		&core.TextDelta{CrumbBase: base, Delta: delta},
		&core.ReasoningDelta{CrumbBase: base, Delta: delta},
	}
}

// matchesEncodingJSON fails t unless AppendCrumbJSON appends to a prefix
// exactly what json.Marshal writes, for every crumb.
func matchesEncodingJSON(t *testing.T, crumbs []core.Crumb) {
	t.Helper()
	for _, c := range crumbs {
		want, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		got, err := httpstream.AppendCrumbJSON([]byte("prefix"), c)
		if err != nil || string(got) != "prefix"+string(want) {
			t.Fatalf("AppendCrumbJSON(%#v)\n got %s\nwant prefix%s", c, got, want)
		}
	}
}

func TestAppendCrumbJSONMatchesEncodingJSON(t *testing.T) {
	var crumbs []core.Crumb
	for _, d := range []string{"", "plain", `quote " back \ slash`, "<b>&amp;</b>", "tab\tnl\n\x00", "héllo 🍞", "\u2028\u2029", "bad \xff utf8"} {
		crumbs = append(crumbs, deltaCases("writer", "run-1", "sess", d, 1700000000000, 7)...)
	}
	crumbs = append(crumbs, deltaCases("", "", "", "x", 0, 0)...)
	crumbs = append(crumbs, deltaCases("a<b", "r\"1", "s\\", "x", -5, -1)...)
	crumbs = append(crumbs, &core.AgentRunEnd{CrumbBase: core.CrumbBase{AgentID: "a", RunID: "r", Seq: 3}, Output: "done"})
	crumbs = append(crumbs, runStartEndCases()...)
	matchesEncodingJSON(t, crumbs)
}

// runStartEndCases are a run's start and end with every kind of input and
// output, usage and files, and strings JSON escapes.
func runStartEndCases() []core.Crumb {
	base := core.CrumbBase{AgentID: "writer", RunID: "run-1", SessionID: "sess", Timestamp: 1700000000000, Seq: 2}
	values := []any{
		nil, "", "plain", "<b>&\u2028\"\xff", json.RawMessage(` {"a": [1, 2], "h": "<&>"} `), json.RawMessage(`"hi"`), json.RawMessage(`""`),
		json.RawMessage(`"a\"b"`), json.RawMessage(`"<"`), json.RawMessage(`"tab\tx"`), json.RawMessage(`"é"`), json.RawMessage(` "hi"`),
		json.RawMessage(`"hi" `), json.RawMessage(`12`),
		map[string]any{"z": 1, "a": "<x>"}, []string{"a"}, 3.5, true, (*core.Usage)(nil), &core.Usage{InputTokens: 1},
	}
	var out []core.Crumb
	for _, v := range values {
		out = append(out,
			&core.AgentRunStart{CrumbBase: base, Input: v},
			&core.AgentRunStart{CrumbBase: core.CrumbBase{AgentID: "a<"}, Input: v, Skill: "sk\"", ParentRunID: "p&"},
			&core.AgentRunEnd{CrumbBase: base, Output: v, DurationMs: 12},
			&core.AgentRunEnd{CrumbBase: core.CrumbBase{}, Output: v, DurationMs: -1,
				Usage: &core.Usage{InputTokens: 3, OutputTokens: 4, TotalTokens: 7}, ModelCalls: []core.Usage{{InputTokens: 1}, {}, {TotalTokens: 2}}},
			&core.AgentRunEnd{CrumbBase: base, Output: v, Usage: &core.Usage{}, ModelCalls: []core.Usage{}},
			&core.AgentRunEnd{CrumbBase: base, Output: v, Files: []core.FileOutput{{}}},
		)
	}
	return out
}

// A value json.Marshal refuses fails AppendCrumbJSON as it fails
// json.Marshal, and appends nothing.
func TestAppendCrumbJSONRefusesWhatEncodingJSONRefuses(t *testing.T) {
	for _, c := range []core.Crumb{
		&core.AgentRunStart{Input: make(chan int)},
		&core.AgentRunEnd{Output: func() {}},
		&core.AgentRunEnd{Output: json.RawMessage(`{bad`)},
		&core.AgentRunStart{Input: json.RawMessage(`"`)},
		&core.AgentRunStart{Input: json.RawMessage(`"a"b"`)},
		&core.AgentRunStart{Input: json.RawMessage(`"a" "b"`)},
	} {
		if _, err := json.Marshal(c); err == nil {
			t.Fatalf("json.Marshal(%#v) did not fail", c)
		}
		got, err := httpstream.AppendCrumbJSON([]byte("prefix"), c)
		if err == nil || string(got) != "prefix" {
			t.Errorf("AppendCrumbJSON(%#v) = %q, %v; want prefix and an error", c, got, err)
		}
	}
}

// Every crumb type, as the golden files of core hold them and with
// characters JSON escapes in every string, encodes as json.Marshal would;
// so does a nil crumb pointer.
func TestAppendCrumbJSONMatchesEncodingJSONForEveryType(t *testing.T) {
	files, err := filepath.Glob("../../core/testdata/crumbs/*.json")
	if err != nil || len(files) < 20 {
		t.Fatalf("golden crumbs: %v, %d files", err, len(files))
	}
	crumbs := []core.Crumb{(*core.AgentRunStart)(nil), (*core.TextDelta)(nil)}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		escaped := raw
		for _, key := range []string{"agentId", "delta", "message", "toolName", "output", "input"} {
			escaped = bytes.ReplaceAll(escaped, []byte(`"`+key+`": "`), []byte(`"`+key+`": "<b>&\u2028\"`))
		}
		if bytes.Equal(escaped, raw) {
			t.Fatalf("%s: no string to add escapes to", f)
		}
		for _, variant := range [][]byte{raw, escaped} {
			c, err := core.DecodeCrumb(variant)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			crumbs = append(crumbs, c)
		}
	}
	matchesEncodingJSON(t, crumbs)
}

func FuzzAppendCrumbJSON(f *testing.F) {
	f.Add("writer", "run", "sess", "hello", int64(1), int64(2))
	f.Add("", "", "", "<&>\"\\\x00\xff", int64(0), int64(0))
	f.Fuzz(func(t *testing.T, agent, run, session, delta string, ts, seq int64) {
		for _, c := range deltaCases(agent, run, session, delta, ts, seq) {
			want, err := json.Marshal(c)
			if err != nil {
				t.Fatal(err)
			}
			got, err := httpstream.AppendCrumbJSON(nil, c)
			if err != nil || string(got) != string(want) {
				t.Fatalf("got %s want %s", got, want)
			}
		}
	})
}
