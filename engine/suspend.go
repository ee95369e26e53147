package engine

import (
	"context"

	"github.com/breadai/bread/core"
)

// suspend parks the run on a human: the turn's messages and a checkpoint are
// stored in one atomic SuspendRun, human:required ends the stream, and the
// OnSuspend hooks observe it. The pending call stays unanswered in the
// history; Resume answers it.
func (r *run) suspend(ctx context.Context, fresh []core.Message, bt *boundTool, call toolCall) (outcome, error) {
	kind, prompt := core.HumanApproval, ""
	if bt.human != nil {
		kind, prompt = core.HumanInput, bt.human.Prompt
	}
	cp := core.CheckpointRecord{
		ID: newID(), AgentID: r.agent.ID, RunID: r.id, SessionID: r.sessionID,
		ToolName: bt.leaf, ToolCallID: call.ID, Schema: call.Input, Prompt: prompt, Kind: kind,
		Skill: r.opts.Skill, Parent: r.parent, CreatedAt: core.NowMillis(), Meta: r.in.annotate(ctx),
	}
	if err := r.suspendRun(ctx, fresh, cp); err != nil {
		return outcome{}, err
	}
	res := outcome{suspended: true, checkpointID: cp.ID}
	// The record says suspended before the client can learn it: a process
	// killed right after human:required must not leave a "running" record
	// for a sweeper to declare lost.
	r.recordEnd(ctx, res, nil)
	r.emit(&core.HumanRequired{CrumbBase: r.base(), CheckpointID: cp.ID, ToolName: bt.leaf, Schema: call.Input, Prompt: prompt, Kind: kind})
	r.hooks.onSuspend(ctx, r.hookContext(core.HookAgent), bt.leaf, cp.ID)
	return outcome{suspended: true, checkpointID: cp.ID}, nil
}

// annotate collects what CheckpointAnnotator plugins keep of a suspending
// run; nil when none does.
func (in *Instance) annotate(ctx context.Context) map[string]string {
	var meta map[string]string
	for _, p := range in.cfg.Plugins {
		if a, ok := p.(core.CheckpointAnnotator); ok {
			for k, v := range a.AnnotateCheckpoint(ctx) {
				if meta == nil {
					meta = map[string]string{}
				}
				meta[k] = v
			}
		}
	}
	return meta
}

// suspendRun stores a suspending turn's messages and its checkpoint as one
// atomic unit.
func (r *run) suspendRun(ctx context.Context, fresh []core.Message, cp core.CheckpointRecord) error {
	msgs := make([]core.SessionMessage, 0, len(fresh))
	for _, m := range fresh {
		sm, err := toSessionMessage(m)
		if err != nil {
			return err
		}
		msgs = append(msgs, sm)
	}
	return r.in.store.SuspendRun(ctx, r.sessionID, msgs, cp)
}
