package agui

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/breadai/bread/core"
)

// Mapper turns one crumb stream (a run, a resume, or one after the other)
// into AG-UI events. It is stateful, which is what frames the events the
// way the spec wants them: an assistant message opens on a run's first
// text:delta and closes at its next tool call, its end, an error or a
// suspension; every step started is finished before the run finishes; a run
// that suspends for a human finishes with an interrupt outcome.
//
// One Mapper serves one stream; it is not safe for concurrent use. Map each
// crumb in order, then call End once the stream is over.
type Mapper struct {
	active    bool   // RUN_STARTED was sent and no RUN_FINISHED/RUN_ERROR yet
	root      string // the AG-UI run's bread run id
	rootAgent string
	thread    string
	pinned    bool // the thread was given: crumbs' sessions do not change it

	open     map[string]string    // bread run id → its open assistant message id
	thinking map[string]reasoning // bread run id → its open reasoning
	streamed map[string]bool      // tool calls whose arguments arrived as tool:input:*
	steps    []string             // started, unfinished steps, oldest first
	loops    map[string]*LoopState
	nested   map[string]string // nested bread run id → its agent id
	pending  []types.Interrupt // human:required crumbs awaiting End
	seq      int

	// The AG-UI run's state and client tools (SetState, SetClientTools,
	// SetMessages).
	state       json.RawMessage // the STATE_SNAPSHOT the run starts with, until sent
	stateful    bool            // the run has application state: progress goes as CUSTOM
	messages    []types.Message // the MESSAGES_SNAPSHOT the run starts with, until sent
	clientTools map[string]bool
	calling     bool // the run waits on calls of client tools

	// known is the application state the client holds as the stream
	// stands (the STATE_SNAPSHOT sent, every STATE_DELTA applied): what
	// SyncState diffs the stored state against; nil when not known.
	known json.RawMessage
	// thread reads the stored thread (SetThread); foreign are the messages
	// of delegated runs the client was shown, which the thread's history
	// lacks, and anchor the root run's latest tool call, after whose
	// result they go in a MESSAGES_SNAPSHOT.
	reader  ThreadReader
	foreign []foreignMessage
	anchor  string

	// space, when set, is in every message id this Mapper makes: a stream
	// that continues a bread run another stream began (a resume) must not
	// reuse that stream's ids, which the client still holds.
	space string
}

// NewMapper returns a Mapper for one stream.
func NewMapper() *Mapper {
	return &Mapper{
		open:     map[string]string{},
		thinking: map[string]reasoning{},
		streamed: map[string]bool{},
		loops:    map[string]*LoopState{},
		nested:   map[string]string{},
	}
}

// SetState makes the AG-UI run start with a STATE_SNAPSHOT of doc, the
// application state, after RUN_STARTED; core_state_update's deltas follow
// as STATE_DELTA. A run with state reports the progress of delegations,
// tasks and loops as CUSTOM ProgressName events instead of STATE_SNAPSHOT,
// which would replace the application's state. Call it before the first
// Map.
func (m *Mapper) SetState(doc json.RawMessage) {
	m.state, m.stateful = doc, true
}

// SetMessages makes the AG-UI run start with a MESSAGES_SNAPSHOT of msgs,
// after RUN_STARTED (and the STATE_SNAPSHOT). Call it before the first Map.
func (m *Mapper) SetMessages(msgs []types.Message) { m.messages = msgs }

// SetClientTools names the client's tools (RunAgentInput.tools): a
// human:required of one is a call the client answers with a tool message,
// not an interrupt. Its TOOL_CALL_START/ARGS/END go out (when its
// arguments did not stream) and the run finishes with RUN_FINISHED and no
// outcome.
func (m *Mapper) SetClientTools(names []string) {
	m.clientTools = make(map[string]bool, len(names))
	for _, n := range names {
		m.clientTools[n] = true
	}
}

// NewThreadMapper returns a Mapper whose events all carry threadID,
// whatever the sessions of the crumbs: the AG-UI ingress pins the client's
// thread, which a delegated run resumed in its own session must not change.
func NewThreadMapper(threadID string) *Mapper {
	m := NewMapper()
	m.thread, m.pinned = threadID, true
	return m
}

