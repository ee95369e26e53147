package otel

import (
	"context"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/breadai/bread/core"
)

// Attribute keys. bread.* are the original bread's; gen_ai.* follow
// OpenTelemetry's GenAI semantic conventions.
const (
	AttrAgentID       = attribute.Key("bread.agent_id")
	AttrRunID         = attribute.Key("bread.run_id")
	AttrSessionID     = attribute.Key("bread.session_id")
	AttrSkill         = attribute.Key("bread.skill")
	AttrStatus        = attribute.Key("bread.status")
	AttrErrorCode     = attribute.Key("bread.error_code")
	AttrDurationMs    = attribute.Key("bread.duration_ms")
	AttrResumed       = attribute.Key("bread.resumed")
	AttrCheckpointID  = attribute.Key("bread.checkpoint_id")
	AttrToolName      = attribute.Key("bread.tool_name")
	AttrToolCallID    = attribute.Key("bread.tool_call_id")
	AttrPipelineID    = attribute.Key("bread.pipeline_id")
	AttrStepIndex     = attribute.Key("bread.step_index")
	AttrParentAgentID = attribute.Key("bread.parent_agent_id")
	AttrSubagentID    = attribute.Key("bread.subagent_id")
	AttrLoopID        = attribute.Key("bread.loop_id")
	AttrIteration     = attribute.Key("bread.iteration")
	AttrIterations    = attribute.Key("bread.iterations")
	AttrMaxIterations = attribute.Key("bread.max_iterations")
	AttrTaskID        = attribute.Key("bread.task_id")
	AttrTaskRunID     = attribute.Key("bread.task_run_id")

	AttrGenAIOperation    = attribute.Key("gen_ai.operation.name")
	AttrGenAISystem       = attribute.Key("gen_ai.system")
	AttrGenAIProvider     = attribute.Key("gen_ai.provider.name")
	AttrGenAIRequestModel = attribute.Key("gen_ai.request.model")
	AttrGenAIAgentName    = attribute.Key("gen_ai.agent.name")
	AttrGenAIToolName     = attribute.Key("gen_ai.tool.name")
	AttrGenAIToolCallID   = attribute.Key("gen_ai.tool.call.id")
	AttrGenAIInputTokens  = attribute.Key("gen_ai.usage.input_tokens")
	AttrGenAIOutputTokens = attribute.Key("gen_ai.usage.output_tokens")
	AttrGenAIFinish       = attribute.Key("gen_ai.response.finish_reasons")
	AttrGenAITokenType    = attribute.Key("gen_ai.token.type")
	AttrErrorType         = attribute.Key("error.type")
)

// Run statuses (bread.status).
const (
	StatusCompleted = "completed"
	StatusFailed    = "failed"
	StatusSuspended = "suspended"
	StatusCancelled = "cancelled"
	StatusUnknown   = "unknown"
)

type scopeKind uint8

const (
	kindRun scopeKind = iota
	kindStep
)

// scope is a run's or a pipeline step's span. The engine opens it
// (ObserveScope) and says when its execution is over; the crumbs that pass
// the choke point say how it ended. Fields below mu are guarded by
// Plugin.mu.
type scope struct {
	p        *Plugin
	kind     scopeKind
	key      string // run id, or step run id
	agentID  string
	span     trace.Span
	ctx      context.Context // carries span, for children made from crumbs
	parent   *scope
	delegate trace.Span // a delegated run's subagent.run span, ended with it
	start    time.Time
	resumed  bool

	closedAt       time.Time // when the engine was done with the scope
	ended          bool
	status         string
	errCode        string
	suspendedBelow bool
	waiting        []*scope // closed children still waiting for their last crumb
}

// child is a span opened and closed by crumbs: a tool call, a loop or an
// iteration, a task.
type child struct {
	span  trace.Span
	run   *scope
	start time.Time
	name  string
}

type scopeKey struct{}

// scopeFrom returns the innermost scope of this plugin that ctx carries.
func (p *Plugin) scopeFrom(ctx context.Context) *scope {
	s, _ := ctx.Value(scopeKey{}).(*scope)
	if s == nil || s.p != p {
		return nil
	}
	return s
}

