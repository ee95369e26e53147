package mcpserver

import (
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/crumbtest"
)

// progressMessages is the progress notification each crumb type of a run
// becomes (every one becomes one: progress counts the crumbs), as the
// README's Progress paragraph says.
var progressMessages = map[string]string{
	core.TypeAgentRunStart:      "agent:run:start",
	core.TypeTextDelta:          "text:delta: Hello",
	core.TypeReasoningDelta:     "reasoning:delta",
	core.TypeFileGenerated:      "file:generated",
	core.TypeToolCall:           "tool:call lookup",
	core.TypeToolInputStart:     "tool:input:start",
	core.TypeToolInputDelta:     "tool:input:delta",
	core.TypeToolInputEnd:       "tool:input:end",
	core.TypeToolResult:         "tool:result lookup",
	core.TypeToolResultPartial:  "tool:result:partial",
	core.TypeToolError:          "tool:error fetch: TOOL_ERROR",
	core.TypeHumanRequired:      "human:required pick_day",
	core.TypeHumanResumed:       "human:resumed",
	core.TypeSubagentRunStart:   "subagent:run:start agent-1",
	core.TypeSubagentRunEnd:     "subagent:run:end",
	core.TypePipelineStepStart:  "pipeline:step:start",
	core.TypePipelineStepEnd:    "pipeline:step:end",
	core.TypeLoopStart:          "loop:start",
	core.TypeLoopIterationStart: "loop:iteration:start",
	core.TypeLoopIterationEnd:   "loop:iteration:end",
	core.TypeLoopEnd:            "loop:end",
	core.TypeTaskStart:          "task:start",
	core.TypeTaskEnd:            "task:end",
	core.TypeAgentRunEnd:        "agent:run:end",
	core.TypeAgentError:         "agent:error: PROVIDER_ERROR",
}

// TestEveryCrumbTypeIsDecided: every crumb type has its progress message,
// the same for a crumb read back from a crumb log, and a crumb without its
// error does not break the stream's notifications.
func TestEveryCrumbTypeIsDecided(t *testing.T) {
	crumbtest.CheckDecisions(t, "mcpserver progress", progressMessages)
	for _, c := range crumbtest.Samples() {
		want, ok := progressMessages[c.CrumbType()]
		if !ok {
			continue
		}
		if got := progressMessage(c); got != want {
			t.Errorf("%s: progress %q, the table says %q", c.CrumbType(), got, want)
		}
		if got := progressMessage(crumbtest.Decoded(t, c)); got != want {
			t.Errorf("%s: a decoded crumb's progress is %q", c.CrumbType(), got)
		}
	}
	if got := progressMessage(&core.ToolError{ToolName: "x"}); got != "tool:error x" {
		t.Errorf("a tool:error without its error: %q", got)
	}
}
