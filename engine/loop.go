package engine

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/typed"
)

// loopSummary is the loop section of the host agent's prompt.
func loopSummary(cfg *core.LoopConfig) string {
	return strings.Join([]string{
		"## Agent Loop",
		"You can run an iterative loop over a pipeline you compose from this pool of agents: " + strings.Join(cfg.Pool, ", ") + ".",
		"Call `core_start_loop` with `pipeline` (an ordered list of agent ids drawn from the pool) to run the pipeline once and receive its output.",
		"Judge that output. Call `core_iterate_loop` (optionally with `feedback`) to re-run the SAME pipeline and improve the result.",
		"When you are satisfied call `core_finish_loop` with your final result. The loop is capped at " + strconv.Itoa(cfg.MaxIterations) + " iterations.",
	}, "\n")
}

// loopRuntime is a host run's loop state. Loop tools may be called
// concurrently by the model; one mutex serialises them.
type loopRuntime struct {
	r   *run
	cfg *core.LoopConfig

	mu     sync.Mutex
	active *activeLoop
	// held keeps the human:required crumbs of an iteration that suspended
	// until the host's checkpoint links it (see chainSuspend).
	held []core.Crumb
}

type activeLoop struct {
	id         string
	pipeline   []string
	iterations int // completed
	last       any
}

func newLoopRuntime(r *run, cfg *core.LoopConfig) *loopRuntime { return &loopRuntime{r: r, cfg: cfg} }

type startLoopArgs struct {
	Pipeline []string        `json:"pipeline" validate:"required,min=1" jsonschema:"description=Ordered agent ids from the pool to run each iteration"`
	Input    json.RawMessage `json:"input,omitempty" jsonschema:"description=Input of the first iteration"`
}

type iterateLoopArgs struct {
	Feedback json.RawMessage `json:"feedback,omitempty" jsonschema:"description=Your judgement to steer the next iteration"`
}

type finishLoopArgs struct {
	Result json.RawMessage `json:"result,omitempty" jsonschema:"description=The final result you are satisfied with"`
}

func (l *loopRuntime) tools() []core.Tool {
	return []core.Tool{
		typed.DefineTool("start_loop", "Start an iterative loop over a pipeline you compose from the pool; it runs once and its output is returned for you to judge.", l.start),
		typed.DefineTool("iterate_loop", "Re-run the SAME pipeline for another iteration, optionally steered by feedback. Returns the new output.", l.iterate),
		typed.DefineTool("finish_loop", "Finish the active loop, recording your final judged result.", l.finish),
	}
}

func (l *loopRuntime) lc(iteration int) core.LoopContext {
	a := l.active
	return core.LoopContext{LoopID: a.id, Pipeline: slices.Clone(a.pipeline), MaxIterations: l.cfg.MaxIterations, Iteration: iteration}
}

func (l *loopRuntime) start(ctx context.Context, a startLoopArgs, tc core.ToolContext) (map[string]any, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.r
	if l.active != nil {
		return nil, &core.BreadError{Code: core.CodeLoopAlreadyActive, Message: "a loop is already running; call core_finish_loop before starting another", Context: map[string]any{"loopId": l.active.id}}
	}
	var notInPool, missing []string
	for _, id := range a.Pipeline {
		if !slices.Contains(l.cfg.Pool, id) {
			notInPool = append(notInPool, id)
		} else if _, ok := r.in.agents[id]; !ok {
			missing = append(missing, id)
		}
	}
	if len(notInPool) > 0 {
		return nil, &core.BreadError{Code: core.CodeLoopAgentNotInPool, Message: "pipeline agents not in the pool: " + strings.Join(notInPool, ", ") + "; the pool is " + strings.Join(l.cfg.Pool, ", "), Context: map[string]any{"notInPool": notInPool, "pool": l.cfg.Pool}}
	}
	if len(missing) > 0 {
		return nil, &core.BreadError{Code: core.CodeAgentNotFound, Message: "pipeline agents are not registered: " + strings.Join(missing, ", "), Context: map[string]any{"missing": missing}}
	}
	id := l.r.in.newID()
	rec := core.LoopRecord{ID: id, AgentID: r.agent.ID, SessionID: r.sessionID, RunID: r.id, Pool: l.cfg.Pool, Pipeline: a.Pipeline,
		MaxIterations: l.cfg.MaxIterations, Status: core.LoopRunning, StartedAt: core.NowMillis()}
	if err := r.in.store.CreateLoop(ctx, rec); err != nil {
		return nil, err
	}
	l.active = &activeLoop{id: id, pipeline: a.Pipeline}
	emit := builtinEmit(tc)
	emit(&core.LoopStart{CrumbBase: r.base(), LoopID: id, Pipeline: a.Pipeline, MaxIterations: l.cfg.MaxIterations})
	if h := l.cfg.Hooks.OnInit; h != nil {
		h(ctx, l.lc(0))
	}
	var input any
	if len(a.Input) > 0 {
		input = a.Input
	}
	out, err := l.iteration(ctx, tc, input)
	if err != nil {
		return nil, err
	}
	return l.progress(out), nil
}

