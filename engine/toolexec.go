package engine

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/breadai/bread/core"
)

// toolCall is one call the model made.
type toolCall struct {
	ID    string
	Name  string
	Input json.RawMessage
	// idempotencyKey overrides the tool context's default key (an approved
	// call resumed from a checkpoint keys on the checkpoint).
	idempotencyKey string
	// question is what the tool asked a human mid-call (the call then
	// suspends on it); answer is the human's answer when the call resumes
	// from such a question (core.ToolContext.Answer).
	question *core.ToolQuestion
	answer   json.RawMessage
}

// toolOutcome is how one call ended: the part the model sees, and the error
// when it failed.
type toolOutcome struct {
	part core.Part
	err  *core.BreadError
	// question is set, and part and err are not, when the tool asked a
	// human mid-call (core.ToolQuestion): the call suspends on it.
	question *core.ToolQuestion
}

// runTools executes calls concurrently and returns their outcomes in call
// order. Tool crumbs (and the crumbs of runs nested in a tool, like a
// delegation) travel to the run's goroutine over a channel and are emitted in
// arrival order, so only that goroutine ever yields.
func (r *run) runTools(ctx context.Context, ts *toolset, calls []toolCall) []toolOutcome {
	results := make([]toolOutcome, len(calls))
	if len(calls) == 0 {
		return results
	}
	out := make(chan core.Crumb, 16)
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Go(func() { results[i] = r.execTool(ctx, ts.byLeaf[c.Name], c, out) })
	}
	go func() {
		wg.Wait()
		close(out)
	}()
	for c := range out {
		r.emit(c)
	}
	return results
}

// execTool runs one call through the tool-scope hooks, emitting tool:call,
// tool:result:partial, tool:result or tool:error, and returns the part the
// model sees. It never panics: a panicking tool is a TOOL_ERROR.
func (r *run) execTool(ctx context.Context, bt *boundTool, call toolCall, out chan<- core.Crumb) toolOutcome {
	send := func(c core.Crumb) { out <- c }
	if bt == nil || bt.tool == nil {
		be := core.Errorf(core.CodeToolNotFound, "the model called %s, which this agent does not have", quoteTruncated(call.Name))
		send(&core.ToolError{CrumbBase: r.base(), ToolCallID: call.ID, ToolName: call.Name, Error: be})
		return toolOutcome{part: errorPart(call, be), err: be}
	}
	return r.invokeTool(ctx, bt, call, send)
}

// invokeTool is the one path every execution of a real tool takes, from a
// model's call or from an approval on resume: argument validation, the
// BeforeRun chain, tool:call, the execution with OnError and retry,
// tool:result or tool:error, then the AfterRun chain.
func (r *run) invokeTool(ctx context.Context, bt *boundTool, call toolCall, send func(core.Crumb)) toolOutcome {
	t := bt.tool
	creds := r.in.toolCredentials(t)
	hc := r.hookContext(core.HookTool)
	hc.ToolName = bt.leaf
	hc.Credentials = creds
	chain := r.in.chain(t.Hooks)
	start := time.Now()
	failed := func(err error) toolOutcome {
		// A question for a human is not a failure: the call suspends on
		// it, without a tool:error, and its result comes with the answer.
		if q, ok := core.AsToolQuestion(err); ok {
			return toolOutcome{question: q}
		}
		// The model reads the error as the tool returned it; the client,
		// through tool:error, only what core.Sanitize lets through.
		be := core.AsBreadError(err, core.CodeToolError)
		// A delegation suspending for a human is not a failure: it reaches
		// the runner's chain-suspension path without a tool:error.
		if be.Code != core.CodeDelegationSuspended {
			ce, plain := clientError(err, core.CodeToolError)
			if plain {
				r.in.log.Warn("bread: a tool failed with an error not meant for clients; its tool:error names only the tool",
					append(runAttrs(r.id, r.agent.ID, r.sessionID), "tool", bt.leaf, "toolCallId", call.ID, "error", err)...)
				ce = &core.BreadError{Code: core.CodeToolError, Message: "tool " + bt.leaf + " failed; the server logged why", Cause: err}
			}
			send(&core.ToolError{CrumbBase: r.base(), ToolCallID: call.ID, ToolName: bt.leaf, Error: ce, DurationMs: time.Since(start).Milliseconds()})
		}
		return toolOutcome{part: errorPart(call, be), err: be}
	}

	if err := bt.args.validate("arguments of "+bt.leaf, call.Input); err != nil {
		send(&core.ToolCall{CrumbBase: r.base(), ToolCallID: call.ID, ToolName: bt.leaf, Args: call.Input})
		return failed(err)
	}
	args, short, err := chain.before(ctx, hc, any(call.Input))
	if err != nil {
		send(&core.ToolCall{CrumbBase: r.base(), ToolCallID: call.ID, ToolName: bt.leaf, Args: call.Input})
		return failed(err)
	}
	send(&core.ToolCall{CrumbBase: r.base(), ToolCallID: call.ID, ToolName: bt.leaf, Args: args})
	if short != nil {
		send(&core.ToolResult{CrumbBase: r.base(), ToolCallID: call.ID, ToolName: bt.leaf, Result: short.Output})
		final, err := chain.after(ctx, hc, args, short.Output, 0)
		if err != nil {
			return failed(err)
		}
		return toolOutcome{part: resultPart(call, final)}
	}
	raw, err := core.AsJSON(args)
	if err != nil {
		return failed(core.Errorf(core.CodeValidationError, "arguments of %s are not JSON: %w", bt.leaf, err))
	}
	key := call.idempotencyKey
	if key == "" {
		key = r.id + ":" + call.ID
	}
	door := r.newToolDoor(call, bt.leaf, send)
	tc := core.ToolContext{AgentID: r.agent.ID, RunID: r.id, SessionID: r.sessionID, ToolCallID: call.ID, IdempotencyKey: key, Credentials: creds, Blobs: r.in.blobs, Emitter: door, Answer: call.answer}

	var result any
	if t.ExecuteStream != nil {
		// No retry for a stream: replaying half-delivered partials has no
		// sound meaning.
		result, err = r.drainStream(ctx, t, raw, tc, func(v any) {
			send(&core.ToolResultPartial{CrumbBase: r.base(), ToolCallID: call.ID, ToolName: bt.leaf, Result: v})
		})
	} else {
		result, err = r.executeWithRetry(ctx, t, raw, tc, chain, hc, args)
	}
	// The tool has returned: what it emits from now on is dropped, so
	// nothing of it follows its tool:result, and nothing reaches a channel
	// runTools may have closed.
	door.shut()
	if err != nil {
		return failed(err)
	}
	d := time.Since(start)
	send(&core.ToolResult{CrumbBase: r.base(), ToolCallID: call.ID, ToolName: bt.leaf, Result: result, DurationMs: d.Milliseconds()})
	final, err := chain.after(ctx, hc, args, result, d)
	if err != nil {
		return failed(err)
	}
	return toolOutcome{part: resultPart(call, final)}
}

