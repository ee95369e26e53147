package engine

import (
	"context"
	"maps"
	"slices"

	"github.com/breadai/bread/core"
)

var _ core.PipelineDetacher = (*Instance)(nil)

// PipelineAgentID is the AgentID of a background pipeline's own record and
// of the crumbs of its journal (the pipeline's id is their PipelineID).
const PipelineAgentID = "pipeline"

// RunPipelineBackground starts pipelineID on input in the background (see
// core.PipelineDetacher): it answers with the pipeline run's id once the
// run is queued (Config.Jobs) or started on an Instance goroutine.
//
// The pipeline run has its own record (AgentID "pipeline", its PipelineID)
// and its own journal under its id: agent:run:start, a copy of each
// pipeline:step:start and pipeline:step:end, then agent:run:end with the
// last step's output, agent:error, or the human:required of a step that
// suspended. So GET /runs/{id} reads it, GET /runs/{id}/stream follows it
// step by step, Cancel and CancelQueued end it, and its webhook hears how
// it ended. Each step's agent run keeps its own run id and crumbs.
//
// A pipeline suspended for a human stays suspended in its record: the
// resume continues it on the stream of whoever resumes, not in this journal.
func (in *Instance) RunPipelineBackground(ctx context.Context, pipelineID string, input any, bg core.BackgroundOptions) (core.Detached, error) {
	if in.stopped.Load() {
		return core.Detached{}, &core.BreadError{Code: core.CodeInstanceStopping, Message: "the bread instance is stopping; retry on another replica"}
	}
	if _, ok := in.cfg.Pipelines[pipelineID]; !ok {
		return core.Detached{}, &core.BreadError{Code: core.CodePipelineNotFound, Message: "pipeline " + quoteTruncated(pipelineID) + " not found",
			Context: map[string]any{"pipelineId": pipelineID, "available": slices.Sorted(maps.Keys(in.cfg.Pipelines))}}
	}
	raw, err := in.checkBackground(ctx, input, bg)
	if err != nil {
		return core.Detached{}, err
	}
	runID := in.newID()
	p := runJob{RunID: runID, PipelineID: pipelineID, Input: raw, Webhook: bg.Webhook, Identity: core.IdentityFrom(ctx), Delegation: delegationChain(ctx)}
	if in.jobs == nil {
		detached := context.WithoutCancel(ctx)
		if !in.bg.goFn(func() {
			stopAfter := context.AfterFunc(in.bg.ctx, func() { in.Cancel(runID) })
			defer stopAfter()
			_ = in.execPipeline(detached, p, 0, pipelineStart{})
		}) {
			return core.Detached{}, &core.BreadError{Code: core.CodeInstanceStopping, Message: "the bread instance is stopping; retry on another replica"}
		}
		return core.Detached{RunID: runID}, nil
	}
	rec := core.RunRecord{ID: runID, AgentID: PipelineAgentID, PipelineID: pipelineID}
	if err := in.queueRun(ctx, rec, p, 1+core.DefaultJobAttempts); err != nil {
		return core.Detached{}, err
	}
	return core.Detached{RunID: runID}, nil
}

// pipelinePresetKey carries a background pipeline's run id to runPipeline.
type pipelinePresetKey struct{}

// pipelineStart is where a background pipeline starts: at its first step
// on its input, or, retried, after its last finished step on that step's
// output.
type pipelineStart struct {
	index int
	input any
	set   bool
}

