package engine

import (
	"context"
	"encoding/json"

	"github.com/breadai/bread/core"
)

// suspend parks the run on humans: one checkpoint per pending call (a set of
// them when the model called several human tools in one turn), stored with
// the turn's messages in one atomic SuspendRun; a human:required per call
// ends the stream, and the OnSuspend hooks observe each. The pending calls
// stay unanswered in the history; each resume answers one, and the run
// continues after the last (afterAnswer).
func (r *run) suspend(ctx context.Context, fresh []core.Message, ts *toolset, calls []toolCall) (outcome, error) {
	cps := make([]core.CheckpointRecord, len(calls))
	meta := withDelegationMeta(ctx, r.withUsageMeta(r.withWebhookMeta(ctx, r.in.annotate(ctx))))
	for i, call := range calls {
		bt := ts.byLeaf[call.Name]
		kind, prompt, schema := core.HumanApproval, "", call.Input
		if bt.human != nil {
			kind, prompt = core.HumanInput, bt.human.Prompt
		}
		if q := call.question; q != nil {
			// A tool that asked mid-call: its question is the checkpoint's,
			// answered like a human tool's (see answerQuestion).
			kind, prompt, schema = core.HumanInput, q.Prompt, q.Schema
			if len(schema) == 0 {
				schema = json.RawMessage(`{"type":"object"}`)
			}
		}
		cps[i] = core.CheckpointRecord{
			ID: r.in.newID(), AgentID: r.agent.ID, RunID: r.id, SessionID: r.sessionID,
			ToolName: bt.leaf, ToolCallID: call.ID, Schema: schema, Prompt: prompt, Kind: kind,
			Skill: r.opts.Skill, Parent: r.parent, CreatedAt: core.NowMillis(), Meta: meta,
		}
		if bt.origin.Scope == core.ScopeClient {
			cps[i].Meta = clientToolMeta(meta)
		}
	}
	var setIDs []string
	if len(cps) > 1 {
		set := &core.HumanSet{ID: "set:" + cps[0].ID}
		for i := range cps {
			set.CheckpointIDs = append(set.CheckpointIDs, cps[i].ID)
			cps[i].Set = set
		}
		setIDs = set.CheckpointIDs
	}
	if err := r.suspendRun(ctx, fresh, cps...); err != nil {
		return outcome{}, err
	}
	res := outcome{suspended: true, checkpointID: cps[0].ID, checkpointIDs: setIDs[min(1, len(setIDs)):]}
	hrs := make([]*core.HumanRequired, len(cps))
	for i, cp := range cps {
		hrs[i] = &core.HumanRequired{CrumbBase: r.base(), CheckpointID: cp.ID, ToolName: cp.ToolName, ToolCallID: cp.ToolCallID, Schema: cp.Schema, Prompt: cp.Prompt, Kind: cp.Kind, Set: setIDs}
	}
	if r.foldsSuspension(len(cps)) {
		// Built before the record's write, which logs it with it
		// (endLogged): a process killed right after that write must not
		// leave a run recorded suspended whose log never says so.
		r.told = hrs[0]
	}
	// The record says suspended before the client can learn it: a process
	// killed right after human:required must not leave a "running" record
	// for a sweeper to declare lost.
	_, _ = r.recordEnd(ctx, res, nil)
	for i, cp := range cps {
		r.emit(hrs[i])
		r.hooks.onSuspend(ctx, r.hookContext(core.HookAgent), cp.ToolName, cp.ID)
	}
	return res, nil
}

// foldsSuspension reports whether the human:required of a suspension on n
// checkpoints goes with the run's suspended record (recordEnd's told): for
// one checkpoint of a run on the public stream. A nested run's is held
// until its parent's checkpoint links it (a supervisor, a pipeline), so a
// client resuming the instant it sees it finds the link: it is not
// logged before then. A set's several crumbs are logged as they pass.
func (r *run) foldsSuspension(n int) bool {
	_, top := r.out.(*streamSink)
	return n == 1 && top
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

// suspendRun stores a suspending turn's messages and its checkpoints as one
// atomic unit.
func (r *run) suspendRun(ctx context.Context, fresh []core.Message, cps ...core.CheckpointRecord) error {
	msgs := make([]core.SessionMessage, 0, len(fresh))
	for _, m := range fresh {
		sm, err := toSessionMessage(m)
		if err != nil {
			return err
		}
		msgs = append(msgs, sm)
	}
	if err := r.stillOurs(ctx); err != nil {
		return err
	}
	return r.in.store.SuspendRun(ctx, r.sessionID, msgs, cps...)
}