// ObserveScope implements the engine's ScopeObserver: a run or a pipeline
// step gets its span, which becomes the parent of everything the scope
// does through its context.
func (p *Plugin) ObserveScope(ctx context.Context, c core.Crumb) (context.Context, func()) {
	switch v := c.(type) {
	case *core.AgentRunStart:
		return p.openRun(ctx, v)
	case *core.PipelineStepStart:
		return p.openStep(ctx, v)
	}
	return ctx, nil
}

// metaPrefix prefixes the keys the plugin keeps on a checkpoint.
const metaPrefix = "otel."

// AnnotateCheckpoint implements core.CheckpointAnnotator: the suspending
// run's span context goes on its checkpoint (W3C traceparent), so the run
// that resumes it on any replica links back to it.
func (p *Plugin) AnnotateCheckpoint(ctx context.Context) map[string]string {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return nil
	}
	carrier := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(trace.ContextWithSpanContext(context.Background(), sc), carrier)
	meta := make(map[string]string, len(carrier))
	for k, v := range carrier {
		meta[metaPrefix+k] = v
	}
	return meta
}

// suspendedSpan reads back what AnnotateCheckpoint kept.
func suspendedSpan(meta map[string]string) (trace.SpanContext, bool) {
	carrier := propagation.MapCarrier{}
	for k, v := range meta {
		if key, ok := strings.CutPrefix(k, metaPrefix); ok {
			carrier[key] = v
		}
	}
	if len(carrier) == 0 {
		return trace.SpanContext{}, false
	}
	sc := trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(), carrier))
	return sc, sc.IsValid()
}

func (p *Plugin) openRun(ctx context.Context, v *core.AgentRunStart) (context.Context, func()) {
	parent := p.scopeFrom(ctx)
	s := &scope{p: p, kind: kindRun, key: v.RunID, agentID: v.AgentID, parent: parent, start: time.Now()}
	if parent != nil && parent.kind == kindRun && p.isSupervisor(parent.agentID) {
		// A supervisor's delegation: the child run nests in a span of its own.
		ctx, s.delegate = p.tracer.Start(ctx, "subagent.run", trace.WithAttributes(
			AttrAgentID.String(v.AgentID), AttrParentAgentID.String(parent.agentID), AttrSubagentID.String(v.AgentID)))
	}
	attrs := []attribute.KeyValue{
		AttrAgentID.String(v.AgentID), AttrRunID.String(v.RunID), AttrSessionID.String(v.SessionID),
		AttrGenAIOperation.String("invoke_agent"), AttrGenAIAgentName.String(v.AgentID),
	}
	if v.Skill != "" {
		attrs = append(attrs, AttrSkill.String(v.Skill))
	}
	opts := []trace.SpanStartOption{trace.WithAttributes(attrs...)}
	p.mu.Lock()
	suspended, ok := p.suspended.take(v.RunID)
	p.mu.Unlock()
	if !ok {
		// Resumed in another process: the suspension's trace context
		// travelled on the checkpoint.
		suspended, ok = suspendedSpan(core.CheckpointMetaFrom(ctx))
	}
	if ok {
		s.resumed = true
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: suspended, Attributes: []attribute.KeyValue{attribute.String("bread.link", "suspended_run")}}),
			trace.WithAttributes(AttrResumed.Bool(true)))
	}
	ctx, s.span = p.tracer.Start(ctx, "agent.run", opts...)
	s.ctx = ctx
	p.mu.Lock()
	p.runs[v.RunID] = s
	p.mu.Unlock()
	resumed := "\x00" + strconv.FormatBool(s.resumed)
	p.m.runsStarted.Add(ctx, 1, p.measurement("start\x00"+v.AgentID+resumed, func() metric.MeasurementOption {
		return metric.WithAttributes(AttrAgentID.String(v.AgentID), AttrResumed.Bool(s.resumed))
	}))
	return context.WithValue(ctx, scopeKey{}, s), func() { p.close(s) }
}