// Map returns the events one crumb becomes, possibly none.
func (m *Mapper) Map(c core.Crumb) []events.Event {
	out := m.mapCrumb(c)
	if m.reader.State == nil && m.reader.Messages == nil {
		return out
	}
	b := c.Base()
	if b.RunID != m.root {
		m.trackForeign(out)
		return out
	}
	switch v := c.(type) {
	case *core.ToolInputStart:
		m.anchor = v.ToolCallID
	case *core.ToolCall:
		m.anchor = v.ToolCallID
	case *core.ToolResult:
		out = m.syncAfterTool(out, b.Timestamp, v.ToolName)
	case *core.ToolError:
		out = m.syncAfterTool(out, b.Timestamp, v.ToolName)
	}
	return out
}

func (m *Mapper) mapCrumb(c core.Crumb) []events.Event {
	b := c.Base()
	ts := b.Timestamp
	var out []events.Event
	if _, more := c.(*core.ReasoningDelta); !more {
		// Reasoning ends where anything else of its run begins.
		out = m.closeReasoning(out, ts, b.RunID)
	}
	switch v := c.(type) {
	case *core.AgentRunStart:
		if !m.active {
			return m.start(out, b)
		}
		if v.RunID == m.root {
			return nil
		}
		m.nested[v.RunID] = v.AgentID
		out = m.stepStarted(out, ts, "subagent_"+v.AgentID)
		return append(out, m.progress(ts, map[string]any{"subagent": map[string]any{
			"parentAgentId": m.rootAgent, "subagentId": v.AgentID, "runId": v.RunID, "status": "running",
		}}))

	case *core.AgentRunEnd:
		if agent, ok := m.nested[v.RunID]; ok && m.active {
			delete(m.nested, v.RunID)
			out = m.closeMessage(out, ts, v.RunID)
			out = m.stepFinished(out, ts, "subagent_"+agent)
			return append(out, m.progress(ts, map[string]any{"subagent": map[string]any{
				"parentAgentId": m.rootAgent, "subagentId": agent, "runId": v.RunID, "status": "finished", "output": v.Output,
			}}))
		}
		out = m.ensure(out, b)
		if f, ok := core.AsFileOutput(v.Output); ok {
			out = m.closeAll(out, ts)
			out = append(out, fileEvent(ts, f))
		}
		return m.finish(out, ts, v.Output, nil)

	case *core.AgentError:
		be := v.Error.ClientSafe()
		if be == nil {
			be = &core.BreadError{Code: core.CodeInternalError, Message: "internal server error"}
		}
		if agent, ok := m.nested[v.RunID]; ok && m.active {
			// A delegated run that failed: its supervisor carries on (the
			// failure is its tool's error), so the AG-UI run goes on too.
			delete(m.nested, v.RunID)
			out = m.closeMessage(out, ts, v.RunID)
			out = m.stepFinished(out, ts, "subagent_"+agent)
			return append(out, m.progress(ts, map[string]any{"subagent": map[string]any{
				"parentAgentId": m.rootAgent, "subagentId": agent, "runId": v.RunID, "status": "failed",
				"error": map[string]any{"code": be.Code, "message": be.Message},
			}}))
		}
		out = m.closeAll(out, ts)
		code := be.Code
		ev := &events.RunErrorEvent{BaseEvent: base(events.EventTypeRunError, ts), Code: &code, Message: be.Message, RunIDValue: b.RunID}
		if ev.RunIDValue == "" {
			ev.RunIDValue = m.root
		}
		m.active, m.pending, m.calling = false, nil, false
		return append(out, ev)

	case *core.TextDelta:
		out = m.ensure(out, b)
		id, ok := m.open[v.RunID]
		if !ok {
			id = m.nextID(v.RunID)
			m.open[v.RunID] = id
			role := "assistant"
			out = append(out, &events.TextMessageStartEvent{BaseEvent: base(events.EventTypeTextMessageStart, ts), MessageID: id, Role: &role})
		}
		return append(out, &events.TextMessageContentEvent{BaseEvent: base(events.EventTypeTextMessageContent, ts), MessageID: id, Delta: v.Delta})

	case *core.ReasoningDelta:
		out = m.ensure(out, b)
		out = m.closeMessage(out, ts, v.RunID)
		r, ok := m.thinking[v.RunID]
		if !ok {
			r = reasoning{phase: m.nextID(v.RunID), message: m.nextID(v.RunID)}
			m.thinking[v.RunID] = r
			out = append(out,
				&events.ReasoningStartEvent{BaseEvent: base(events.EventTypeReasoningStart, ts), MessageID: r.phase},
				&events.ReasoningMessageStartEvent{BaseEvent: base(events.EventTypeReasoningMessageStart, ts), MessageID: r.message, Role: reasoningRole})
		}
		if v.Delta == "" {
			return out
		}
		return append(out, &events.ReasoningMessageContentEvent{BaseEvent: base(events.EventTypeReasoningMessageContent, ts), MessageID: r.message, Delta: v.Delta})

	case *core.FileGenerated:
		out = m.ensure(out, b)
		return append(out, fileEvent(ts, core.FileOutput{URI: v.URI, MimeType: v.MimeType, Name: v.Name}))

	case *core.ToolInputStart:
		out = m.ensure(out, b)
		m.streamed[v.ToolCallID] = true
		return m.toolStart(out, ts, v.RunID, v.ToolCallID, v.ToolName)

	case *core.ToolInputDelta:
		out = m.ensure(out, b)
		return append(out, &events.ToolCallArgsEvent{BaseEvent: base(events.EventTypeToolCallArgs, ts), ToolCallID: v.ToolCallID, Delta: v.Delta})

	case *core.ToolInputEnd:
		out = m.ensure(out, b)
		return append(out, &events.ToolCallEndEvent{BaseEvent: base(events.EventTypeToolCallEnd, ts), ToolCallID: v.ToolCallID})

	case *core.ToolCall:
		out = m.ensure(out, b)
		if m.streamed[v.ToolCallID] {
			// START, ARGS and END went out as the arguments streamed.
			delete(m.streamed, v.ToolCallID)
			return out
		}
		// A provider that does not stream arguments: the whole JSON is
		// the one delta.
		args, err := json.Marshal(v.Args)
		if err != nil || v.Args == nil {
			args = []byte("{}")
		}
		out = m.toolStart(out, ts, v.RunID, v.ToolCallID, v.ToolName)
		return append(out,
			&events.ToolCallArgsEvent{BaseEvent: base(events.EventTypeToolCallArgs, ts), ToolCallID: v.ToolCallID, Delta: string(args)},
			&events.ToolCallEndEvent{BaseEvent: base(events.EventTypeToolCallEnd, ts), ToolCallID: v.ToolCallID})

	case *core.ToolResultPartial:
		if v.ToolName != StateToolName {
			return out
		}
		out = m.ensure(out, b)
		if delta := stateDelta(v.Result); delta != nil {
			m.known = applyDelta(m.known, delta)
			out = append(out, &stateDeltaEvent{BaseEvent: base(events.EventTypeStateDelta, ts), Delta: delta})
		}
		return out

	case *core.ToolResult:
		out = m.ensure(out, b)
		return append(out, m.toolResult(ts, v.RunID, v.ToolCallID, content(v.Result)))

	case *core.ToolError:
		out = m.ensure(out, b)
		be := v.Error.ClientSafe()
		if be == nil {
			be = &core.BreadError{Code: core.CodeToolError, Message: "the tool failed"}
		}
		body, _ := json.Marshal(map[string]any{"error": map[string]string{"code": be.Code, "message": be.Message}})
		return append(out, m.toolResult(ts, v.RunID, v.ToolCallID, string(body)))

	case *core.HumanRequired:
		out = m.ensure(out, b)
		if m.clientTools[v.ToolName] && v.Kind == core.HumanInput && v.ToolCallID != "" {
			// A call of the client's own tool: the client runs it and
			// answers with a tool message on its next RunAgentInput.
			m.calling = true
			m.dropPending(v.CheckpointID)
			if m.streamed[v.ToolCallID] {
				delete(m.streamed, v.ToolCallID)
				return m.closeMessage(out, ts, v.RunID)
			}
			args := core.OptionalJSON(v.Schema)
			if args == nil {
				args = json.RawMessage(`{}`)
			}
			out = m.toolStart(out, ts, v.RunID, v.ToolCallID, v.ToolName)
			return append(out,
				&events.ToolCallArgsEvent{BaseEvent: base(events.EventTypeToolCallArgs, ts), ToolCallID: v.ToolCallID, Delta: string(args)},
				&events.ToolCallEndEvent{BaseEvent: base(events.EventTypeToolCallEnd, ts), ToolCallID: v.ToolCallID})
		}
		// A resume that leaves others of its set waiting names them again:
		// one interrupt per checkpoint still pending, never two.
		m.dropPending(v.CheckpointID)
		m.pending = append(m.pending, interruptOf(v))
		return m.closeMessage(out, ts, v.RunID)

	case *core.HumanResumed:
		m.dropPending(v.CheckpointID)
		return m.ensure(out, b)

	case *core.SubagentRunStart:
		out = m.ensure(out, b)
		out = m.stepStarted(out, ts, "subagent_"+v.SubagentID)
		return append(out, m.progress(ts, map[string]any{"subagent": map[string]any{
			"parentAgentId": v.ParentAgentID, "subagentId": v.SubagentID, "status": "running",
		}}))

	case *core.SubagentRunEnd:
		out = m.ensure(out, b)
		out = m.stepFinished(out, ts, "subagent_"+v.SubagentID)
		return append(out, m.progress(ts, map[string]any{"subagent": map[string]any{
			"parentAgentId": v.ParentAgentID, "subagentId": v.SubagentID, "status": "finished", "output": v.Output,
		}}))

	case *core.TaskStart:
		out = m.ensure(out, b)
		out = m.stepStarted(out, ts, "task_"+v.TaskRunID)
		return append(out, m.progress(ts, map[string]any{"task": map[string]any{
			"taskRunId": v.TaskRunID, "taskId": v.TaskID, "model": v.Model, "status": "running",
		}}))

	case *core.TaskEnd:
		out = m.ensure(out, b)
		out = m.stepFinished(out, ts, "task_"+v.TaskRunID)
		task := map[string]any{"taskRunId": v.TaskRunID, "taskId": v.TaskID, "status": v.Status, "durationMs": v.DurationMs}
		if v.Usage != nil {
			task["usage"] = v.Usage
		}
		if v.Error != "" {
			task["error"] = v.Error
		}
		return append(out, m.progress(ts, map[string]any{"task": task}))

	case *core.PipelineStepStart:
		out = m.ensure(out, b)
		return m.stepStarted(out, ts, pipelineStep(v.StepIndex, v.AgentID))

	case *core.PipelineStepEnd:
		out = m.ensure(out, b)
		return m.stepFinished(out, ts, pipelineStep(v.StepIndex, v.AgentID))

	case *core.LoopStart:
		out = m.ensure(out, b)
		return append(out, m.loop(ts, v.LoopID, func(s *LoopState) {
			s.Phase = "running"
			s.MaxIterations = v.MaxIterations
			s.Pipeline = v.Pipeline
		}))

	case *core.LoopIterationStart:
		out = m.ensure(out, b)
		out = m.stepStarted(out, ts, "loop_iteration_"+strconv.Itoa(v.Iteration))
		return append(out, m.loop(ts, v.LoopID, func(s *LoopState) { s.Phase, s.Iteration = "iterating", v.Iteration }))

	case *core.LoopIterationEnd:
		out = m.ensure(out, b)
		out = m.stepFinished(out, ts, "loop_iteration_"+strconv.Itoa(v.Iteration))
		return append(out, m.loop(ts, v.LoopID, func(s *LoopState) { s.Phase, s.Iteration = "iterated", v.Iteration }))

	case *core.LoopEnd:
		out = m.ensure(out, b)
		return append(out, m.loop(ts, v.LoopID, func(s *LoopState) {
			s.Phase, s.Status, s.Iterations, s.Result = "finished", string(v.Status), v.Iterations, v.Result
		}))
	}
	return nil
}

