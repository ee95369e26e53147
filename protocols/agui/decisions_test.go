package agui_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/crumbtest"
	"github.com/breadai/bread/protocols/agui"
)

// decision is what one crumb type becomes: the events the crumb maps to
// (End's included) once its run is under way and the crumbs named in
// before have passed. nil events: deliberately nothing.
type decision struct {
	events []events.EventType
	fresh  bool     // mapped on a new stream, no run started before it
	before []string // crumb types mapped first (their events not counted)
	why    string   // for a crumb deliberately dropped
}

// decisions is the mapper's answer for every crumb type; the README's
// "Crumb → event mapping" table says the same in words.
var decisions = map[string]decision{
	core.TypeAgentRunStart:      {events: evs(events.EventTypeRunStarted), fresh: true},
	core.TypeTextDelta:          {events: evs(events.EventTypeTextMessageStart, events.EventTypeTextMessageContent)},
	core.TypeReasoningDelta:     {events: evs(events.EventTypeReasoningStart, events.EventTypeReasoningMessageStart, events.EventTypeReasoningMessageContent)},
	core.TypeFileGenerated:      {events: evs(events.EventTypeCustom)},
	core.TypeToolCall:           {events: evs(events.EventTypeToolCallStart, events.EventTypeToolCallArgs, events.EventTypeToolCallEnd)},
	core.TypeToolInputStart:     {events: evs(events.EventTypeToolCallStart)},
	core.TypeToolInputDelta:     {events: evs(events.EventTypeToolCallArgs), before: []string{core.TypeToolInputStart}},
	core.TypeToolInputEnd:       {events: evs(events.EventTypeToolCallEnd), before: []string{core.TypeToolInputStart, core.TypeToolInputDelta}},
	core.TypeToolResult:         {events: evs(events.EventTypeToolCallResult), before: []string{core.TypeToolCall}},
	core.TypeToolResultPartial:  {why: "AG-UI has no partial tool result; the tool:result that follows carries the value"},
	core.TypeToolError:          {events: evs(events.EventTypeToolCallResult)},
	core.TypeHumanRequired:      {events: evs(events.EventTypeRunFinished)},
	core.TypeHumanResumed:       {events: evs(events.EventTypeRunStarted), fresh: true},
	core.TypeSubagentRunStart:   {events: evs(events.EventTypeStepStarted, events.EventTypeStateSnapshot)},
	core.TypeSubagentRunEnd:     {events: evs(events.EventTypeStepFinished, events.EventTypeStateSnapshot), before: []string{core.TypeSubagentRunStart}},
	core.TypePipelineStepStart:  {events: evs(events.EventTypeStepStarted)},
	core.TypePipelineStepEnd:    {events: evs(events.EventTypeStepFinished), before: []string{core.TypePipelineStepStart}},
	core.TypeLoopStart:          {events: evs(events.EventTypeStateSnapshot)},
	core.TypeLoopIterationStart: {events: evs(events.EventTypeStepStarted, events.EventTypeStateSnapshot)},
	core.TypeLoopIterationEnd:   {events: evs(events.EventTypeStepFinished, events.EventTypeStateSnapshot), before: []string{core.TypeLoopIterationStart}},
	core.TypeLoopEnd:            {events: evs(events.EventTypeStateSnapshot)},
	core.TypeTaskStart:          {events: evs(events.EventTypeStepStarted, events.EventTypeStateSnapshot)},
	core.TypeTaskEnd:            {events: evs(events.EventTypeStepFinished, events.EventTypeStateSnapshot), before: []string{core.TypeTaskStart}},
	core.TypeAgentRunEnd:        {events: evs(events.EventTypeRunFinished)},
	core.TypeAgentError:         {events: evs(events.EventTypeRunError)},
}

func evs(ts ...events.EventType) []events.EventType { return ts }

// TestEveryCrumbTypeIsDecided: the table decides every crumb type, and
// the mapper does what it says, for a crumb as a live run makes it and as
// a crumb log gives it back (the same JSON, byte for byte). The events are
// testdata/crumb_types.golden, which the official client's schemas check
// (examples/examples_test, TestOfficialClients).
func TestEveryCrumbTypeIsDecided(t *testing.T) {
	crumbtest.CheckDecisions(t, "agui", decisions)
	var all bytes.Buffer
	for _, c := range crumbtest.Samples() {
		typ := c.CrumbType()
		d, ok := decisions[typ]
		if !ok {
			continue
		}
		if d.events == nil && d.why == "" {
			t.Errorf("%s: dropped without a reason", typ)
		}
		live := mapDecision(t, d, c)
		decoded := mapDecision(t, d, crumbtest.Decoded(t, c))
		if !bytes.Equal(live.json, decoded.json) {
			t.Errorf("%s: a decoded crumb maps otherwise\n live: %s\n  log: %s", typ, live.json, decoded.json)
		}
		if !slices.Equal(live.types, d.events) {
			t.Errorf("%s: events %v, the table says %v", typ, live.types, d.events)
		}
		all.WriteString("# " + typ + "\n")
		all.Write(live.json)
	}
	golden(t, "crumb_types", all.Bytes())
}

type mapped struct {
	types []events.EventType
	json  []byte
}

// mapDecision maps c as d says (a run started unless fresh, the crumbs of
// d.before first), then ends the stream; it returns the events of c and
// the end, checked against the client's ordering rules.
func mapDecision(t *testing.T, d decision, c core.Crumb) mapped {
	t.Helper()
	m := agui.NewMapper()
	var stream []map[string]any
	var out mapped
	add := func(evs []events.Event, count bool) {
		for _, e := range evs {
			line, err := json.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			var v map[string]any
			if err := json.Unmarshal(line, &v); err != nil {
				t.Fatal(err)
			}
			stream = append(stream, v)
			if count {
				out.types = append(out.types, e.Type())
				out.json = append(append(out.json, line...), '\n')
			}
		}
	}
	if !d.fresh {
		add(m.Map(crumbtest.Sample(core.TypeAgentRunStart)), false)
	}
	for _, typ := range d.before {
		add(m.Map(crumbtest.Sample(typ)), false)
	}
	add(m.Map(c), true)
	add(m.End(999), true)
	if err := verify(stream); err != nil {
		t.Errorf("%s: not a valid AG-UI sequence: %v", c.CrumbType(), err)
	}
	return out
}
