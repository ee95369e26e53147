package crumbtest

import (
	"slices"
	"testing"

	"github.com/breadai/bread/core"
)

// The ids every sample carries.
const (
	RunID     = "run-1"
	SessionID = "session-1"
	AgentID   = "agent-1"
)

// Samples returns one crumb of every type of core.CrumbTypes, in that
// order, every field set with plain Go values (as a live run makes them),
// all of run RunID, session SessionID and agent AgentID, timestamps and
// seqs counting up from 1. Each call builds new crumbs.
func Samples() []core.Crumb {
	var seq int64
	base := func() core.CrumbBase {
		seq++
		return core.CrumbBase{AgentID: AgentID, RunID: RunID, SessionID: SessionID, Timestamp: seq, Seq: seq}
	}
	return []core.Crumb{
		&core.AgentRunStart{CrumbBase: base(), Input: "Plan my visit", Skill: "planning"},
		&core.TextDelta{CrumbBase: base(), Delta: "Hello"},
		&core.ReasoningDelta{CrumbBase: base(), Delta: "The user wants a plan."},
		&core.FileGenerated{CrumbBase: base(), URI: "bread://blob/chart", MimeType: "image/png", Name: "chart.png"},
		&core.ToolCall{CrumbBase: base(), ToolCallID: "call-1", ToolName: "lookup", Args: map[string]any{"q": "bread", "n": 2}},
		&core.ToolInputStart{CrumbBase: base(), ToolCallID: "call-2", ToolName: "lookup"},
		&core.ToolInputDelta{CrumbBase: base(), ToolCallID: "call-2", Delta: `{"q":"rye"}`},
		&core.ToolInputEnd{CrumbBase: base(), ToolCallID: "call-2"},
		&core.ToolResult{CrumbBase: base(), ToolCallID: "call-1", ToolName: "lookup", Result: map[string]any{"hits": []any{"rye", "spelt"}}, DurationMs: 12},
		&core.ToolResultPartial{CrumbBase: base(), ToolCallID: "call-1", ToolName: "lookup", Result: map[string]any{"hits": []any{"rye"}}},
		&core.ToolError{CrumbBase: base(), ToolCallID: "call-3", ToolName: "fetch", DurationMs: 7,
			Error: &core.BreadError{Code: core.CodeToolError, Message: "the site is down"}},
		&core.HumanRequired{CrumbBase: base(), CheckpointID: "cp-1", ToolName: "pick_day", Schema: map[string]any{"days": []any{"Sat", "Sun"}},
			Prompt: "Which day suits you?", Kind: core.HumanInput},
		&core.HumanResumed{CrumbBase: base(), CheckpointID: "cp-1", Response: map[string]any{"day": "Sat"}, Kind: core.HumanInput},
		&core.SubagentRunStart{CrumbBase: base(), ParentAgentID: "planner", SubagentID: AgentID},
		&core.SubagentRunEnd{CrumbBase: base(), ParentAgentID: "planner", SubagentID: AgentID, Output: "a draft"},
		&core.PipelineStepStart{CrumbBase: base(), PipelineID: "pipe-1", StepIndex: 0},
		&core.PipelineStepEnd{CrumbBase: base(), PipelineID: "pipe-1", StepIndex: 0, Output: "step output"},
		&core.LoopStart{CrumbBase: base(), LoopID: "loop-1", Pipeline: []string{"writer", "critic"}, MaxIterations: 3},
		&core.LoopIterationStart{CrumbBase: base(), LoopID: "loop-1", Iteration: 1},
		&core.LoopIterationEnd{CrumbBase: base(), LoopID: "loop-1", Iteration: 1, Output: "iteration output"},
		&core.LoopEnd{CrumbBase: base(), LoopID: "loop-1", Status: core.LoopCompleted, Iterations: 1, Result: "loop result"},
		&core.TaskStart{CrumbBase: base(), TaskRunID: "task-run-1", TaskID: "extract", Model: core.TaskModelInfo{Provider: "openai", Model: "gpt-x"}},
		&core.TaskEnd{CrumbBase: base(), TaskRunID: "task-run-1", TaskID: "extract", Status: core.TaskCompleted, DurationMs: 40,
			Usage: &core.Usage{InputTokens: 10, OutputTokens: 5, TotalTokens: 15}},
		&core.AgentRunEnd{CrumbBase: base(), Output: "Saturday at the market", DurationMs: 1200,
			Files:      []core.FileOutput{{URI: "bread://blob/chart", MimeType: "image/png", Name: "chart.png"}},
			Usage:      &core.Usage{InputTokens: 30, OutputTokens: 12, TotalTokens: 42},
			ModelCalls: []core.Usage{{InputTokens: 10, OutputTokens: 4, TotalTokens: 14}, {InputTokens: 20, OutputTokens: 8, TotalTokens: 28}}},
		&core.AgentError{CrumbBase: base(), Error: &core.BreadError{Code: core.CodeProviderError, Message: "the model is unavailable"}},
	}
}

// Sample is the sample of one crumb type, nil for a type core does not
// list.
func Sample(typ string) core.Crumb {
	for _, c := range Samples() {
		if c.CrumbType() == typ {
			return c
		}
	}
	return nil
}

// Decoded is c after a round trip through its wire form: what a SQL crumb
// log or a bus gives back, payloads (inputs, outputs, arguments, results,
// schemas, responses) as json.RawMessage instead of Go values.
func Decoded(tb testing.TB, c core.Crumb) core.Crumb {
	tb.Helper()
	raw, err := core.EncodeCrumb(c)
	if err != nil {
		tb.Fatalf("encode %s: %v", c.CrumbType(), err)
	}
	out, err := core.DecodeCrumb(raw)
	if err != nil {
		tb.Fatalf("decode %s: %v", c.CrumbType(), err)
	}
	return out
}

// CheckDecisions fails tb for every crumb type of core.CrumbTypes that
// decisions does not name (a type added to core that the mapper has not
// decided: map it, or drop it explicitly with an entry that says so) and
// for every entry that names no crumb type. mapper names the table in the
// messages.
func CheckDecisions[V any](tb testing.TB, mapper string, decisions map[string]V) {
	tb.Helper()
	types := core.CrumbTypes()
	for _, typ := range types {
		if _, ok := decisions[typ]; !ok {
			tb.Errorf("%s: crumb type %q has no mapping decision: add it to the table, mapped or deliberately dropped", mapper, typ)
		}
	}
	for typ := range decisions {
		if !slices.Contains(types, typ) {
			tb.Errorf("%s: the table decides %q, which is no crumb type", mapper, typ)
		}
	}
}
