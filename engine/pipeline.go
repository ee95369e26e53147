package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"sync"

	"github.com/breadai/bread/core"
)

// pipelineRun identifies one execution of a pipeline: its id (the configured
// pipeline, or a loop) and a unique prefix for its steps' run ids.
type pipelineRun struct {
	id    string
	runID string
}

func (p pipelineRun) stepRunID(index int) string { return p.runID + ":" + strconv.Itoa(index) }

// runPipeline runs a configured pipeline.
func (in *Instance) runPipeline(ctx context.Context, out sink, pipelineID string, input any) (outcome, error) {
	steps, ok := in.cfg.Pipelines[pipelineID]
	if !ok {
		return outcome{}, &core.BreadError{
			Code:    core.CodePipelineNotFound,
			Message: "pipeline " + quoteTruncated(pipelineID) + " not found",
			Context: map[string]any{"pipelineId": pipelineID, "available": slices.Sorted(maps.Keys(in.cfg.Pipelines))},
		}
	}
	runID, _ := ctx.Value(pipelinePresetKey{}).(string)
	if runID == "" {
		runID = in.newID()
	} else {
		ctx = context.WithValue(ctx, pipelinePresetKey{}, "") // not for pipelines inside
	}
	base := 0
	if from, ok := ctx.Value(pipelineStartKey{}).(pipelineStart); ok && from.set {
		// A retried background pipeline skips the steps that finished.
		ctx = context.WithValue(ctx, pipelineStartKey{}, pipelineStart{})
		base = min(from.index, len(steps))
		steps = steps[base:]
	}
	return in.pipeline(ctx, out, pipelineRun{id: pipelineID, runID: runID}, steps, input, base, nil)
}

// pipeline runs steps in order, each step's output the next one's input,
// framing each with pipeline:step:start and pipeline:step:end. base numbers
// the steps (a continuation picks up after the suspended step). outer, when
// set, is the continuation of the enclosing level (this pipeline is a
// parallel branch); every checkpoint made inside links to it.
//
// A step that suspends stops the pipeline: the stream ends at human:required
// and the checkpoint carries the remaining steps.
func (in *Instance) pipeline(ctx context.Context, out sink, p pipelineRun, steps []core.PipelineStep, input any, base int, outer *core.CheckpointParent) (outcome, error) {
	current := input
	for i, step := range steps {
		index := base + i
		agentID := stepAgentID(step)
		stepBase := core.CrumbBase{AgentID: agentID, RunID: p.stepRunID(index)}
		start := stepBase
		start.Timestamp = core.NowMillis()
		if !out.put(&core.PipelineStepStart{CrumbBase: start, PipelineID: p.id, StepIndex: index}) {
			return outcome{}, errConsumerGone
		}
		ctx, unobserve := in.observeScope(ctx, &core.PipelineStepStart{CrumbBase: start, PipelineID: p.id, StepIndex: index})
		defer unobserve()
		cont := &core.CheckpointParent{
			Kind: core.ParentPipeline, PipelineID: p.id, PipelineRunID: p.runID, StepIndex: index,
			StepAgentID: agentID, RemainingSteps: slices.Clone(steps[i+1:]), Outer: outer,
		}
		var res outcome
		var err error
		switch step.Type {
		case core.StepAgent, "":
			res, err = in.runAgent(ctx, nested{out}, step.AgentID, current, core.RunOptions{Skill: step.Skill}, cont)
		case core.StepRoute:
			res, err = in.routeStep(ctx, out, step, current, cont)
		case core.StepMap:
			res, err = in.mapStep(ctx, out, step.AgentID, arrayItems(current), nil, cont)
		case core.StepParallel:
			res, err = in.parallel(ctx, out, p, index, step.Steps, current, cont)
		default:
			err = core.Errorf(core.CodeInvalidConfig, "pipeline %s step %d has unknown type %q", p.id, index, step.Type)
		}
		if err != nil || res.suspended {
			return res, err
		}
		end := stepBase
		end.Timestamp = core.NowMillis()
		if !out.put(&core.PipelineStepEnd{CrumbBase: end, PipelineID: p.id, StepIndex: index, Output: res.output}) {
			return outcome{}, errConsumerGone
		}
		current = res.output
	}
	return outcome{output: current}, nil
}

func stepAgentID(s core.PipelineStep) string {
	switch s.Type {
	case core.StepParallel:
		return "parallel"
	case core.StepRoute:
		return "route"
	}
	return s.AgentID
}