func (p *Plugin) openStep(ctx context.Context, v *core.PipelineStepStart) (context.Context, func()) {
	s := &scope{p: p, kind: kindStep, key: v.RunID, agentID: v.AgentID, parent: p.scopeFrom(ctx), start: time.Now()}
	ctx, s.span = p.tracer.Start(ctx, "pipeline.step."+strconv.Itoa(v.StepIndex), trace.WithAttributes(
		AttrPipelineID.String(v.PipelineID), AttrStepIndex.Int(v.StepIndex), AttrAgentID.String(v.AgentID)))
	s.ctx = ctx
	p.mu.Lock()
	p.steps[v.RunID] = s
	p.mu.Unlock()
	return context.WithValue(ctx, scopeKey{}, s), func() { p.close(s) }
}

func (p *Plugin) isSupervisor(agentID string) bool {
	if p.rt == nil {
		return false
	}
	a, ok := p.rt.Agent(agentID)
	return ok && a.Supervisor != nil
}

// close is the engine saying the scope's execution is over. A scope whose
// last crumb already passed has ended; a top-level one ends now; a nested
// one waits for its last crumb, which its parent relays a little later, or
// ends with its parent (a hidden delegation's crumbs never arrive).
func (p *Plugin) close(s *scope) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s.ended {
		return
	}
	s.closedAt = time.Now()
	if s.parent == nil || s.parent.ended {
		p.end(s, s.closedAt)
		return
	}
	s.parent.waiting = append(s.parent.waiting, s)
}

// end ends s's span at the given time, with what the crumbs told. p.mu is
// held.
func (p *Plugin) end(s *scope, at time.Time) {
	if s.ended {
		return
	}
	s.ended = true
	for _, w := range s.waiting {
		p.end(w, w.closedAt)
	}
	s.waiting = nil
	p.endChildren(s, at)
	status := s.status
	if status == "" {
		status = StatusUnknown
		if s.suspendedBelow {
			status = StatusSuspended
		}
	}
	switch s.kind {
	case kindRun:
		if p.runs[s.key] == s {
			delete(p.runs, s.key)
		}
		d := at.Sub(s.start)
		s.span.SetAttributes(AttrStatus.String(status), AttrDurationMs.Int64(d.Milliseconds()))
		attrs := p.measurement("end\x00"+s.agentID+"\x00"+status, func() metric.MeasurementOption {
			return metric.WithAttributes(AttrAgentID.String(s.agentID), AttrStatus.String(status))
		})
		p.m.runsEnded.Add(context.Background(), 1, attrs)
		p.m.runDuration.Record(context.Background(), d.Seconds(), attrs)
	case kindStep:
		if p.steps[s.key] == s {
			delete(p.steps, s.key)
		}
		s.span.SetAttributes(AttrStatus.String(status))
	}
	if s.errCode != "" {
		s.span.SetAttributes(AttrErrorCode.String(s.errCode))
	}
	s.span.End(trace.WithTimestamp(at))
	if s.delegate != nil {
		s.delegate.SetAttributes(AttrStatus.String(status))
		if s.errCode != "" {
			s.delegate.SetStatus(codes.Error, s.errCode)
		}
		s.delegate.End(trace.WithTimestamp(at))
	}
}

// endChildren ends the crumb-made spans of s that are still open.
func (p *Plugin) endChildren(s *scope, at time.Time) {
	for _, m := range []map[string]*child{p.tools, p.loops, p.tasks} {
		for k, c := range m {
			if c.run == s {
				c.span.End(trace.WithTimestamp(at))
				delete(m, k)
			}
		}
	}
}

// endAll ends every open span, when the plugin closes.
func (p *Plugin) endAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	for _, s := range p.runs {
		p.end(s, now)
	}
	for _, s := range p.steps {
		p.end(s, now)
	}
	for _, m := range []map[string]*child{p.tools, p.loops, p.tasks} {
		for k, c := range m {
			c.span.End(trace.WithTimestamp(now))
			delete(m, k)
		}
	}
}

