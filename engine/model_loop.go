package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/breadai/bread/core"
)

// attempt runs the model loop once: resolve the model, replay the session,
// assemble the tools, then call the model, run its tool calls and call it
// again until it answers without tools, a call suspends the run, or the step
// budget runs out. The messages of the turn are persisted at the end, or with
// the checkpoint when the run suspends.
func (r *run) attempt(ctx context.Context) (outcome, error) {
	a := r.agent
	model, err := core.ResolveModel(a.Model, a.Providers, r.in.cfg.Providers)
	if err != nil {
		return outcome{}, err
	}
	history := r.known
	r.known = nil // a retried attempt reads what the store holds
	if history == nil {
		if history, err = r.in.history(ctx, r.sessionID); err != nil {
			return outcome{}, err
		}
	}
	r.restoreLoadedSkills(history)
	system, err := r.systemPrompt(ctx)
	if err != nil {
		return outcome{}, err
	}
	if a.Output.Format == core.FormatJSON {
		return r.structured(ctx, model, system, history)
	}
	ts, err := r.assembleTools(ctx)
	if err != nil {
		return outcome{}, err
	}
	skillsSeen := r.skillCount()
	stateSeen := r.stateRevision()

	messages := history
	var fresh []core.Message
	var text strings.Builder
	for range a.steps {
		req := core.ModelRequest{System: system, Messages: messages, Tools: ts.specs, Settings: a.Model.Settings, ProviderOptions: a.Model.ProviderOptions}
		turn, err := r.callModel(ctx, model, req, true)
		if err != nil {
			return outcome{}, err
		}
		text.WriteString(turn.text)
		assistant := turn.message()
		if len(assistant.Parts) > 0 {
			messages = append(messages, assistant)
			fresh = append(fresh, assistant)
		}
		if len(turn.calls) == 0 {
			break
		}
		pending, runnable := splitSuspending(ts, turn.calls)
		results := r.runTools(ctx, ts, runnable)
		if be := depthExceeded(results); be != nil {
			return outcome{}, be
		}
		delegations := suspendedDelegations(runnable, results)
		pending = append(pending, askedCalls(runnable, results)...)
		if parts := orderParts(turn.calls, results, delegations); len(parts) > 0 {
			toolMsg := core.Message{Role: core.RoleTool, Parts: parts}
			messages = append(messages, toolMsg)
			fresh = append(fresh, toolMsg)
		}
		if err := r.cancelCause(ctx); err != nil {
			return outcome{}, err
		}
		switch {
		case len(delegations) > 0 && len(pending) > 0:
			return outcome{}, &core.BreadError{
				Code:    core.CodeMixedSuspension,
				Message: "agent " + a.ID + " called a human or ask-gated tool and had a delegation suspend in the same turn; split them across turns",
				Context: map[string]any{"agentId": a.ID, "runId": r.id, "toolName": pending[0].Name},
			}
		case len(delegations) > 0:
			return r.chainSuspend(ctx, fresh, delegations)
		case len(pending) > 0:
			return r.suspend(ctx, fresh, ts, pending)
		}
		// A skill loaded by the model this turn brings its tools and
		// instructions to the next model call.
		if n := r.skillCount(); n != skillsSeen {
			skillsSeen = n
			if system, err = r.systemPrompt(ctx); err != nil {
				return outcome{}, err
			}
			if ts, err = r.assembleTools(ctx); err != nil {
				return outcome{}, err
			}
		}
		// A state changed this turn shows as it is now in the next
		// model call's system prompt.
		if n := r.stateRevision(); n != stateSeen {
			stateSeen = n
			if system, err = r.systemPrompt(ctx); err != nil {
				return outcome{}, err
			}
		}
	}
	if err := r.persistLast(ctx, fresh...); err != nil {
		return outcome{}, err
	}
	out, err := r.parseOutput(text.String())
	if err != nil {
		// The run goes on to its error hooks and may retry, reading the
		// session back: the answer is stored first, as it always was.
		if ferr := r.flushLast(ctx); ferr != nil {
			return outcome{}, ferr
		}
		return outcome{}, err
	}
	return outcome{output: out}, nil
}

