package core

import "context"

// suspend parks the run on a human: the turn's messages and a checkpoint are
// stored in one atomic SuspendRun, human:required ends the stream, and the
// OnSuspend hooks observe it. The pending call stays unanswered in the
// history; Resume answers it.
func (r *run) suspend(ctx context.Context, fresh []Message, bt *boundTool, call toolCall) (outcome, error) {
	kind, prompt := HumanApproval, ""
	if bt.human != nil {
		kind, prompt = HumanInput, bt.human.Prompt
	}
	cp := CheckpointRecord{
		ID: newID(), AgentID: r.agent.ID, RunID: r.id, SessionID: r.sessionID,
		ToolName: bt.leaf, ToolCallID: call.ID, Schema: call.Input, Prompt: prompt, Kind: kind,
		Skill: r.opts.Skill, Parent: r.parent, CreatedAt: NowMillis(),
	}
	if err := r.suspendRun(ctx, fresh, cp); err != nil {
		return outcome{}, err
	}
	r.emit(&HumanRequired{CrumbBase: r.base(), CheckpointID: cp.ID, ToolName: bt.leaf, Schema: call.Input, Prompt: prompt, Kind: kind})
	r.hooks.onSuspend(ctx, r.hookContext(HookAgent), bt.leaf, cp.ID)
	return outcome{suspended: true, checkpointID: cp.ID}, nil
}

// suspendRun stores a suspending turn's messages and its checkpoint as one
// atomic unit.
func (r *run) suspendRun(ctx context.Context, fresh []Message, cp CheckpointRecord) error {
	msgs := make([]SessionMessage, 0, len(fresh))
	for _, m := range fresh {
		sm, err := toSessionMessage(m)
		if err != nil {
			return err
		}
		msgs = append(msgs, sm)
	}
	return r.in.store.SuspendRun(ctx, r.sessionID, msgs, cp)
}
