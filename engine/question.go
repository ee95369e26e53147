package engine

import (
	"context"
	"encoding/json"

	"github.com/breadai/bread/core"
)

// isHumanTool reports whether leaf names one of the agent's human tools.
func (rt *agentRT) isHumanTool(leaf string) bool {
	for _, h := range rt.HumanTools {
		if core.LeafName(core.ToolOrigin{Scope: core.ScopeHuman, Name: h.Name}) == leaf {
			return true
		}
	}
	return false
}

// answerQuestion answers a checkpoint on which a tool's call suspended
// mid-call (core.ToolQuestion): the same tool runs again with the call's
// arguments and the answer in its ToolContext. Its result answers the call;
// a new question suspends the run again on a new checkpoint (p is then nil
// and res the suspension). A question asked again from a checkpoint of a set
// (the turn suspended on several calls at once) cannot park the set twice:
// it is the call's TOOL_ERROR.
func (r *run) answerQuestion(ctx context.Context, cp core.CheckpointRecord, call toolCall, response any) (p *core.Part, res outcome, err error) {
	raw, err := core.AsJSON(response)
	if err != nil {
		return nil, outcome{}, r.fail(ctx, core.Errorf(core.CodeValidationError, "the response is not JSON: %w", err))
	}
	ts, err := r.assembleTools(ctx)
	if err != nil {
		return nil, outcome{}, r.fail(ctx, err)
	}
	bt := ts.byLeaf[cp.ToolName]
	if bt == nil || bt.tool == nil {
		return nil, outcome{}, r.fail(ctx, core.Errorf(core.CodeToolNotFound, "the tool %s that asked is no longer available on agent %s", cp.ToolName, r.agent.ID))
	}
	call.Input = r.in.callInput(ctx, r.sessionID, cp.ToolCallID)
	call.answer = raw
	o := r.invokeTool(ctx, bt, call, func(c core.Crumb) { r.emit(c) })
	if o.question == nil {
		return &o.part, outcome{}, nil
	}
	return r.askAgain(ctx, cp, ts, bt, call, o.question)
}

// askAgain suspends a resumed run on the question its answered call's tool
// asked (p nil, res the suspension), or, from a checkpoint of a set, makes
// it the call's TOOL_ERROR (p that part).
func (r *run) askAgain(ctx context.Context, cp core.CheckpointRecord, ts *toolset, bt *boundTool, call toolCall, q *core.ToolQuestion) (p *core.Part, res outcome, err error) {
	if cp.Set != nil {
		be := core.Errorf(core.CodeToolError, "tool %s asked a human again while its turn waited on several answers; call it again", cp.ToolName)
		r.emit(&core.ToolError{CrumbBase: r.base(), ToolCallID: call.ID, ToolName: bt.leaf, Error: be})
		part := errorPart(call, be)
		return &part, outcome{}, nil
	}
	if cause := r.cancelCause(ctx); cause != nil {
		return nil, outcome{}, r.fail(ctx, cause)
	}
	call.question = q
	res, err = r.suspend(ctx, nil, ts, []toolCall{call})
	if err != nil {
		return nil, outcome{}, r.fail(ctx, err)
	}
	return nil, res, nil
}

// callInput returns the arguments of the model's call toolCallID, as the
// session recorded them; {} when it holds none.
func (in *Instance) callInput(ctx context.Context, sessionID, toolCallID string) json.RawMessage {
	msgs, err := in.store.GetMessages(ctx, sessionID)
	if err == nil {
		for i := len(msgs) - 1; i >= 0; i-- {
			var m core.Message
			if json.Unmarshal(msgs[i].Content, &m) != nil {
				break
			}
			for _, p := range m.Parts {
				if p.Type == core.PartToolCall && p.ToolCallID == toolCallID && len(p.Input) > 0 {
					return p.Input
				}
			}
		}
	}
	return json.RawMessage(`{}`)
}