func (l *loopRuntime) progress(out any) map[string]any {
	return loopProgress(l.active.id, l.active.iterations, l.cfg.MaxIterations, out)
}

// loopProgress is what core_start_loop and core_iterate_loop answer after
// an iteration.
func loopProgress(loopID string, iterations, max int, out any) map[string]any {
	return map[string]any{
		"loopId": loopID, "iteration": iterations, "maxIterations": max,
		"canIterate": iterations < max, "output": out,
	}
}

// restore picks up the loop a resumed host run left open (it suspended
// while the loop was active), so its loop tools go on with it.
func (l *loopRuntime) restore(ctx context.Context) {
	r := l.r
	if !r.in.store.Has(core.StoreLoops) {
		return
	}
	open, err := r.in.store.ListLoops(ctx, core.LoopFilter{SessionID: r.sessionID, AgentID: r.agent.ID, Status: core.LoopRunning})
	if err != nil {
		return
	}
	for _, rec := range open {
		if rec.RunID != r.id {
			continue
		}
		a := &activeLoop{id: rec.ID, pipeline: rec.Pipeline, iterations: rec.Iterations}
		if d, err := r.in.store.GetLoop(ctx, rec.ID); err == nil && len(d.Iterations) > 0 {
			var last any
			if json.Unmarshal(d.Iterations[len(d.Iterations)-1].Output, &last) == nil {
				a.last = last
			}
		}
		l.mu.Lock()
		l.active = a
		l.mu.Unlock()
		return
	}
}

func (l *loopRuntime) takeHeld() []core.Crumb {
	l.mu.Lock()
	defer l.mu.Unlock()
	h := l.held
	l.held = nil
	return h
}

func (l *loopRuntime) iterate(ctx context.Context, a iterateLoopArgs, tc core.ToolContext) (map[string]any, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.active == nil {
		return nil, &core.BreadError{Code: core.CodeNoActiveLoop, Message: "no active loop: call core_start_loop first"}
	}
	if l.active.iterations >= l.cfg.MaxIterations {
		last := l.active.last
		n := l.active.iterations
		if err := l.close(ctx, builtinEmit(tc), core.LoopExhausted, last, true); err != nil {
			return nil, err
		}
		return map[string]any{"exhausted": true, "iteration": n, "maxIterations": l.cfg.MaxIterations, "lastOutput": last,
			"message": "maxIterations reached: the loop is closed; use the last output as your result"}, nil
	}
	next := l.active.last
	if len(a.Feedback) > 0 {
		next = map[string]any{"previousOutput": l.active.last, "feedback": a.Feedback}
	}
	out, err := l.iteration(ctx, tc, next)
	if err != nil {
		return nil, err
	}
	return l.progress(out), nil
}

func (l *loopRuntime) finish(ctx context.Context, a finishLoopArgs, tc core.ToolContext) (map[string]any, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.active == nil {
		return nil, &core.BreadError{Code: core.CodeNoActiveLoop, Message: "no active loop to finish: call core_start_loop first"}
	}
	result := l.active.last
	if len(a.Result) > 0 {
		result = a.Result
	}
	id, n := l.active.id, l.active.iterations
	if err := l.close(ctx, builtinEmit(tc), core.LoopCompleted, result, true); err != nil {
		return nil, err
	}
	return map[string]any{"loopId": id, "iterations": n, "result": result}, nil
}

