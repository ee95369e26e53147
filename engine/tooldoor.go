package engine

import (
	"sync"

	"github.com/breadai/bread/core"
)

// toolEmit is the decision for one crumb type a tool hands its door: admit
// it (stamped with the tool's run) or refuse it, and why.
type toolEmit struct {
	admit bool
	why   string // why a refused type is the engine's own
}

// toolEmits decides, for every crumb type of core.CrumbTypes, whether a
// tool may emit it through core.ToolContext.Emit (TestToolEmitsDecideEveryType
// fails for a type added to core without a decision here). A tool adds what
// it made and how far it got; the run's lifecycle, the model's voice and the
// call's own crumbs are the engine's.
var toolEmits = map[string]toolEmit{
	core.TypeFileGenerated:     {admit: true},
	core.TypeToolResultPartial: {admit: true},

	core.TypeAgentRunStart:      {why: "it starts a run, which only the engine does"},
	core.TypeAgentRunEnd:        {why: "it ends the run, which only the engine does"},
	core.TypeAgentError:         {why: "it ends the run, which only the engine does; return an error instead"},
	core.TypeTextDelta:          {why: "it is the model's text"},
	core.TypeReasoningDelta:     {why: "it is the model's reasoning"},
	core.TypeToolCall:           {why: "the engine emits the tool's call"},
	core.TypeToolInputStart:     {why: "it streams the model's arguments"},
	core.TypeToolInputDelta:     {why: "it streams the model's arguments"},
	core.TypeToolInputEnd:       {why: "it streams the model's arguments"},
	core.TypeToolResult:         {why: "the engine emits the tool's result; return it instead"},
	core.TypeToolError:          {why: "the engine emits the tool's error; return an error instead"},
	core.TypeHumanRequired:      {why: "a run suspends for a human through a human tool"},
	core.TypeHumanResumed:       {why: "only a resume answers a human"},
	core.TypeSubagentRunStart:   {why: "delegation is the engine's"},
	core.TypeSubagentRunEnd:     {why: "delegation is the engine's"},
	core.TypePipelineStepStart:  {why: "pipelines are the engine's"},
	core.TypePipelineStepEnd:    {why: "pipelines are the engine's"},
	core.TypeLoopStart:          {why: "loops are the engine's"},
	core.TypeLoopIterationStart: {why: "loops are the engine's"},
	core.TypeLoopIterationEnd:   {why: "loops are the engine's"},
	core.TypeLoopEnd:            {why: "loops are the engine's"},
	core.TypeTaskStart:          {why: "tasks are the engine's"},
	core.TypeTaskEnd:            {why: "tasks are the engine's"},
}

// toolDoor is the core.ToolEmitter of one tool call. It stamps and checks
// what the tool emits, and it shuts when the tool returns: the channel
// behind send may be closed by then, so a late crumb is dropped rather
// than sent.
type toolDoor struct {
	r    *run
	call toolCall
	tool string // the tool's name as the model knows it

	mu     sync.Mutex // serialises sends and shut
	send   func(core.Crumb)
	closed bool
}

func (r *run) newToolDoor(call toolCall, tool string, send func(core.Crumb)) *toolDoor {
	return &toolDoor{r: r, call: call, tool: tool, send: send}
}

// Emit implements core.ToolEmitter for the tool: only the types toolEmits
// admits, stamped with the tool's run.
func (d *toolDoor) Emit(c core.Crumb) error {
	stamped, err := d.check(c)
	if err != nil {
		d.r.in.log.Warn("bread: a tool emitted a crumb it may not; it is dropped",
			append(runAttrs(d.r.id, d.r.agent.ID, d.r.sessionID), "tool", d.tool, "toolCallId", d.call.ID, "reason", err.Error())...)
		return err
	}
	return d.forward(stamped)
}

// check returns the crumb the door passes on for c: a copy of an admitted
// type, stamped with the tool's run (and call, for a partial result). A
// type only core defines is admitted, so a Crumb of the tool's own making
// whose CrumbType claims an admitted one is refused too.
func (d *toolDoor) check(c core.Crumb) (core.Crumb, error) {
	base := d.r.base()
	switch x := c.(type) {
	case *core.FileGenerated:
		if x != nil {
			out := *x
			out.CrumbBase = base
			return &out, nil
		}
	case *core.ToolResultPartial:
		if x != nil {
			out := *x
			out.CrumbBase, out.ToolCallID, out.ToolName = base, d.call.ID, d.tool
			return &out, nil
		}
	}
	if c == nil {
		return nil, &core.BreadError{Code: core.CodeToolEmitRefused, Message: "tool " + d.tool + " emitted no crumb"}
	}
	typ := c.CrumbType()
	why := "it is not a crumb type a tool may emit"
	if e, ok := toolEmits[typ]; ok && !e.admit {
		why = e.why
	}
	return nil, &core.BreadError{
		Code:    core.CodeToolEmitRefused,
		Message: "tool " + d.tool + " may not emit " + quoteTruncated(typ) + ": " + why,
		Context: map[string]any{"tool": d.tool, "crumbType": typ},
	}
}

// forward passes c on unchecked: the engine's built-in tools (tasks,
// loops, delegation) emit their own crumbs and those of the runs nested in
// them. Like Emit, it drops c once the tool has returned.
func (d *toolDoor) forward(c core.Crumb) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		d.r.in.log.Warn("bread: a tool emitted after it returned; the crumb is dropped",
			append(runAttrs(d.r.id, d.r.agent.ID, d.r.sessionID), "tool", d.tool, "toolCallId", d.call.ID, "crumbType", c.CrumbType())...)
		return &core.BreadError{Code: core.CodeToolEmitRefused, Message: "tool " + d.tool + " emitted after it returned: the crumb is dropped"}
	}
	d.send(c)
	return nil
}

// shut closes the door; it waits for a send in progress.
func (d *toolDoor) shut() {
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
}

// builtinEmit is the unchecked emit of one of the engine's built-in tools
// (its ToolContext's door), or a function that drops crumbs when the tool
// runs outside a run.
func builtinEmit(tc core.ToolContext) func(core.Crumb) {
	if d, ok := tc.Emitter.(*toolDoor); ok {
		return func(c core.Crumb) { _ = d.forward(c) }
	}
	return func(core.Crumb) {}
}

// builtinForward is builtinEmit reporting whether the crumb went through
// (false once the tool has returned, or outside a run).
func builtinForward(tc core.ToolContext) func(core.Crumb) bool {
	if d, ok := tc.Emitter.(*toolDoor); ok {
		return func(c core.Crumb) bool { return d.forward(c) == nil }
	}
	return func(core.Crumb) bool { return false }
}