// executeWithRetry runs a tool, consulting the OnError chain after each
// failure: recover with a substitute result, retry within the tool's retry
// policy, or fail.
func (r *run) executeWithRetry(ctx context.Context, t *core.Tool, raw json.RawMessage, tc core.ToolContext, chain hookChain, hc core.HookContext, args any) (any, error) {
	rs := newRetryState(t.ErrorHandling.Retry)
	for {
		v, err := safeExecute(ctx, t, raw, tc)
		if err == nil {
			return v, nil
		}
		if ctx.Err() != nil {
			return nil, err
		}
		if _, ok := core.AsToolQuestion(err); ok {
			return nil, err // not a failure: no OnError, no retry
		}
		be := core.AsBreadError(err, core.CodeToolError)
		if be.Code == core.CodeDelegationSuspended {
			return nil, be
		}
		res, herr := chain.onError(ctx, hc, args, be)
		if herr != nil {
			return nil, herr
		}
		switch o, final := rs.decide(res, be); o {
		case decideRecover:
			return rs.recovered, nil
		case decideFail:
			return nil, final
		}
		if err := rs.wait(ctx); err != nil {
			return nil, be
		}
	}
}

func safeExecute(ctx context.Context, t *core.Tool, raw json.RawMessage, tc core.ToolContext) (v any, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = core.Errorf(core.CodeToolError, "tool %s panicked: %v", t.Name, p)
		}
	}()
	return t.Execute(ctx, raw, tc)
}

// drainStream collects a streaming tool's values; the last one is the
// result.
func (r *run) drainStream(ctx context.Context, t *core.Tool, raw json.RawMessage, tc core.ToolContext, partial func(any)) (last any, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = core.Errorf(core.CodeToolError, "tool %s panicked: %v", t.Name, p)
		}
	}()
	for v, err := range t.ExecuteStream(ctx, raw, tc) {
		if err != nil {
			return nil, err
		}
		last = v
		partial(v)
	}
	return last, ctx.Err()
}

func resultPart(call toolCall, v any) core.Part {
	out, err := core.AsJSON(v)
	if err != nil {
		return errorPart(call, core.Errorf(core.CodeToolError, "the result of %s is not JSON: %v", call.Name, err))
	}
	return core.Part{Type: core.PartToolResult, ToolCallID: call.ID, ToolName: call.Name, Output: out}
}

func errorPart(call toolCall, be *core.BreadError) core.Part {
	out, _ := json.Marshal(core.ClientError{Code: be.Code, Message: be.Message})
	return core.Part{Type: core.PartToolResult, ToolCallID: call.ID, ToolName: call.Name, Output: out, IsError: true}
}