// mapStep runs agentID once per item, in order; the output is the list of
// outputs. settled holds outputs of items already done (a continuation).
func (in *Instance) mapStep(ctx context.Context, out sink, agentID string, items []any, settled []any, cont *core.CheckpointParent) (outcome, error) {
	results := slices.Clone(settled)
	for j, item := range items {
		link := *cont
		link.Map = &core.MapProgress{AgentID: agentID, SettledOutputs: rawList(results), RemainingItems: rawList(items[j+1:])}
		res, err := in.runAgent(ctx, nested{out}, agentID, item, core.RunOptions{}, &link)
		if err != nil || res.suspended {
			return res, err
		}
		results = append(results, res.output)
	}
	if results == nil {
		results = []any{}
	}
	return outcome{output: results}, nil
}

// routeStep asks a decider which route to take and runs that route's agent.
func (in *Instance) routeStep(ctx context.Context, out sink, step core.PipelineStep, input any, cont *core.CheckpointParent) (outcome, error) {
	routes := slices.Sorted(maps.Keys(step.Routes))
	d, err := in.Decide(ctx, step.Decider, core.Question{Prompt: cmpOr(step.Prompt, "Choose the route for this input."), Options: routes, Input: input})
	if err != nil {
		return outcome{}, err
	}
	link := *cont
	link.StepAgentID = step.Routes[d.Choice]
	return in.runAgent(ctx, nested{out}, step.Routes[d.Choice], input, core.RunOptions{Skill: step.Skill}, &link)
}

// branchResult is how one parallel branch ended.
type branchResult struct {
	res outcome
	err error
}

// parallel runs branches concurrently on the same input; the output is the
// list of branch outputs in branch order. Branch crumbs are forwarded as they
// come, except human:required: a suspended branch surfaces only after every
// sibling settled and its checkpoint knows the siblings' outcome, so a client
// resuming at once finds complete linkage. A failed branch fails the step,
// after its siblings settle.
func (in *Instance) parallel(ctx context.Context, out sink, p pipelineRun, index int, branches []core.PipelineStep, input any, cont *core.CheckpointParent) (outcome, error) {
	results := make([]branchResult, len(branches))
	ch := make(chan core.Crumb, 64)
	// The branches share one cancelable context: the moment the consumer
	// stops reading, every branch is cancelled, and the drain below waits
	// only for them to wind down.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	// Every checkpoint made inside a branch knows its slot of the step's
	// join from the start, so a branch resumed at any time settles it.
	joinID := p.stepRunID(index)
	for b, step := range branches {
		link := *cont
		link.StepAgentID = "parallel"
		link.Parallel = &core.ParallelProgress{BranchIndex: b, Branches: len(branches), JoinID: joinID}
		sub := pipelineRun{id: p.id, runID: p.stepRunID(index) + ":" + strconv.Itoa(b)}
		wg.Go(func() {
			results[b].res, results[b].err = in.pipeline(ctx, nested{branchSink{ch}}, sub, []core.PipelineStep{step}, input, 0, &link)
		})
	}
	go func() {
		wg.Wait()
		close(ch)
	}()
	var held []core.Crumb
	gone := false
	for c := range ch {
		switch v := c.(type) {
		case *core.HumanRequired:
			held = append(held, c)
			continue
		case *foldRequest:
			v.reply <- foldThrough(out, v.Crumb, gone)
			continue
		case *settleRequest:
			settleThrough(out, v.Crumb, v.entries, v.committed)
			continue
		}
		if !gone && !out.put(c) {
			gone = true
			cancel(errConsumerGone) // and keep draining so the branches can finish
		}
	}
	if gone {
		return outcome{}, errConsumerGone
	}

	var errs []error
	var suspended []string
	values := make([]any, len(branches))
	for b, br := range results {
		switch {
		case br.err != nil:
			errs = append(errs, br.err)
		case br.res.suspended:
			suspended = append(suspended, br.res.checkpoints()...)
		default:
			values[b] = br.res.output
		}
	}
	if len(errs) == 1 {
		return outcome{}, errs[0]
	}
	if len(errs) > 1 {
		return outcome{}, &core.BreadError{
			Code:    core.CodeAggregateError,
			Message: fmt.Sprintf("%d of %d parallel branches failed (pipeline %s, step %d): %v", len(errs), len(branches), p.id, index, errors.Join(errs...)),
			Cause:   errors.Join(errs...),
		}
	}
	if len(suspended) == 0 {
		return outcome{output: values}, nil
	}
	// The branches that finished settle their slots now, before any
	// human:required surfaces; the suspended ones settle theirs when they
	// complete, and whichever completes the join carries the step on.
	for b, br := range results {
		if br.res.suspended {
			continue
		}
		raw, err := core.AsJSON(br.res.output)
		if err != nil {
			return outcome{}, err
		}
		if _, _, err := in.store.SettleJoin(ctx, joinID, len(branches), b, raw); err != nil {
			return outcome{}, err
		}
	}
	for _, c := range held {
		out.put(c)
	}
	return outcome{suspended: true, checkpointIDs: suspended}, nil
}

