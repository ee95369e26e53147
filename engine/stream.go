package engine

import (
	"context"
	"errors"
	"iter"

	"github.com/breadai/bread/core"
)

// sink receives the crumbs of a run. The public stream's sink numbers each
// crumb at the choke point and yields it to the consumer; a nested run's sink
// (a pipeline step, a delegation, a parallel branch) hands its crumbs to its
// parent, possibly from another goroutine over a channel, so only the stream's
// goroutine ever yields.
type sink interface {
	// put passes c on. It returns false once nobody reads the stream; the
	// caller must then wind down.
	put(c core.Crumb) bool
	// end passes the crumb that ends a run (agent:run:end, agent:error) with
	// the run's error. Only the public stream pairs the error with the crumb;
	// nested sinks pass the crumb on like any other.
	end(c core.Crumb, err error)
}

// freshSink is a sink that can be told a run is new: its choke point then
// numbers the run from zero without reading the crumb log.
type freshSink interface {
	fresh(runID, agentID, sessionID string)
}

func (s *streamSink) fresh(runID, agentID, sessionID string) {
	s.cp.openFresh(runID, agentID, sessionID)
}

// foldingSink is a sink whose choke point hands a run's crumb-log entries
// to the run's own start and end writes (chokePoint.fold), so they commit
// with them.
type foldingSink interface {
	fold(c core.Crumb) []core.CrumbLogEntry
	settle(c core.Crumb, entries []core.CrumbLogEntry, committed bool)
}

func (s *streamSink) fold(c core.Crumb) []core.CrumbLogEntry { return s.cp.fold(c) }

func (s *streamSink) settle(c core.Crumb, entries []core.CrumbLogEntry, committed bool) {
	s.cp.settle(c, entries, committed)
}

// streamSink is the public stream: the choke point, then the consumer.
type streamSink struct {
	ctx      context.Context
	cp       *chokePoint
	yield    func(core.Crumb, error) bool
	stopped  bool // the consumer stopped ranging
	reported bool // a run's failure was paired with its agent:error
}

func (s *streamSink) put(c core.Crumb) bool {
	if s.stopped {
		return false
	}
	s.cp.process(s.ctx, c)
	if !s.yield(c, nil) {
		s.stopped = true
	}
	return !s.stopped
}

func (s *streamSink) end(c core.Crumb, err error) {
	if err != nil {
		s.reported = true
	}
	// Even when nobody reads any more, the log and the bus learn how
	// the run ended.
	s.cp.process(s.ctx, c)
	if !s.stopped && !s.yield(c, err) {
		s.stopped = true
	}
}

// funcSink passes crumbs to a function, for runs nested in a tool call or a
// concurrent branch. The function must deliver them to the parent in order.
type funcSink func(core.Crumb)

func (f funcSink) put(c core.Crumb) bool       { f(c); return true }
func (f funcSink) end(c core.Crumb, err error) { f(c) }

// nested wraps a sink for a run inside a composition: its end is an ordinary
// crumb to the parent, which decides how the composition ends.
type nested struct{ parent sink }

func (n nested) put(c core.Crumb) bool       { return n.parent.put(c) }
func (n nested) end(c core.Crumb, err error) { n.parent.put(c) }

// fold and settle let a nested run's end write log its crumbs through its
// parent's choke point: directly when the parent is on the public stream's
// goroutine (a pipeline's sequential step, a resumed step), by a request
// through the branch's channel under a parallel branch (branchSink). Under
// a delegation (a funcSink, another goroutine) there is nothing to fold:
// its crumbs are numbered when they reach the stream.
func (n nested) fold(c core.Crumb) []core.CrumbLogEntry {
	if f, ok := n.parent.(foldingSink); ok {
		return f.fold(c)
	}
	return nil
}

func (n nested) settle(c core.Crumb, entries []core.CrumbLogEntry, committed bool) {
	if f, ok := n.parent.(foldingSink); ok {
		f.settle(c, entries, committed)
	}
}

// errorCrumb builds the agent:error that ends a failed run.
//
// A plain Go error (not a *core.BreadError, not a context error) can carry
// anything: a DSN, a path, a secret. Its text stays in the server's log,
// with the run it belongs to; the crumb says INTERNAL_ERROR.
func (in *Instance) errorCrumb(base core.CrumbBase, err error) (*core.AgentError, *core.BreadError) {
	be, plain := clientError(err, core.CodeAgentError)
	if plain {
		in.log.Error("bread: run failed with an internal error", append(runAttrs(base.RunID, base.AgentID, base.SessionID), "error", err)...)
		if be.Code == core.CodeInternalError {
			be.Message = "the run failed with an internal error; the server logged it"
		}
	}
	base.Timestamp = core.NowMillis()
	base.Seq = 0
	return &core.AgentError{CrumbBase: base, Error: be}, be
}