// execPipeline runs a background pipeline under its run id, writing its
// journal and record, and tells its webhook how it ended. attempt is the
// job's (0 without a job queue).
func (in *Instance) execPipeline(ctx context.Context, p runJob, attempt int, from pipelineStart) error {
	input := p.DecodeInput()
	if from.set {
		input = from.input
		ctx = context.WithValue(ctx, pipelineStartKey{}, from)
	}
	ctx = core.WithIdentity(in.jobDelegation(ctx, p), p.Identity)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	untrack := in.trackRun(p.RunID, cancel)
	defer untrack()
	rec := core.RunRecord{ID: p.RunID, AgentID: PipelineAgentID, PipelineID: p.PipelineID, Attempt: attempt}
	in.records.running(ctx, rec)
	j := &journal{in: in, runID: p.RunID, pipelineID: p.PipelineID}
	if in.store.Has(core.StoreCrumbLog) && attempt > 1 {
		j.seq, _ = in.store.MaxCrumbSeq(ctx, p.RunID) // an earlier attempt's journal
	}
	j.put(ctx, &core.AgentRunStart{CrumbBase: j.base(PipelineAgentID), Input: input})

	var res outcome
	var runErr error
	var output any = from.input // a retry whose steps all finished ends on the last one's output
	var suspended *core.HumanRequired
	for c, err := range in.RunPipeline(context.WithValue(ctx, pipelinePresetKey{}, p.RunID), p.PipelineID, input) {
		switch v := c.(type) {
		case *core.PipelineStepStart:
			cp := *v
			cp.CrumbBase = j.base(v.AgentID)
			j.put(ctx, &cp)
		case *core.PipelineStepEnd:
			cp := *v
			cp.CrumbBase = j.base(v.AgentID)
			j.put(ctx, &cp)
			output = v.Output
		case *core.HumanRequired:
			suspended = v
		}
		if err != nil {
			runErr = err
		}
	}
	if cause := context.Cause(ctx); runErr == nil && cause != nil {
		runErr = cause
	}
	end := context.WithoutCancel(ctx)
	switch {
	case runErr != nil:
		c, be := in.errorCrumb(j.base(PipelineAgentID), runErr)
		in.records.ended(end, rec, res, be)
		j.put(end, c)
	case suspended != nil:
		res = outcome{suspended: true, checkpointID: suspended.CheckpointID}
		in.records.ended(end, rec, res, nil)
		cp := *suspended
		cp.CrumbBase = j.base(suspended.AgentID)
		j.put(end, &cp)
	default:
		in.records.ended(end, rec, res, nil)
		j.put(end, &core.AgentRunEnd{CrumbBase: j.base(PipelineAgentID), Output: output})
	}
	in.sendWebhook(p, "")
	return nil
}

// journal writes a background pipeline's own crumbs under its run id: each
// to the crumb log and the bus, numbered from 1, like the choke point does
// for a run's crumbs.
type journal struct {
	in         *Instance
	runID      string
	pipelineID string
	seq        int64
}

func (j *journal) base(agentID string) core.CrumbBase {
	return core.CrumbBase{RunID: j.runID, AgentID: agentID, Timestamp: core.NowMillis()}
}

func (j *journal) put(ctx context.Context, c core.Crumb) {
	j.seq++
	b := c.Base()
	b.Seq = j.seq
	if j.in.store.Has(core.StoreCrumbLog) {
		entry := core.CrumbLogEntry{RunID: j.runID, Seq: j.seq, AgentID: b.AgentID, Type: c.CrumbType(), Crumb: c, CreatedAt: b.Timestamp}
		if err := j.in.store.AppendCrumbs(ctx, []core.CrumbLogEntry{entry}); err != nil {
			j.in.log.Warn("bread: logging a background pipeline's crumb failed", append(runAttrs(j.runID, b.AgentID, ""), "pipeline_id", j.pipelineID, "error", err)...)
		}
	}
	if err := j.in.bus.Publish(ctx, core.Frame{RunID: j.runID, Seq: j.seq, Crumb: c}); err != nil {
		j.in.log.Warn("bread: publishing a background pipeline's crumb failed", append(runAttrs(j.runID, b.AgentID, ""), "pipeline_id", j.pipelineID, "error", err)...)
	}
}

// pipelineStartKey carries a retried background pipeline's pipelineStart
// to runPipeline.
type pipelineStartKey struct{}

// progress is what a background pipeline's journal says of it: the last
// step that ended (-1 for none) and its output, and the agent of the step
// that started after it and did not end ("" for none).
type progress struct {
	done     int
	output   any
	inFlight string
}

func (in *Instance) pipelineProgress(ctx context.Context, runID string) progress {
	pr := progress{done: -1}
	if !in.store.Has(core.StoreCrumbLog) {
		return pr
	}
	entries, err := in.store.GetCrumbs(ctx, runID, 0, 0)
	if err != nil {
		return pr
	}
	for _, e := range entries {
		switch c := e.Crumb.(type) {
		case *core.PipelineStepStart:
			pr.inFlight = c.AgentID
		case *core.PipelineStepEnd:
			pr.done, pr.output, pr.inFlight = c.StepIndex, c.Output, ""
		}
	}
	return pr
}

// retryPipeline runs a lost background pipeline again from its last
// durable point: after its last finished step, on that step's output (from
// its first step when none finished), as attempt n+1 under the same id.
func (in *Instance) retryPipeline(ctx context.Context, p runJob, rec core.RunRecord) error {
	pr := in.pipelineProgress(ctx, rec.ID)
	in.log.Warn("bread: retrying a lost background pipeline", append(runAttrs(rec.ID, PipelineAgentID, ""), "pipeline_id", p.PipelineID, "from_step", pr.done+1, "attempt", rec.Attempt+1)...)
	from := pipelineStart{}
	if pr.done >= 0 {
		from = pipelineStart{index: pr.done + 1, input: pr.output, set: true}
	}
	return in.execPipeline(ctx, p, rec.Attempt+1, from)
}