// continueParent hands a completed run's output to the composition that was
// waiting on it: the rest of a pipeline, or the supervisor that delegated.
func (in *Instance) continueParent(ctx context.Context, out sink, p *core.CheckpointParent, output any) (outcome, error) {
	if p.Kind == core.ParentSupervisor || p.Kind == core.ParentLoop {
		return in.continueSupervisor(ctx, out, p, output)
	}
	return in.continuePipeline(ctx, out, p, output)
}

// continuePipeline continues a pipeline whose step suspended, once the
// suspended run has completed with output: it finishes an interrupted map,
// records a parallel branch (only the last outstanding branch carries the
// merged output on), closes the step, runs the remaining steps, and then
// continues the enclosing level, if any.
func (in *Instance) continuePipeline(ctx context.Context, out sink, p *core.CheckpointParent, output any) (outcome, error) {
	stepOutput := output
	if m := p.Map; m != nil {
		link := *p
		link.Map = nil
		res, err := in.mapStep(ctx, out, m.AgentID, rawItems(m.RemainingItems), append(rawItems(m.SettledOutputs), output), &link)
		if err != nil || res.suspended {
			return res, err
		}
		stepOutput = res.output
	}
	if pp := p.Parallel; pp != nil {
		if pp.JoinID == "" || pp.Branches <= 0 {
			return outcome{}, &core.BreadError{
				Code:    core.CodePipelineStateLost,
				Message: fmt.Sprintf("pipeline %s lost its parallel state: branch %d was suspended by an earlier version that kept no join; the pipeline cannot continue", p.PipelineID, pp.BranchIndex),
				Context: map[string]any{"pipelineId": p.PipelineID, "stepIndex": p.StepIndex, "branchIndex": pp.BranchIndex},
			}
		}
		raw, err := core.AsJSON(stepOutput)
		if err != nil {
			return outcome{}, err
		}
		outputs, complete, err := in.store.SettleJoin(ctx, pp.JoinID, pp.Branches, pp.BranchIndex, raw)
		if err != nil {
			return outcome{}, err
		}
		if !complete {
			// Other branches are still out; the last one to settle carries
			// the step on.
			return outcome{suspended: true}, nil
		}
		stepOutput = rawItems(outputs)
	}
	run := pipelineRun{id: p.PipelineID, runID: p.PipelineRunID}
	end := core.CrumbBase{AgentID: p.StepAgentID, RunID: run.stepRunID(p.StepIndex), Timestamp: core.NowMillis()}
	if !out.put(&core.PipelineStepEnd{CrumbBase: end, PipelineID: p.PipelineID, StepIndex: p.StepIndex, Output: stepOutput}) {
		return outcome{}, errConsumerGone
	}
	res, err := in.pipeline(ctx, out, run, p.RemainingSteps, stepOutput, p.StepIndex+1, p.Outer)
	if err != nil || res.suspended || p.Outer == nil {
		return res, err
	}
	return in.continueParent(ctx, out, p.Outer, res.output)
}

// arrayItems splits a map step's input into items: a JSON array or Go slice
// yields its elements, anything else is one item.
func arrayItems(v any) []any {
	switch x := v.(type) {
	case []any:
		return x
	case json.RawMessage:
		var items []json.RawMessage
		if json.Unmarshal(x, &items) == nil {
			return rawItems(items)
		}
		return []any{x}
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Slice && rv.Type().Elem().Kind() != reflect.Uint8 {
		out := make([]any, rv.Len())
		for i := range out {
			out[i] = rv.Index(i).Interface()
		}
		return out
	}
	return []any{v}
}

func rawItems(raws []json.RawMessage) []any {
	out := make([]any, len(raws))
	for i, r := range raws {
		out[i] = r
	}
	return out
}

func rawList(vs []any) []json.RawMessage {
	out := make([]json.RawMessage, len(vs))
	for i, v := range vs {
		out[i], _ = core.AsJSON(v)
	}
	return out
}
