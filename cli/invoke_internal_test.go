package cli

import (
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/crumbtest"
)

// invokeDecision is what bread invoke does with one crumb type of the
// invoked agent's run, and whether --trace prints it.
type invokeDecision struct {
	step   invokeStep
	traced bool
}

var invokeDecisions = map[string]invokeDecision{
	core.TypeAgentRunStart:      {},
	core.TypeTextDelta:          {step: invokeText},
	core.TypeReasoningDelta:     {}, // invoke prints the answer, not the thinking
	core.TypeFileGenerated:      {}, // the output names the files it keeps
	core.TypeToolCall:           {traced: true},
	core.TypeToolInputStart:     {}, // --trace prints the call whole, at tool:call
	core.TypeToolInputDelta:     {},
	core.TypeToolInputEnd:       {},
	core.TypeToolResult:         {traced: true},
	core.TypeToolResultPartial:  {traced: true},
	core.TypeToolError:          {traced: true},
	core.TypeHumanRequired:      {step: invokeNeedsHuman},
	core.TypeHumanResumed:       {}, // invoke never resumes
	core.TypeSubagentRunStart:   {}, // framing: the run's own text and output are what invoke prints
	core.TypeSubagentRunEnd:     {},
	core.TypePipelineStepStart:  {},
	core.TypePipelineStepEnd:    {},
	core.TypeLoopStart:          {},
	core.TypeLoopIterationStart: {},
	core.TypeLoopIterationEnd:   {},
	core.TypeLoopEnd:            {},
	core.TypeTaskStart:          {},
	core.TypeTaskEnd:            {},
	core.TypeAgentRunEnd:        {step: invokeOutput},
	core.TypeAgentError:         {}, // the stream's error ends invoke with ExitFailure
}

// TestInvokeDecidesEveryCrumbType: the table decides every crumb type, and
// invoke does what it says; another agent's text and output (a
// delegation's) are not the invoked agent's.
func TestInvokeDecidesEveryCrumbType(t *testing.T) {
	crumbtest.CheckDecisions(t, "bread invoke", invokeDecisions)
	for _, c := range crumbtest.Samples() {
		want, ok := invokeDecisions[c.CrumbType()]
		if !ok {
			continue
		}
		if got := invokeStepOf(c, crumbtest.AgentID); got != want.step {
			t.Errorf("%s: step %d, the table says %d", c.CrumbType(), got, want.step)
		}
		if got := isToolCrumb(c); got != want.traced {
			t.Errorf("%s: --trace prints it: %v, the table says %v", c.CrumbType(), got, want.traced)
		}
	}
	for _, typ := range []string{core.TypeTextDelta, core.TypeAgentRunEnd} {
		if got := invokeStepOf(crumbtest.Sample(typ), "another-agent"); got != invokeSkips {
			t.Errorf("%s of a delegated agent: step %d, want it skipped", typ, got)
		}
	}
}
