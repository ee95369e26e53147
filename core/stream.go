package core

import (
	"context"
	"errors"
	"iter"
)

// emitter hands a run's crumbs to the choke point and on to the consumer of
// the public stream. It is used only from the stream's goroutine; work that
// runs concurrently (tool calls, parallel branches) sends its crumbs to that
// goroutine instead of emitting directly.
type emitter struct {
	ctx      context.Context
	cp       *chokePoint
	yield    func(Crumb, error) bool
	stopped  bool // the consumer stopped ranging
	terminal bool // a terminal crumb (agent:run:end of the top run, or agent:error) went out
}

// emit passes c through the choke point and yields it. It returns false once
// the consumer has stopped ranging; the caller must then wind down.
func (e *emitter) emit(c Crumb) bool {
	if e.stopped {
		return false
	}
	e.cp.process(e.ctx, c)
	if !e.yield(c, nil) {
		e.stopped = true
	}
	return !e.stopped
}

// fail emits the agent:error crumb that ends a failed run, paired with its
// error, and marks the stream as reported.
func (e *emitter) fail(base CrumbBase, err error) {
	be := AsBreadError(err, CodeAgentError)
	base.Timestamp = NowMillis()
	base.Seq = 0
	c := &AgentError{CrumbBase: base, Error: be}
	e.terminal = true
	if e.stopped {
		// Nobody reads the stream any more, but the log and the transport
		// still learn how the run ended.
		e.cp.process(e.ctx, c)
		return
	}
	e.cp.process(e.ctx, c)
	if !e.yield(c, be) {
		e.stopped = true
	}
}

// stream runs body as one public stream: it checks the Instance is started
// and under its run cap, owns the choke point for the stream's lifetime, and
// turns an unreported error from body into a final agent:error crumb.
func (in *Instance) stream(ctx context.Context, agentID string, yield func(Crumb, error) bool, body func(ctx context.Context, e *emitter) error) {
	e := &emitter{ctx: ctx, yield: yield}
	e.cp = in.newChokePoint(ctx)
	defer e.cp.finish()

	if err := in.admit(); err != nil {
		e.fail(CrumbBase{AgentID: agentID}, err)
		return
	}
	defer in.inFlight.Add(-1)

	err := body(ctx, e)
	if err != nil && !e.terminal {
		e.fail(CrumbBase{AgentID: agentID}, err)
	}
}

// admit checks the Instance is started and takes a run slot.
func (in *Instance) admit() error {
	if !in.started.Load() {
		return &BreadError{Code: CodeNotStarted, Message: "the bread instance is not started: call Start first"}
	}
	n := in.inFlight.Add(1)
	if max := int64(in.cfg.MaxConcurrentRuns); max > 0 && n > max {
		in.inFlight.Add(-1)
		return &BreadError{Code: CodeConcurrencyLimit, Message: "too many runs in flight; retry later", Context: map[string]any{"max": max}}
	}
	return nil
}

// trackRun registers a running run so Cancel can reach it.
func (in *Instance) trackRun(runID string, cancel context.CancelCauseFunc) (untrack func()) {
	in.runsMu.Lock()
	in.runs[runID] = cancel
	in.runsMu.Unlock()
	return func() {
		in.runsMu.Lock()
		delete(in.runs, runID)
		in.runsMu.Unlock()
	}
}

// Cancel cancels a run running on this Instance. The run ends with an
// agent:error crumb whose code is RUN_CANCELLED. It reports whether the run
// was found here.
func (in *Instance) Cancel(runID string) bool {
	in.runsMu.Lock()
	cancel, ok := in.runs[runID]
	in.runsMu.Unlock()
	if ok {
		cancel(ErrCancelRequested)
	}
	return ok
}

// ErrCancelRequested is the cause of a run cancelled through Instance.Cancel.
var ErrCancelRequested = &BreadError{Code: CodeRunCancelled, Message: "the run was cancelled"}

// Run starts agentID on input and streams its crumbs. The stream ends with
// agent:run:end, or with agent:error paired with the run's error (the only
// non-nil error the sequence yields), or at human:required when the run
// suspends. Breaking out of the range cancels the run.
func (in *Instance) Run(ctx context.Context, agentID string, input any, opts RunOptions) iter.Seq2[Crumb, error] {
	return func(yield func(Crumb, error) bool) {
		in.stream(ctx, agentID, yield, func(ctx context.Context, e *emitter) error {
			return in.runAgent(ctx, e, agentID, input, opts)
		})
	}
}

// RunResult is the outcome of RunSync.
type RunResult struct {
	Output any
	Files  []FileOutput
	RunID  string
	// SessionID is the session the run used, to continue the conversation.
	SessionID string
}

// RunSync runs agentID to completion and returns its output. It drains the
// same stream Run yields, so listeners, the log and the transport see a
// synchronous run exactly like a streamed one.
func (in *Instance) RunSync(ctx context.Context, agentID string, input any, opts RunOptions) (RunResult, error) {
	var res RunResult
	for c, err := range in.Run(ctx, agentID, input, opts) {
		if err != nil {
			return res, err
		}
		switch v := c.(type) {
		case *AgentRunStart:
			if res.RunID == "" {
				res.RunID, res.SessionID = v.RunID, v.SessionID
			}
		case *AgentRunEnd:
			if v.RunID == res.RunID {
				res.Output, res.Files = v.Output, v.Files
			}
		case *HumanRequired:
			return res, &BreadError{
				Code:    CodeHumanToolNotInteractive,
				Message: "the run suspended for a human (tool " + v.ToolName + "); resume checkpoint " + v.CheckpointID,
				Context: map[string]any{"checkpointId": v.CheckpointID, "toolName": v.ToolName},
			}
		}
	}
	if res.RunID == "" {
		return res, errors.New("bread: the run produced no crumbs")
	}
	return res, nil
}