// End closes the stream: a run that suspended for a human finishes here
// with an interrupt outcome naming every checkpoint it waits on. A stream
// that ended without a terminal crumb (the client left, say) gets nothing:
// there is no truthful outcome to report.
func (m *Mapper) End(timestamp int64) []events.Event {
	if !m.active || (len(m.pending) == 0 && !m.calling) {
		return nil
	}
	out := m.closeAll(nil, timestamp)
	out = m.final(out, timestamp)
	ev := &events.RunFinishedEvent{
		BaseEvent:     base(events.EventTypeRunFinished, timestamp),
		ThreadIDValue: m.thread,
		RunIDValue:    m.root,
	}
	if len(m.pending) > 0 {
		ev.Outcome = &events.RunFinishedOutcome{Type: events.RunFinishedOutcomeTypeInterrupt, Interrupts: m.pending}
	}
	m.active, m.pending, m.calling = false, nil, false
	return append(out, ev)
}

// dropPending forgets the interrupt of checkpoint id, answered or named
// again.
func (m *Mapper) dropPending(id string) {
	m.pending = slices.DeleteFunc(m.pending, func(in types.Interrupt) bool { return in.ID == id })
}

// Interrupts returns the interrupts End will report, for a caller that
// wants them before the stream is over.
func (m *Mapper) Interrupts() []types.Interrupt { return append([]types.Interrupt(nil), m.pending...) }

