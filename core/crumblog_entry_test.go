package core_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/breadai/bread/core"
)

func TestCrumbLogEntryJSONRoundTrip(t *testing.T) {
	entry := core.CrumbLogEntry{
		RunID: "run_1", Seq: 7, SessionID: "sess_1", AgentID: "echo", Type: core.TypeTextDelta,
		Crumb: &core.TextDelta{
			CrumbBase: core.CrumbBase{AgentID: "echo", RunID: "run_1", SessionID: "sess_1", Timestamp: 1718035200000, Seq: 7},
			Delta:     "Hello, world",
		},
		CreatedAt: 1718035200123,
	}
	b, err := json.Marshal(entry)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"runId":"run_1","seq":7,"sessionId":"sess_1","agentId":"echo","type":"text:delta",` +
		`"crumb":{"type":"text:delta","agentId":"echo","runId":"run_1","sessionId":"sess_1","timestamp":1718035200000,"seq":7,"delta":"Hello, world"},` +
		`"createdAt":1718035200123}`
	eq(t, "JSON", string(b), want)

	var back core.CrumbLogEntry
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, entry) {
		t.Errorf("round trip = %#v, want %#v", back, entry)
	}
}

// Every golden crumb survives a trip through an entry, as it would through a
// store that keeps entries as JSON.
func TestCrumbLogEntryCarriesEveryCrumbType(t *testing.T) {
	for _, path := range goldenFiles(t) {
		golden := readFile(t, path)
		c, err := core.DecodeCrumb(golden)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		crumbJSON, _ := json.Marshal(c)
		b, err := json.Marshal(core.CrumbLogEntry{RunID: "r", Seq: 3, Type: c.CrumbType(), Crumb: c, CreatedAt: 9})
		if err != nil {
			t.Fatalf("%s: marshal entry: %v", path, err)
		}
		var back core.CrumbLogEntry
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%s: unmarshal entry: %v", path, err)
		}
		if back.Crumb == nil || back.Crumb.CrumbType() != c.CrumbType() {
			t.Fatalf("%s: crumb came back as %#v", path, back.Crumb)
		}
		if reflect.TypeOf(back.Crumb) != reflect.TypeOf(c) {
			t.Errorf("%s: crumb decoded as %T, want %T", path, back.Crumb, c)
		}
		again, _ := json.Marshal(back.Crumb)
		if !bytes.Equal(again, crumbJSON) {
			t.Errorf("%s: crumb changed\n got: %s\nwant: %s", path, again, crumbJSON)
		}
		b2, _ := json.Marshal(back)
		if !bytes.Equal(b, b2) {
			t.Errorf("%s: entry encoding not stable\nfirst:  %s\nsecond: %s", path, b, b2)
		}
	}
}

func TestCrumbLogEntryUnmarshal(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want core.CrumbLogEntry
	}{
		{"null crumb", `{"runId":"r","seq":2,"type":"text:delta","crumb":null,"createdAt":5}`,
			core.CrumbLogEntry{RunID: "r", Seq: 2, Type: "text:delta", CreatedAt: 5}},
		{"absent crumb", `{"runId":"r","seq":2,"agentId":"a","sessionId":"s","type":"agent:run:start","createdAt":5}`,
			core.CrumbLogEntry{RunID: "r", Seq: 2, AgentID: "a", SessionID: "s", Type: "agent:run:start", CreatedAt: 5}},
		{"empty object", `{}`, core.CrumbLogEntry{}},
		{"crumb with its own fields", `{"runId":"r","seq":1,"type":"loop:iteration:start","createdAt":1,` +
			`"crumb":{"type":"loop:iteration:start","agentId":"a","runId":"r","timestamp":4,"seq":1,"loopId":"l","iteration":2}}`,
			core.CrumbLogEntry{RunID: "r", Seq: 1, Type: "loop:iteration:start", CreatedAt: 1,
				Crumb: &core.LoopIterationStart{CrumbBase: core.CrumbBase{AgentID: "a", RunID: "r", Timestamp: 4, Seq: 1}, LoopID: "l", Iteration: 2}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Unmarshal must replace a previous crumb, not keep it.
			got := core.CrumbLogEntry{Crumb: &core.TextDelta{Delta: "stale"}, Seq: 99}
			if err := json.Unmarshal([]byte(tc.in), &got); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %#v, want %#v", got, tc.want)
			}
		})
	}
}

func TestCrumbLogEntryUnmarshalMalformedCrumb(t *testing.T) {
	for _, tc := range []struct {
		name  string
		crumb string
	}{
		{"unknown type", `{"type":"nope","agentId":"a","timestamp":1}`},
		{"no type", `{"agentId":"a","timestamp":1}`},
		{"wrong field kind", `{"type":"text:delta","agentId":"a","timestamp":1,"delta":5}`},
		{"a string", `"text:delta"`},
		{"an array", `[1]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := `{"runId":"r","seq":1,"type":"text:delta","crumb":` + tc.crumb + `,"createdAt":1}`
			var e core.CrumbLogEntry
			err := json.Unmarshal([]byte(in), &e)
			assertDecodeError(t, err, []byte(tc.crumb))
		})
	}
	// A malformed entry field is an error too (from encoding/json).
	var e core.CrumbLogEntry
	if err := json.Unmarshal([]byte(`{"runId":"r","seq":"one","crumb":null}`), &e); err == nil {
		t.Error("a string seq decoded without error")
	}
}

func TestCrumbLogEntrySlice(t *testing.T) {
	in := `[{"runId":"r","seq":1,"type":"text:delta",` +
		`"crumb":{"type":"text:delta","agentId":"a","runId":"r","timestamp":1,"seq":1,"delta":"Hel"},"createdAt":1},` +
		`{"runId":"r","seq":2,"type":"agent:run:end",` +
		`"crumb":{"type":"agent:run:end","agentId":"a","runId":"r","timestamp":2,"seq":2,"output":{"n":12345678901234567890},"durationMs":4},"createdAt":2}]`
	var entries []core.CrumbLogEntry
	if err := json.Unmarshal([]byte(in), &entries); err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		t.Fatalf("%d entries", len(entries))
	}
	eq(t, "delta", as[*core.TextDelta](t, entries[0].Crumb).Delta, "Hel")
	assertPayload(t, "output", as[*core.AgentRunEnd](t, entries[1].Crumb).Output, `{"n":12345678901234567890}`)
	out, _ := json.Marshal(entries)
	eq(t, "re-encoded", string(out), in)
}