// iteration runs the loop's pipeline once with the loop's OnError and retry
// around it, stores the iteration and emits its crumbs through the loop
// tool's door (tc's). Called with l.mu held.
func (l *loopRuntime) iteration(ctx context.Context, tc core.ToolContext, input any) (any, error) {
	r, a := l.r, l.active
	emit := builtinEmit(tc)
	index := a.iterations + 1
	started := core.NowMillis()
	emit(&core.LoopIterationStart{CrumbBase: r.base(), LoopID: a.id, Iteration: index})
	if h := l.cfg.Hooks.OnIterationStart; h != nil {
		h(ctx, l.lc(index), input)
	}
	steps := make([]core.PipelineStep, len(a.pipeline))
	for i, id := range a.pipeline {
		steps[i] = core.PipelineStep{Type: core.StepAgent, AgentID: id}
	}
	rs := newRetryState(l.cfg.ErrorHandling.Retry)
	// A human:required of the iteration is held until the host's
	// checkpoint links it, so a client resuming the instant it sees the
	// crumb finds the whole chain.
	//
	// The iteration's runs' crumbs pass the door as they are, so their end
	// writes fold through it as a delegated run's do (delegatedSink): a
	// step's record and the crumb that ends its log commit together.
	var held []core.Crumb
	sink := delegatedSink{forward: builtinForward(tc), funcSink: func(c core.Crumb) {
		if _, ok := c.(*core.HumanRequired); ok {
			held = append(held, c)
			return
		}
		emit(c)
	}}
	ctx, err := r.in.delegating(ctx, r.agent.ID, strings.Join(a.pipeline, ","))
	if err != nil {
		return nil, err
	}
	var out any
	for {
		res, err := r.in.pipeline(ctx, nested{sink}, pipelineRun{id: a.id, runID: a.id + ":" + strconv.Itoa(index)}, steps, input, 0, nil)
		if err == nil && res.suspended {
			// The host suspends with the iteration; the pipeline's
			// completion records the iteration and answers this call.
			rawInput, _ := core.AsJSON(input)
			l.held = append(l.held, held...)
			return nil, &core.BreadError{
				Code:    core.CodeDelegationSuspended,
				Message: "an agent of loop " + a.id + "'s pipeline suspended for a human; the host suspends with it",
				Context: map[string]any{"checkpointIds": res.checkpoints(), "loop": &core.LoopProgress{LoopID: a.id, Iteration: index, Input: rawInput, StartedAt: started}},
			}
		}
		for _, c := range held {
			emit(c)
		}
		held = nil
		if err == nil {
			out = res.output
			break
		}
		if ctx.Err() != nil {
			return nil, err
		}
		be := core.AsBreadError(err, core.CodeLoopError)
		var hr *core.OnErrorResult
		if h := l.cfg.Hooks.OnError; h != nil {
			if hr, err = h(ctx, l.lc(index), be); err != nil {
				return nil, err
			}
		}
		d, final := rs.decide(hr, be)
		if d == decideRecover {
			out = rs.recovered
			break
		}
		if d == decideFail {
			return nil, final
		}
		if err := rs.wait(ctx); err != nil {
			return nil, be
		}
	}
	rawInput, _ := core.AsJSON(input)
	final, err := r.in.recordIteration(ctx, emit, r.base(), l.cfg, l.lc(index), rawInput, out, started)
	if err != nil {
		return nil, err
	}
	a.iterations, a.last = index, final
	return final, nil
}

