package stdout_test

import (
	"bytes"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/crumbtest"
	"github.com/breadai/bread/transports/stdout"
)

// rendering is what a Printer writes for one crumb type (the README's
// table): whether anything is written by default, with Verbose, and with
// Reasoning.
type rendering struct{ plain, verbose, reasoning bool }

var (
	always  = rendering{plain: true, verbose: true, reasoning: true}
	framing = rendering{verbose: true}
	never   = rendering{}
)

var decisions = map[string]rendering{
	core.TypeAgentRunStart:      framing,
	core.TypeTextDelta:          always,
	core.TypeReasoningDelta:     {reasoning: true},
	core.TypeFileGenerated:      always,
	core.TypeToolCall:           always,
	core.TypeToolInputStart:     never, // the tool:call line shows the arguments whole
	core.TypeToolInputDelta:     never,
	core.TypeToolInputEnd:       never,
	core.TypeToolResult:         always,
	core.TypeToolResultPartial:  always,
	core.TypeToolError:          always,
	core.TypeHumanRequired:      always,
	core.TypeHumanResumed:       always,
	core.TypeSubagentRunStart:   framing,
	core.TypeSubagentRunEnd:     framing,
	core.TypePipelineStepStart:  framing,
	core.TypePipelineStepEnd:    framing,
	core.TypeLoopStart:          framing,
	core.TypeLoopIterationStart: framing,
	core.TypeLoopIterationEnd:   framing,
	core.TypeLoopEnd:            framing,
	core.TypeTaskStart:          framing,
	core.TypeTaskEnd:            framing,
	core.TypeAgentRunEnd:        framing, // and a line break after streamed text
	core.TypeAgentError:         always,
}

// TestEveryCrumbTypeIsDecided: the table decides every crumb type, the
// Printer does what it says in each mode, and a crumb read back from a
// crumb log prints as the live one.
func TestEveryCrumbTypeIsDecided(t *testing.T) {
	crumbtest.CheckDecisions(t, "stdout", decisions)
	print := func(o stdout.Options, c core.Crumb) string {
		var buf bytes.Buffer
		o.Writer, o.Color = &buf, stdout.ColorNever
		if err := stdout.New(o).Print(c); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	for _, c := range crumbtest.Samples() {
		typ := c.CrumbType()
		want, ok := decisions[typ]
		if !ok {
			continue
		}
		for _, mode := range []struct {
			name string
			opts stdout.Options
			want bool
		}{
			{"plain", stdout.Options{}, want.plain},
			{"verbose", stdout.Options{Verbose: true}, want.verbose},
			{"reasoning", stdout.Options{Reasoning: true}, want.reasoning},
		} {
			live := print(mode.opts, c)
			if (live != "") != mode.want {
				t.Errorf("%s (%s): printed %q, the table says printed: %v", typ, mode.name, live, mode.want)
			}
			if decoded := print(mode.opts, crumbtest.Decoded(t, c)); decoded != live {
				t.Errorf("%s (%s): a decoded crumb prints %q, the live one %q", typ, mode.name, decoded, live)
			}
		}
	}
}
