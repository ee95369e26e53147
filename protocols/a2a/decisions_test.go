package a2a

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/crumbtest"
)

// decisions is the A2A event each crumb type of a task's own run becomes
// (artifact:<id suffix>, status:<state>[:final]); nil: deliberately none,
// for the reason in dropped. The README's Methods section says it in
// words.
var decisions = map[string][]string{
	core.TypeAgentRunStart:      nil,
	core.TypeTextDelta:          {"artifact:text"},
	core.TypeReasoningDelta:     nil,
	core.TypeFileGenerated:      {"artifact:file-1"},
	core.TypeToolCall:           nil,
	core.TypeToolInputStart:     nil,
	core.TypeToolInputDelta:     nil,
	core.TypeToolInputEnd:       nil,
	core.TypeToolResult:         nil,
	core.TypeToolResultPartial:  nil,
	core.TypeToolError:          nil,
	core.TypeHumanRequired:      {"status:input-required:final"},
	core.TypeHumanResumed:       {"status:working"},
	core.TypeSubagentRunStart:   nil,
	core.TypeSubagentRunEnd:     nil,
	core.TypePipelineStepStart:  nil,
	core.TypePipelineStepEnd:    nil,
	core.TypeLoopStart:          nil,
	core.TypeLoopIterationStart: nil,
	core.TypeLoopIterationEnd:   nil,
	core.TypeLoopEnd:            nil,
	core.TypeTaskStart:          nil,
	core.TypeTaskEnd:            nil,
	core.TypeAgentRunEnd:        {"artifact:file-1", "artifact:output", "status:completed:final"},
	core.TypeAgentError:         {"status:failed:final"},
}

const (
	steps = "a task shows what it produced, not how: tool calls, delegations, pipeline steps, loops and tasks inside the run are not A2A events"
)

var dropped = map[string]string{
	core.TypeAgentRunStart:      "the task itself is the start: message/send and message/stream answer with it",
	core.TypeReasoningDelta:     "A2A has no channel for a model's thinking; only the answer is an artifact",
	core.TypeToolCall:           steps,
	core.TypeToolInputStart:     steps,
	core.TypeToolInputDelta:     steps,
	core.TypeToolInputEnd:       steps,
	core.TypeToolResult:         steps,
	core.TypeToolResultPartial:  steps,
	core.TypeToolError:          steps,
	core.TypeSubagentRunStart:   steps,
	core.TypeSubagentRunEnd:     steps,
	core.TypePipelineStepStart:  steps,
	core.TypePipelineStepEnd:    steps,
	core.TypeLoopStart:          steps,
	core.TypeLoopIterationStart: steps,
	core.TypeLoopIterationEnd:   steps,
	core.TypeLoopEnd:            steps,
	core.TypeTaskStart:          steps,
	core.TypeTaskEnd:            steps,
}

// TestEveryCrumbTypeIsDecided: the table decides every crumb type, the
// mapper does what it says, and a crumb read back from a SQL crumb log
// (payloads raw JSON) maps to the same events as the live one: what
// tasks/get builds is what message/send answered.
func TestEveryCrumbTypeIsDecided(t *testing.T) {
	crumbtest.CheckDecisions(t, "a2a", decisions)
	info := taskInfo(crumbtest.RunID, crumbtest.SessionID)
	for _, c := range crumbtest.Samples() {
		typ := c.CrumbType()
		want, ok := decisions[typ]
		if !ok {
			continue
		}
		if (want == nil) != (dropped[typ] != "") {
			t.Errorf("%s: a crumb without an event needs a reason in dropped, and only such a crumb", typ)
		}
		live, names := mapOne(t, newMapper(info, nil), c)
		if !slices.Equal(names, want) {
			t.Errorf("%s: events %v, the table says %v", typ, names, want)
		}
		if decoded, _ := mapOne(t, newMapper(info, nil), crumbtest.Decoded(t, c)); decoded != live {
			t.Errorf("%s: a decoded crumb maps otherwise\n live: %s\n  log: %s", typ, live, decoded)
		}
	}
}

// mapOne maps c on a fresh mapper and returns its events as JSON without
// their times, and their names.
func mapOne(t *testing.T, m *mapper, c core.Crumb) (string, []string) {
	t.Helper()
	evs, _ := m.events(c, true)
	var names []string
	for _, ev := range evs {
		switch v := ev.(type) {
		case *a2a.TaskArtifactUpdateEvent:
			names = append(names, "artifact:"+string(v.Artifact.ID)[len(m.info.TaskID)+1:])
		case *a2a.TaskStatusUpdateEvent:
			name := "status:" + string(v.Status.State)
			if v.Final {
				name += ":final"
			}
			names = append(names, name)
			v.Status.Timestamp = nil
			if v.Status.Message != nil {
				v.Status.Message.ID = ""
			}
		}
	}
	b, err := json.Marshal(evs)
	if err != nil {
		t.Fatal(err)
	}
	return string(b), names
}