// onCrumb is the plugin's crumb listener: it annotates and ends scopes and
// opens and closes the spans of tools, loops and tasks. Crumbs of runs the
// engine did not open here (relayed from a remote agent) are ignored: the
// remote server traces those.
func (p *Plugin) onCrumb(_ context.Context, c core.Crumb) {
	switch c.(type) {
	case *core.TextDelta, *core.ReasoningDelta, *core.ToolInputStart, *core.ToolInputDelta, *core.ToolInputEnd, *core.ToolResultPartial:
		return // the hot path: nothing to do
	}
	b := c.Base()
	p.mu.Lock()
	defer p.mu.Unlock()
	switch v := c.(type) {
	case *core.AgentRunEnd:
		if s := p.runs[b.RunID]; s != nil {
			s.status = StatusCompleted
			p.end(s, p.endTime(s))
		}
	case *core.SubagentRunEnd: // a mediated delegation's agent:run:end
		if s := p.runs[b.RunID]; s != nil {
			s.status = StatusCompleted
			p.end(s, p.endTime(s))
		}
	case *core.AgentError:
		if s := p.runs[b.RunID]; s != nil && b.RunID != "" {
			s.status = StatusFailed
			if v.Error != nil {
				s.errCode = v.Error.Code
				if v.Error.Code == core.CodeRunCancelled {
					s.status = StatusCancelled
				}
				s.span.SetStatus(codes.Error, v.Error.Code+": "+v.Error.Message)
			}
			p.end(s, p.endTime(s))
		}
	case *core.HumanRequired:
		if s := p.runs[b.RunID]; s != nil {
			s.status = StatusSuspended
			s.span.AddEvent("human.required", trace.WithAttributes(AttrCheckpointID.String(v.CheckpointID), AttrToolName.String(v.ToolName), attribute.String("bread.kind", string(v.Kind))))
			p.suspended.put(b.RunID, s.span.SpanContext())
			for up := s.parent; up != nil; up = up.parent {
				up.suspendedBelow = true
			}
			p.end(s, p.endTime(s))
		}
	case *core.HumanResumed:
		if s := p.runs[b.RunID]; s != nil {
			s.span.SetAttributes(AttrResumed.Bool(true), AttrCheckpointID.String(v.CheckpointID))
		}
	case *core.PipelineStepEnd:
		if s := p.steps[b.RunID]; s != nil {
			s.status = StatusCompleted
			p.end(s, p.endTime(s))
		}
	case *core.FileGenerated:
		if s := p.runs[b.RunID]; s != nil {
			s.span.AddEvent("file.generated", trace.WithAttributes(attribute.String("bread.file_uri", v.URI), attribute.String("bread.file_mime_type", v.MimeType)))
		}
	case *core.ToolCall:
		if s := p.runs[b.RunID]; s != nil {
			p.tools[b.RunID+"\x00"+v.ToolCallID] = p.startChild(s, s.ctx, "tool.call."+v.ToolName,
				AttrToolName.String(v.ToolName), AttrToolCallID.String(v.ToolCallID),
				AttrGenAIOperation.String("execute_tool"), AttrGenAIToolName.String(v.ToolName), AttrGenAIToolCallID.String(v.ToolCallID))
		}
	case *core.ToolResult:
		p.endTool(b.RunID, v.ToolCallID, v.ToolName, v.DurationMs, nil)
	case *core.ToolError:
		p.endTool(b.RunID, v.ToolCallID, v.ToolName, v.DurationMs, v.Error)
	case *core.LoopStart:
		if s := p.runs[b.RunID]; s != nil {
			p.loops[v.LoopID] = p.startChild(s, s.ctx, "loop.run", AttrLoopID.String(v.LoopID),
				attribute.StringSlice("bread.pipeline", v.Pipeline), AttrMaxIterations.Int(v.MaxIterations))
		}
	case *core.LoopIterationStart:
		if s := p.runs[b.RunID]; s != nil {
			parent := s.ctx
			if l := p.loops[v.LoopID]; l != nil {
				parent = trace.ContextWithSpan(s.ctx, l.span)
			}
			p.loops[v.LoopID+":"+strconv.Itoa(v.Iteration)] = p.startChild(s, parent, "loop.iteration."+strconv.Itoa(v.Iteration),
				AttrLoopID.String(v.LoopID), AttrIteration.Int(v.Iteration))
		}
	case *core.LoopIterationEnd:
		p.endLoop(v.LoopID+":"+strconv.Itoa(v.Iteration), nil)
	case *core.LoopEnd:
		// A failed iteration leaves its start unmatched: close it too.
		p.endLoop(v.LoopID+":"+strconv.Itoa(v.Iterations+1), nil)
		p.endLoop(v.LoopID, []attribute.KeyValue{AttrStatus.String(string(v.Status)), AttrIterations.Int(v.Iterations)})
	case *core.TaskStart:
		if s := p.runs[b.RunID]; s != nil {
			p.tasks[v.TaskRunID] = p.startChild(s, s.ctx, "task."+v.TaskID, AttrTaskID.String(v.TaskID), AttrTaskRunID.String(v.TaskRunID),
				AttrGenAISystem.String(v.Model.Provider), AttrGenAIRequestModel.String(v.Model.Model))
		}
	case *core.TaskEnd:
		if c := p.tasks[v.TaskRunID]; c != nil {
			delete(p.tasks, v.TaskRunID)
			c.span.SetAttributes(AttrStatus.String(string(v.Status)), AttrDurationMs.Int64(v.DurationMs))
			if v.Usage != nil {
				c.span.SetAttributes(AttrGenAIInputTokens.Int64(v.Usage.InputTokens), AttrGenAIOutputTokens.Int64(v.Usage.OutputTokens))
			}
			if v.Error != "" {
				c.span.SetStatus(codes.Error, v.Error)
			}
			c.span.End()
		}
	}
}