// start opens the AG-UI run with the crumb's run and session.
func (m *Mapper) start(out []events.Event, b *core.CrumbBase) []events.Event {
	m.active, m.root, m.rootAgent, m.pending, m.calling = true, b.RunID, b.AgentID, nil, false
	if !m.pinned && b.SessionID != "" {
		m.thread = b.SessionID
	}
	out = append(out, &events.RunStartedEvent{BaseEvent: base(events.EventTypeRunStarted, b.Timestamp), ThreadIDValue: m.thread, RunIDValue: b.RunID})
	m.foreign, m.anchor = nil, ""
	if m.state != nil {
		out = append(out, &events.StateSnapshotEvent{BaseEvent: base(events.EventTypeStateSnapshot, b.Timestamp), Snapshot: m.state})
		m.known, m.state = m.state, nil
	}
	if m.messages != nil {
		out = append(out, &events.MessagesSnapshotEvent{BaseEvent: base(events.EventTypeMessagesSnapshot, b.Timestamp), Messages: m.messages})
		m.messages = nil
	}
	return out
}

// ensure opens a run for a crumb that arrives outside one: the first crumb
// of a resumed run (human:resumed), or a composition's crumbs that continue
// after the run that was resumed finished.
func (m *Mapper) ensure(out []events.Event, b *core.CrumbBase) []events.Event {
	if m.active {
		return out
	}
	return m.start(out, b)
}