// clientError is err as a crumb or record that a client reads carries it.
// A *core.BreadError or a context error keeps its code and message
// (core.AsBreadError, with fallback as the code of anything else); an error
// whose text was never meant for a client (a plain Go error, or one that
// AsBreadError wrapped on its way up) is core.Sanitize's INTERNAL_ERROR
// instead, with err as its Cause, and plain is true: the caller logs err.
func clientError(err error, fallback string) (be *core.BreadError, plain bool) {
	be = core.AsBreadError(err, fallback)
	ce := core.Sanitize(be)
	if ce.Code == be.Code && ce.Message == be.Message {
		return be, false
	}
	return &core.BreadError{Code: ce.Code, Message: ce.Message, Cause: err}, true
}

// stream runs body as one public stream: it checks the Instance is started
// and under its run cap, owns the choke point for the stream's lifetime, and
// turns an error body did not report into a final agent:error crumb.
func (in *Instance) stream(ctx context.Context, agentID string, yield func(core.Crumb, error) bool, body func(ctx context.Context, out *streamSink) error) {
	out := &streamSink{ctx: ctx, yield: yield}
	out.cp = in.newChokePoint(ctx)
	release, err := in.admit()
	if err != nil {
		// A job's run refused here is not started: its job goes back to
		// the queue rather than being done with the run still queued.
		in.handBackUnstarted(ctx, presetFrom(ctx), err)
		out.end(in.errorCrumb(core.CrumbBase{AgentID: agentID}, err))
		out.cp.finish()
		return
	}
	// Deferred in this order so the choke point's last log writes land
	// before the run slot is released: Stop's drain waits on the slot, then
	// closes the store.
	defer release()
	defer out.cp.finish()

	err = body(ctx, out)
	if err != nil && !out.reported {
		out.end(in.errorCrumb(core.CrumbBase{AgentID: agentID}, err))
	}
}

// admit checks the Instance accepts runs (Start has finished, Stop has not
// begun) and takes a run slot; release gives it back and lets Stop's drain
// see the run end.
func (in *Instance) admit() (release func(), err error) {
	in.lifeMu.Lock()
	defer in.lifeMu.Unlock()
	if !in.accepting {
		if in.stopped.Load() {
			return nil, &core.BreadError{Code: core.CodeInstanceStopping, Message: "the bread instance is stopping; retry on another replica"}
		}
		return nil, &core.BreadError{Code: core.CodeNotStarted, Message: "the bread instance is not started: call Start first"}
	}
	n := in.inFlight.Add(1)
	if max := int64(in.cfg.MaxConcurrentRuns); max > 0 && n > max {
		in.inFlight.Add(-1)
		return nil, &core.BreadError{Code: core.CodeConcurrencyLimit, Message: "too many runs in flight; retry later", Context: map[string]any{"max": max}}
	}
	in.active.Add(1)
	return func() {
		in.inFlight.Add(-1)
		in.active.Done()
	}, nil
}

