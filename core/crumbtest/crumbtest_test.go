package crumbtest_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/crumbtest"
)

// TestSamplesCoverEveryType: one sample per crumb type, in core's order, so
// a type added to core fails here first.
func TestSamplesCoverEveryType(t *testing.T) {
	samples := crumbtest.Samples()
	types := core.CrumbTypes()
	if len(samples) != len(types) {
		t.Fatalf("%d samples for %d crumb types", len(samples), len(types))
	}
	for i, c := range samples {
		if c.CrumbType() != types[i] {
			t.Errorf("sample %d is %s, want %s", i, c.CrumbType(), types[i])
		}
		if b := c.Base(); b.RunID != crumbtest.RunID || b.SessionID != crumbtest.SessionID || b.Seq != int64(i+1) {
			t.Errorf("sample %s has base %+v", c.CrumbType(), b)
		}
		if crumbtest.Sample(types[i]).CrumbType() != types[i] {
			t.Errorf("Sample(%q) is another type", types[i])
		}
	}
	if crumbtest.Sample("nope") != nil {
		t.Error("Sample of an unknown type is not nil")
	}
}

// TestDecodedKeepsTheWireForm: a decoded sample encodes as the sample did,
// its payloads now raw JSON.
func TestDecodedKeepsTheWireForm(t *testing.T) {
	for _, c := range crumbtest.Samples() {
		d := crumbtest.Decoded(t, c)
		a, _ := core.EncodeCrumb(c)
		b, _ := core.EncodeCrumb(d)
		if string(a) != string(b) {
			t.Errorf("%s: %s decodes to %s", c.CrumbType(), a, b)
		}
	}
	end := crumbtest.Decoded(t, crumbtest.Sample(core.TypeAgentRunEnd)).(*core.AgentRunEnd)
	if _, raw := end.Output.(json.RawMessage); !raw {
		t.Errorf("a decoded output is %T, want json.RawMessage", end.Output)
	}
}

// recorder is a testing.TB that keeps its errors.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, format)
}

func TestCheckDecisions(t *testing.T) {
	full := map[string]bool{}
	for _, typ := range core.CrumbTypes() {
		full[typ] = true
	}
	r := &recorder{TB: t}
	crumbtest.CheckDecisions(r, "full", full)
	if len(r.errs) != 0 {
		t.Fatalf("a complete table fails: %v", r.errs)
	}
	delete(full, core.TypeToolResultPartial)
	full["tool:result:someday"] = true
	r = &recorder{TB: t}
	crumbtest.CheckDecisions(r, "holed", full)
	if got := strings.Join(r.errs, "\n"); len(r.errs) != 2 || !strings.Contains(got, "no mapping decision") || !strings.Contains(got, "no crumb type") {
		t.Fatalf("a table missing a type and naming another: %v", r.errs)
	}
}