// structured answers a json-format agent through the model's structured
// output, without tools, and validates the answer against the output
// schema.
func (r *run) structured(ctx context.Context, model core.LanguageModel, system string, history []core.Message) (outcome, error) {
	a := r.agent
	schema := a.OutputSchema
	if schema == nil {
		schema = json.RawMessage(`{}`)
	}
	req := core.ModelRequest{System: system, Messages: history, Output: &core.OutputSpec{Name: "output", Schema: schema}, Settings: a.Model.Settings, ProviderOptions: a.Model.ProviderOptions}
	turn, err := r.callModel(ctx, model, req, false)
	if err != nil {
		return outcome{}, err
	}
	out, raw, err := decodeStructured(turn.text, a.DecodeOutput, a.output, "output of agent "+a.ID)
	if err != nil {
		return outcome{}, err
	}
	if err := r.persistLast(ctx, core.Message{Role: core.RoleAssistant, Parts: []core.Part{core.TextPart(string(raw))}}); err != nil {
		return outcome{}, err
	}
	return outcome{output: out}, nil
}

// decodeStructured turns a model's structured-output text into a value:
// typed through decode when set, else validated against schema and kept as
// raw JSON.
func decodeStructured(text string, decode func(json.RawMessage) (any, error), schema *compiledSchema, what string) (any, json.RawMessage, error) {
	raw := json.RawMessage(bytes.TrimSpace([]byte(text)))
	if !json.Valid(raw) {
		return nil, nil, &core.BreadError{Code: core.CodeOutputParseError, Message: "the model's structured " + what + " is not valid JSON"}
	}
	if decode != nil {
		out, err := decode(raw)
		return out, raw, err
	}
	if err := schema.validate(what, raw); err != nil {
		return nil, nil, err
	}
	return raw, raw, nil
}

// parseOutput turns the run's text into its output: as is for text and
// markdown, through Parse for a custom format.
func (r *run) parseOutput(text string) (any, error) {
	f := r.agent.Output
	if f.Parse == nil {
		return text, nil
	}
	out, err := f.Parse(text)
	if err != nil {
		var be *core.BreadError
		if errors.As(err, &be) {
			return nil, err
		}
		// The parser's own text stays with the server (the run's log
		// line carries the cause).
		return nil, &core.BreadError{Code: core.CodeOutputParseError, Message: "the model's output does not parse as " + quoteTruncated(f.Format), Cause: err}
	}
	return out, nil
}

// modelTurn is what one model call produced.
type modelTurn struct {
	text      string
	reasoning string
	calls     []toolCall
	usage     core.Usage
}

func (t modelTurn) message() core.Message {
	m := core.Message{Role: core.RoleAssistant}
	if t.reasoning != "" {
		m.Parts = append(m.Parts, core.Part{Type: core.PartReasoning, Text: t.reasoning})
	}
	if t.text != "" {
		m.Parts = append(m.Parts, core.TextPart(t.text))
	}
	for _, c := range t.calls {
		m.Parts = append(m.Parts, core.Part{Type: core.PartToolCall, ToolCallID: c.ID, ToolName: c.Name, Input: c.Input})
	}
	return m
}

// callModel streams one model call, emitting text (when streamText),
// reasoning, tool-input and file crumbs as they arrive.
func (r *run) callModel(ctx context.Context, model core.LanguageModel, req core.ModelRequest, streamText bool) (modelTurn, error) {
	// What the loop body changes lives in one value: a range-over-func
	// body moves each outer variable it changes to the heap on its own.
	// Nor does it return: a return inside it moves the results to the
	// heap.
	st := &callState{r: r, ctx: ctx, streamText: streamText}
	for ev, err := range model.Stream(ctx, req) {
		if err == nil {
			err = st.event(ev)
		}
		if err != nil {
			st.err = err
			break
		}
	}
	if st.err != nil {
		return st.turn, st.err
	}
	if err := r.cancelCause(ctx); err != nil {
		return st.turn, err
	}
	if r.calls == nil {
		r.calls = r.oneCall[:0]
	}
	r.calls = append(r.calls, st.turn.usage)
	st.turn.text, st.turn.reasoning = st.text.String(), st.reasoning.String()
	return st.turn, nil
}