// recordIteration stores a finished iteration, runs OnIterationEnd (whose
// output, if any, replaces the iteration's for the host) and emits
// loop:iteration:end. It is shared by an iteration that ran through and one
// whose pipeline completed after a human answered (continueWaiting).
func (in *Instance) recordIteration(ctx context.Context, emit func(core.Crumb), base core.CrumbBase, cfg *core.LoopConfig, lc core.LoopContext, input json.RawMessage, out any, started int64) (any, error) {
	output, err := core.AsJSON(out)
	if err != nil {
		return nil, err
	}
	it := core.LoopIteration{ID: in.newID(), LoopID: lc.LoopID, Index: lc.Iteration, Input: input, Output: output, StartedAt: started, CompletedAt: core.NowMillis()}
	if err := in.store.AddLoopIteration(ctx, it); err != nil {
		return nil, err
	}
	if err := in.store.UpdateLoop(ctx, lc.LoopID, core.LoopUpdate{Iterations: lc.Iteration}); err != nil {
		return nil, err
	}
	final := out
	if h := cfg.Hooks.OnIterationEnd; h != nil {
		res, err := h(ctx, lc, out)
		if err != nil {
			return nil, err
		}
		if res != nil {
			final = res.Output
		}
	}
	emit(&core.LoopIterationEnd{CrumbBase: base, LoopID: lc.LoopID, Iteration: lc.Iteration, Output: out})
	return final, nil
}

// close ends the active loop with a status, stores it, emits loop:end and
// calls OnFinish. Called with l.mu held.
func (l *loopRuntime) close(ctx context.Context, emit func(core.Crumb), status core.LoopStatus, result any, withResult bool) error {
	a := l.active
	u := core.LoopUpdate{Status: status, CompletedAt: core.NowMillis()}
	c := &core.LoopEnd{CrumbBase: l.r.base(), LoopID: a.id, Status: status, Iterations: a.iterations}
	if withResult {
		u.Result, _ = core.AsJSON(result)
		c.Result = result
	}
	l.active = nil
	if err := l.r.in.store.UpdateLoop(context.WithoutCancel(ctx), a.id, u); err != nil {
		return err
	}
	emit(c)
	if h := l.cfg.Hooks.OnFinish; h != nil {
		h(ctx, core.LoopContext{LoopID: a.id, Pipeline: a.pipeline, MaxIterations: l.cfg.MaxIterations, Iteration: a.iterations}, status)
	}
	return nil
}

// closeLoop closes a loop the agent left open when its run ends: completed
// with the last output, or failed.
func (r *run) closeLoop(ctx context.Context, failed bool) {
	r.mu.Lock()
	l := r.loop
	r.mu.Unlock()
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.active == nil {
		return
	}
	status := core.LoopCompleted
	if failed {
		status = core.LoopFailed
	}
	emit := func(c core.Crumb) { r.emit(c) }
	if err := l.close(ctx, emit, status, l.active.last, !failed); err != nil {
		r.in.log.Warn("bread: closing a loop left open failed", append(runAttrs(r.id, r.agent.ID, r.sessionID), "error", err)...)
	}
}

// finishIteration records the iteration lp of the host run waiting at
// checkpoint host, whose pipeline completed with out after a human
// answered, and returns what the host's loop tool call answers.
func (in *Instance) finishIteration(ctx context.Context, out sink, host core.CheckpointRecord, lp *core.LoopProgress, output any) (any, error) {
	rt, ok := in.agents[host.AgentID]
	if !ok || rt.Loop == nil || !in.store.Has(core.StoreLoops) {
		return nil, core.Errorf(core.CodePipelineStateLost, "agent %s of checkpoint %s no longer runs loops; loop %s cannot continue", host.AgentID, host.ID, lp.LoopID)
	}
	rec, err := in.store.GetLoop(ctx, lp.LoopID)
	if err != nil {
		return nil, err
	}
	lc := core.LoopContext{LoopID: lp.LoopID, Pipeline: rec.Loop.Pipeline, MaxIterations: rt.Loop.MaxIterations, Iteration: lp.Iteration}
	base := core.CrumbBase{AgentID: host.AgentID, RunID: host.RunID, SessionID: host.SessionID, Timestamp: core.NowMillis()}
	emit := func(c core.Crumb) { out.put(c) }
	final, err := in.recordIteration(ctx, emit, base, rt.Loop, lc, lp.Input, output, lp.StartedAt)
	if err != nil {
		return nil, err
	}
	return loopProgress(lp.LoopID, lp.Iteration, rt.Loop.MaxIterations, final), nil
}