func (m *Mapper) finish(out []events.Event, ts int64, result any, outcome *events.RunFinishedOutcome) []events.Event {
	out = m.closeAll(out, ts)
	out = m.final(out, ts)
	out = append(out, &events.RunFinishedEvent{
		BaseEvent:     base(events.EventTypeRunFinished, ts),
		ThreadIDValue: m.thread,
		RunIDValue:    m.root,
		Result:        nonNull(result),
		Outcome:       outcome,
	})
	m.active, m.pending, m.calling = false, nil, false
	clear(m.nested)
	return out
}

// closeAll ends every open message, reasoning and step, newest step
// first.
func (m *Mapper) closeAll(out []events.Event, ts int64) []events.Event {
	for run := range m.thinking {
		out = m.closeReasoning(out, ts, run)
	}
	for run := range m.open {
		out = m.closeMessage(out, ts, run)
	}
	for i := len(m.steps) - 1; i >= 0; i-- {
		out = append(out, &events.StepFinishedEvent{BaseEvent: base(events.EventTypeStepFinished, ts), StepName: m.steps[i]})
	}
	m.steps = m.steps[:0]
	return out
}

// reasoningRole is the role of a REASONING_MESSAGE_START: @ag-ui/core 1.0
// accepts "reasoning" and nothing else (its client refuses the event, and
// the run, otherwise).
const reasoningRole = "reasoning"

// reasoning is a run's open reasoning: the phase (REASONING_START/END) and
// the message inside it.
type reasoning struct{ phase, message string }

func (m *Mapper) closeReasoning(out []events.Event, ts int64, run string) []events.Event {
	r, ok := m.thinking[run]
	if !ok {
		return out
	}
	delete(m.thinking, run)
	return append(out,
		&events.ReasoningMessageEndEvent{BaseEvent: base(events.EventTypeReasoningMessageEnd, ts), MessageID: r.message},
		&events.ReasoningEndEvent{BaseEvent: base(events.EventTypeReasoningEnd, ts), MessageID: r.phase})
}

func (m *Mapper) closeMessage(out []events.Event, ts int64, run string) []events.Event {
	id, ok := m.open[run]
	if !ok {
		return out
	}
	delete(m.open, run)
	return append(out, &events.TextMessageEndEvent{BaseEvent: base(events.EventTypeTextMessageEnd, ts), MessageID: id})
}

func (m *Mapper) toolStart(out []events.Event, ts int64, run, id, name string) []events.Event {
	parent, had := m.open[run]
	out = m.closeMessage(out, ts, run)
	ev := &events.ToolCallStartEvent{BaseEvent: base(events.EventTypeToolCallStart, ts), ToolCallID: id, ToolCallName: name}
	if had {
		ev.ParentMessageID = &parent
	}
	return append(out, ev)
}

func (m *Mapper) toolResult(ts int64, run, callID, body string) events.Event {
	role := "tool"
	return &events.ToolCallResultEvent{BaseEvent: base(events.EventTypeToolCallResult, ts), MessageID: m.nextID(run), ToolCallID: callID, Content: body, Role: &role}
}

