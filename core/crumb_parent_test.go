package core_test

import (
	"bytes"
	"testing"

	"github.com/breadai/bread/core"
)

// TestAgentRunStartParentRunID: parentRunId is on the wire only when a run
// has a parent, and decodes back.
func TestAgentRunStartParentRunID(t *testing.T) {
	for _, c := range []struct {
		name   string
		parent string
		wire   bool
	}{
		{"a delegation", "run-parent", true},
		{"a top-level run", "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, err := core.EncodeCrumb(&core.AgentRunStart{CrumbBase: core.CrumbBase{AgentID: "a", RunID: "r"}, Input: "x", ParentRunID: c.parent})
			if err != nil {
				t.Fatal(err)
			}
			if got := bytes.Contains(b, []byte(`"parentRunId"`)); got != c.wire {
				t.Fatalf("%s: parentRunId on the wire = %v, want %v", b, got, c.wire)
			}
			back, err := core.DecodeCrumb(b)
			if err != nil {
				t.Fatal(err)
			}
			if got := back.(*core.AgentRunStart).ParentRunID; got != c.parent {
				t.Errorf("decoded parentRunId %q, want %q", got, c.parent)
			}
		})
	}
}