// endTime is when a scope ends as its last crumb arrives: when the engine
// was done with it if it already said so, else now.
func (p *Plugin) endTime(s *scope) time.Time {
	if !s.closedAt.IsZero() {
		return s.closedAt
	}
	return time.Now()
}

func (p *Plugin) startChild(s *scope, parent context.Context, name string, attrs ...attribute.KeyValue) *child {
	_, span := p.tracer.Start(parent, name, trace.WithAttributes(attrs...))
	return &child{span: span, run: s, start: time.Now(), name: name}
}

func (p *Plugin) endTool(runID, callID, name string, durationMs int64, be *core.BreadError) {
	key := runID + "\x00" + callID
	c := p.tools[key]
	if c == nil {
		s := p.runs[runID]
		if s == nil {
			return
		}
		// A call that failed before it started (an unknown tool).
		c = p.startChild(s, s.ctx, "tool.call."+name, AttrToolName.String(name), AttrToolCallID.String(callID),
			AttrGenAIOperation.String("execute_tool"), AttrGenAIToolName.String(name), AttrGenAIToolCallID.String(callID))
	}
	delete(p.tools, key)
	c.span.SetAttributes(AttrDurationMs.Int64(durationMs))
	outcome := "ok"
	if be != nil {
		outcome = "error"
		c.span.SetAttributes(AttrErrorCode.String(be.Code), AttrErrorType.String(be.Code))
		c.span.SetStatus(codes.Error, be.Code+": "+be.Message)
	}
	c.span.End()
	p.m.toolTime.Record(context.Background(), time.Since(c.start).Seconds(), p.measurement("tool\x00"+name+"\x00"+outcome, func() metric.MeasurementOption {
		return metric.WithAttributes(AttrToolName.String(name), attribute.String("bread.outcome", outcome))
	}))
}

func (p *Plugin) endLoop(key string, attrs []attribute.KeyValue) {
	if c := p.loops[key]; c != nil {
		delete(p.loops, key)
		c.span.SetAttributes(attrs...)
		c.span.End()
	}
}

// spanRing remembers the span contexts of suspended runs by run id, the
// newest n of them, so a resumed run in this process can link back.
type spanRing struct {
	byRun map[string]ringEntry
	order []string
	next  int
}

type ringEntry struct {
	sc   trace.SpanContext
	slot int
}

func newSpanRing(n int) *spanRing {
	return &spanRing{byRun: make(map[string]ringEntry, n), order: make([]string, n)}
}

func (r *spanRing) put(runID string, sc trace.SpanContext) {
	if old := r.order[r.next]; old != "" {
		if e, ok := r.byRun[old]; ok && e.slot == r.next {
			delete(r.byRun, old)
		}
	}
	r.order[r.next] = runID
	r.byRun[runID] = ringEntry{sc: sc, slot: r.next}
	r.next = (r.next + 1) % len(r.order)
}

func (r *spanRing) take(runID string) (trace.SpanContext, bool) {
	e, ok := r.byRun[runID]
	if ok {
		delete(r.byRun, runID)
	}
	return e.sc, ok
}