func (m *Mapper) stepStarted(out []events.Event, ts int64, name string) []events.Event {
	m.steps = append(m.steps, name)
	return append(out, &events.StepStartedEvent{BaseEvent: base(events.EventTypeStepStarted, ts), StepName: name})
}

// stepFinished finishes the newest open step of that name; a step that was
// never started (a stream joined midway) finishes nothing.
func (m *Mapper) stepFinished(out []events.Event, ts int64, name string) []events.Event {
	for i := len(m.steps) - 1; i >= 0; i-- {
		if m.steps[i] == name {
			m.steps = append(m.steps[:i], m.steps[i+1:]...)
			return append(out, &events.StepFinishedEvent{BaseEvent: base(events.EventTypeStepFinished, ts), StepName: name})
		}
	}
	return out
}

func (m *Mapper) nextID(run string) string {
	m.seq++
	if m.space != "" {
		return run + "#" + m.space + "." + strconv.Itoa(m.seq)
	}
	return run + "#" + strconv.Itoa(m.seq)
}

// SetIDSpace puts space in every message id the Mapper makes
// ("<run>#<space>.<n>" instead of "<run>#<n>"): a stream that continues a
// bread run an earlier stream began (a resume, a client tool answered)
// needs ids that one did not use, since the client keeps both streams'
// messages in one list. Call it before the first Map.
func (m *Mapper) SetIDSpace(space string) { m.space = space }

// LoopState is the loop of a STATE_SNAPSHOT: one shape that accretes as
// the loop goes, under the snapshot's "loop" key.
type LoopState struct {
	LoopID        string   `json:"loopId"`
	Phase         string   `json:"phase"`
	Pipeline      []string `json:"pipeline,omitempty"`
	MaxIterations int      `json:"maxIterations,omitempty"`
	Iteration     int      `json:"iteration,omitempty"`
	Iterations    int      `json:"iterations,omitempty"`
	Status        string   `json:"status,omitempty"`
	Result        any      `json:"result,omitempty"`
}

func (m *Mapper) loop(ts int64, id string, patch func(*LoopState)) events.Event {
	s, ok := m.loops[id]
	if !ok {
		s = &LoopState{LoopID: id, Phase: "unknown"}
		m.loops[id] = s
	}
	patch(s)
	cp := *s
	return m.progress(ts, map[string]any{"loop": cp})
}

func pipelineStep(i int, agent string) string { return "step_" + strconv.Itoa(i) + "_" + agent }

func base(t events.EventType, ts int64) *events.BaseEvent {
	return &events.BaseEvent{EventType: t, TimestampMs: &ts}
}

// ProgressName is the CUSTOM event's name for the progress of a
// delegation, task or loop in a run with application state (SetState),
// where a STATE_SNAPSHOT would replace that state; its value is the
// snapshot a run without state gets.
const ProgressName = "BREAD_PROGRESS"

// progress is a delegation's, task's or loop's progress: a STATE_SNAPSHOT,
// or, when the run has application state, a CUSTOM ProgressName event.
func (m *Mapper) progress(ts int64, v any) events.Event {
	if m.stateful {
		return &events.CustomEvent{BaseEvent: base(events.EventTypeCustom, ts), Name: ProgressName, Value: v}
	}
	return &events.StateSnapshotEvent{BaseEvent: base(events.EventTypeStateSnapshot, ts), Snapshot: v}
}

// FileGeneratedName is the CUSTOM event's name for a generated file: one a
// model produced (file:generated) or one a tool stored and the agent gave
// as its output.
const FileGeneratedName = "FILE_GENERATED"

func fileEvent(ts int64, f core.FileOutput) events.Event {
	v := map[string]any{"uri": f.URI, "mimeType": f.MimeType}
	if f.Name != "" {
		v["name"] = f.Name
	}
	return &events.CustomEvent{BaseEvent: base(events.EventTypeCustom, ts), Name: FileGeneratedName, Value: v}
}

// nonNull is v, or nil (left out) for a JSON null in any shape: the spec
// allows no null where a value is optional (RUN_FINISHED's result), and an
// output read back from a crumb log is raw JSON.
func nonNull(v any) any {
	if raw, ok := v.(json.RawMessage); ok && (len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null") {
		return nil
	}
	return v
}

// content is a tool result as TOOL_CALL_RESULT carries it: a string as it
// is, anything else as JSON.
func content(v any) string {
	s, err := core.JSONText(v)
	if err != nil {
		return "null"
	}
	return s
}
