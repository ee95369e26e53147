package a2ui_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/crumbtest"
	"github.com/breadai/bread/extensions/a2ui"
)

// decisions is the component each crumb type becomes (the README's
// mapping table); nil: deliberately none, for the reason in dropped.
var decisions = map[string][]a2ui.ComponentType{
	core.TypeAgentRunStart:      {a2ui.Progress},
	core.TypeTextDelta:          {a2ui.Markdown},
	core.TypeReasoningDelta:     {a2ui.Text},
	core.TypeFileGenerated:      {a2ui.File},
	core.TypeToolCall:           {a2ui.Card},
	core.TypeToolInputStart:     nil,
	core.TypeToolInputDelta:     nil,
	core.TypeToolInputEnd:       nil,
	core.TypeToolResult:         {a2ui.Card},
	core.TypeToolResultPartial:  nil,
	core.TypeToolError:          {a2ui.Error},
	core.TypeHumanRequired:      {a2ui.Form},
	core.TypeHumanResumed:       {a2ui.Progress},
	core.TypeSubagentRunStart:   {a2ui.Progress},
	core.TypeSubagentRunEnd:     {a2ui.Progress},
	core.TypePipelineStepStart:  {a2ui.Progress},
	core.TypePipelineStepEnd:    {a2ui.Progress},
	core.TypeLoopStart:          {a2ui.Progress},
	core.TypeLoopIterationStart: {a2ui.Progress},
	core.TypeLoopIterationEnd:   {a2ui.Progress},
	core.TypeLoopEnd:            {a2ui.Progress},
	core.TypeTaskStart:          {a2ui.Progress},
	core.TypeTaskEnd:            {a2ui.Progress},
	core.TypeAgentRunEnd:        {a2ui.Progress},
	core.TypeAgentError:         {a2ui.Error},
}

// dropped says why a crumb type has no component.
var dropped = map[string]string{
	core.TypeToolInputStart:    "a tool call's arguments as they stream: the tool:call card shows them whole",
	core.TypeToolInputDelta:    "a tool call's arguments as they stream: the tool:call card shows them whole",
	core.TypeToolInputEnd:      "a tool call's arguments as they stream: the tool:call card shows them whole",
	core.TypeToolResultPartial: "a streaming tool's intermediate value: the tool:result card shows the last",
}

// TestEveryCrumbTypeIsDecided: the table decides every crumb type, Map
// does what it says, and a crumb read back from a crumb log (payloads raw
// JSON) gives the same specs as the live one.
func TestEveryCrumbTypeIsDecided(t *testing.T) {
	crumbtest.CheckDecisions(t, "a2ui", decisions)
	for _, c := range crumbtest.Samples() {
		typ := c.CrumbType()
		want, ok := decisions[typ]
		if !ok {
			continue
		}
		if (want == nil) != (dropped[typ] != "") {
			t.Errorf("%s: a crumb without a component needs a reason in dropped, and only such a crumb", typ)
		}
		live := a2ui.Map(c)
		var got []a2ui.ComponentType
		for _, s := range live {
			got = append(got, s.Type)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: components %v, the table says %v", typ, got, want)
		}
		a, _ := json.Marshal(live)
		b, _ := json.Marshal(a2ui.Map(crumbtest.Decoded(t, c)))
		if string(a) != string(b) {
			t.Errorf("%s: a decoded crumb maps otherwise\n live: %s\n  log: %s", typ, a, b)
		}
	}
}