// callState is one model call's progress (callModel).
type callState struct {
	r               *run
	ctx             context.Context
	streamText      bool
	turn            modelTurn
	text, reasoning strings.Builder
	err             error // what ended the call early
}

// event handles one event of the model's stream.
func (st *callState) event(ev core.ModelEvent) error {
	r := st.r
	ok := true
	switch ev.Type {
	case core.EventTextDelta:
		st.text.WriteString(ev.Delta)
		if st.streamText && ev.Delta != "" {
			ok = r.emit(&core.TextDelta{CrumbBase: r.base(), Delta: ev.Delta})
		}
	case core.EventReasoningDelta:
		st.reasoning.WriteString(ev.Delta)
		if ev.Delta != "" {
			ok = r.emit(&core.ReasoningDelta{CrumbBase: r.base(), Delta: ev.Delta})
		}
	case core.EventToolInputStart:
		ok = r.emit(&core.ToolInputStart{CrumbBase: r.base(), ToolCallID: ev.ToolCallID, ToolName: ev.ToolName})
	case core.EventToolInputDelta:
		ok = r.emit(&core.ToolInputDelta{CrumbBase: r.base(), ToolCallID: ev.ToolCallID, Delta: ev.Delta})
	case core.EventToolInputEnd:
		ok = r.emit(&core.ToolInputEnd{CrumbBase: r.base(), ToolCallID: ev.ToolCallID})
	case core.EventToolCall:
		input := ev.Input
		if len(bytes.TrimSpace(input)) == 0 {
			input = json.RawMessage(`{}`)
		}
		st.turn.calls = append(st.turn.calls, toolCall{ID: ev.ToolCallID, Name: ev.ToolName, Input: input})
	case core.EventFile:
		if ev.File != nil {
			if err := r.storeFile(st.ctx, ev.File); err != nil {
				return err
			}
		}
	case core.EventFinish:
		st.turn.usage = st.turn.usage.Add(ev.Usage)
		r.usage = r.usage.Add(ev.Usage)
	}
	if !ok {
		return errConsumerGone
	}
	return nil
}

// splitSuspending separates a turn's calls into those that suspend the run
// (human and gated calls, each answered through a checkpoint of its own)
// and those that run now.
func splitSuspending(ts *toolset, calls []toolCall) (pending, runnable []toolCall) {
	for _, c := range calls {
		if bt := ts.byLeaf[c.Name]; bt != nil && bt.suspends() {
			pending = append(pending, c)
		} else {
			runnable = append(runnable, c)
		}
	}
	return pending, runnable
}

// askedCalls picks the calls of a turn whose tools asked a human mid-call
// (core.ToolQuestion): each suspends on a checkpoint of its own, beside the
// turn's human and gated calls.
func askedCalls(calls []toolCall, results []toolOutcome) []toolCall {
	var out []toolCall
	for i, o := range results {
		if i < len(calls) && o.question != nil {
			c := calls[i]
			c.question = o.question
			out = append(out, c)
		}
	}
	return out
}

// orderParts orders result parts by the model's call order, leaving out the
// calls still pending: a suspended delegation's call stays unanswered in
// history until its child run completes.
func orderParts(calls []toolCall, results []toolOutcome, pending []pendingDelegation) []core.Part {
	byID := make(map[string]core.Part, len(results))
	for _, o := range results {
		if o.question == nil {
			byID[o.part.ToolCallID] = o.part
		}
	}
	for _, d := range pending {
		delete(byID, d.call.ID)
	}
	out := make([]core.Part, 0, len(byID))
	for _, c := range calls {
		if p, ok := byID[c.ID]; ok {
			out = append(out, p)
		}
	}
	return out
}