// trackRun registers a running run so Cancel can reach it, and holds its
// lease with every RunLeaser plugin while it runs.
func (in *Instance) trackRun(runID string, cancel context.CancelCauseFunc) (untrack func()) {
	in.runsMu.Lock()
	in.runs[runID] = cancel
	in.runsMu.Unlock()
	releases := make([]func(), 0, len(in.leasers))
	for _, l := range in.leasers {
		releases = append(releases, l.HoldLease(context.Background(), runID))
	}
	return func() {
		for _, release := range releases {
			release()
		}
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
var ErrCancelRequested = &core.BreadError{Code: core.CodeRunCancelled, Message: "the run was cancelled"}

// Run starts agentID on input and streams its crumbs. The stream ends with
// agent:run:end, or with agent:error paired with the run's error (the only
// non-nil error the sequence yields), or at human:required when the run
// suspends. Breaking out of the range cancels the run.
func (in *Instance) Run(ctx context.Context, agentID string, input any, opts core.RunOptions) iter.Seq2[core.Crumb, error] {
	return func(yield func(core.Crumb, error) bool) {
		in.stream(ctx, agentID, yield, func(ctx context.Context, out *streamSink) error {
			_, err := in.runAgent(ctx, out, agentID, input, opts, nil)
			return err
		})
	}
}

// RunResult is the outcome of RunSync.
type RunResult struct {
	Output any
	Files  []core.FileOutput
	RunID  string
	// SessionID is the session the run used, to continue the conversation.
	SessionID string
}

// RunSync runs agentID to completion and returns its output. It drains the
// same stream Run yields, so listeners, the log and the bus see a
// synchronous run exactly like a streamed one.
func (in *Instance) RunSync(ctx context.Context, agentID string, input any, opts core.RunOptions) (RunResult, error) {
	var res RunResult
	for c, err := range in.Run(ctx, agentID, input, opts) {
		if err != nil {
			return res, err
		}
		switch v := c.(type) {
		case *core.AgentRunStart:
			if res.RunID == "" {
				res.RunID, res.SessionID = v.RunID, v.SessionID
			}
		case *core.AgentRunEnd:
			if v.RunID == res.RunID {
				res.Output, res.Files = v.Output, v.Files
			}
		case *core.HumanRequired:
			return res, &core.BreadError{
				Code:    core.CodeHumanToolNotInteractive,
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

// branchSink is a parallel branch's sink: its crumbs go, in order, over
// the step's channel to the loop on the stream's goroutine that passes
// them on (instance.parallel). A fold goes the same way and waits for its
// entries, so the branch's earlier crumbs are numbered before its end is,
// and its end write logs them with its record (foldingSink).
type branchSink struct{ ch chan<- core.Crumb }

func (b branchSink) put(c core.Crumb) bool       { b.ch <- c; return true }
func (b branchSink) end(c core.Crumb, err error) { b.ch <- c }

func (b branchSink) fold(c core.Crumb) []core.CrumbLogEntry {
	req := &foldRequest{Crumb: c, reply: make(chan []core.CrumbLogEntry, 1)}
	b.ch <- req
	return <-req.reply
}

func (b branchSink) settle(c core.Crumb, entries []core.CrumbLogEntry, committed bool) {
	b.ch <- &settleRequest{Crumb: c, entries: entries, committed: committed}
}

// delegatedSink is a delegated run's sink: its crumbs go through its
// delegate call's door to the supervisor's goroutine (funcSink). Its end
// write folds through the door too: the request reaches the supervisor's
// run.emit after the crumbs the door passed before it, and waits for its
// entries. What is folded is what the door passes for the end: the end
// itself under passthrough visibility (show nil) or as a loop iteration's
// step; under mediate the subagent:run:end it shows for an agent:run:end
// (show, filterSubAgentCrumb), which the funcSink then passes for the end
// (shown) so it keeps the seq it was logged at; nothing where the end
// passes as nothing (hidden, or a failed run under mediate: its log holds
// no end to lose).
type delegatedSink struct {
	funcSink
	forward func(core.Crumb) bool
	show    func(core.Crumb) core.Crumb
	// folded is the end fold was given and what was folded for it, both
	// on the delegated run's goroutine, as the end's put is.
	folded *shownEnd
}

type shownEnd struct{ of, as core.Crumb }

// shown is what passes for c: what fold folded for it, else show's.
func (d delegatedSink) shown(c core.Crumb) core.Crumb {
	if d.folded != nil && d.folded.of == c {
		return d.folded.as
	}
	if d.show == nil {
		return c
	}
	return d.show(c)
}

func (d delegatedSink) fold(c core.Crumb) []core.CrumbLogEntry {
	f := d.shown(c)
	if f == nil {
		return nil
	}
	if d.folded != nil {
		*d.folded = shownEnd{of: c, as: f}
	}
	req := &foldRequest{Crumb: f, reply: make(chan []core.CrumbLogEntry, 1)}
	if !d.forward(req) {
		return nil
	}
	return <-req.reply
}

func (d delegatedSink) settle(c core.Crumb, entries []core.CrumbLogEntry, committed bool) {
	d.forward(&settleRequest{Crumb: d.shown(c), entries: entries, committed: committed})
}

// foldRequest and settleRequest carry a branch's fold and settle to the
// stream's goroutine, in the order of the branch's crumbs; they are never
// passed on as crumbs.
type foldRequest struct {
	core.Crumb
	reply chan []core.CrumbLogEntry
}

type settleRequest struct {
	core.Crumb
	entries   []core.CrumbLogEntry
	committed bool
}

// foldThrough folds c through out, on the stream's goroutine; nothing
// once the stream's consumer is gone (c will not pass).
func foldThrough(out sink, c core.Crumb, gone bool) []core.CrumbLogEntry {
	if f, ok := out.(foldingSink); ok && !gone {
		return f.fold(c)
	}
	return nil
}

// settleThrough settles through out what foldThrough folded.
func settleThrough(out sink, c core.Crumb, entries []core.CrumbLogEntry, committed bool) {
	if f, ok := out.(foldingSink); ok && len(entries) > 0 {
		f.settle(c, entries, committed)
	}
}
