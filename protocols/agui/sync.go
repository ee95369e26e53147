package agui

import (
	"bytes"
	"encoding/json"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	jsonpatch "github.com/evanphx/json-patch/v5"
)

// ThreadReader reads what the store keeps of a stream's thread, so the
// Mapper can keep the client in step with it (SetThread). Either func may
// be nil; each is called on the stream's goroutine, between two events.
type ThreadReader struct {
	// State returns the thread's state document as stored, nil for none.
	State func() json.RawMessage
	// Messages returns the thread's history as AG-UI messages, nil for
	// none (then no MESSAGES_SNAPSHOT goes out).
	Messages func() []types.Message
}

// SetThread has the Mapper read its thread as the AG-UI run goes, which is
// what the ingress does:
//   - after a tool of the run returns (any tool but core_state_update and
//     the client's own), the stored state: a change a Go tool made
//     (Storage.PutSessionState) reaches the client in the same run, through
//     SyncState;
//   - before every RUN_FINISHED (the run's end, or End for a run waiting on
//     a human or a client tool): the state again, then MESSAGES_SNAPSHOT
//     of the thread's history, the messages the run added included, so the
//     client can reconcile its list with what bread keeps (the tool
//     results it was not streamed, the store's message ids). Messages of
//     delegated runs the client was shown (passthrough) are not the
//     thread's; the snapshot keeps them, after the result of the tool call
//     that delegated, where the client has them.
//
// A RUN_ERROR gets neither. Call it before the first Map.
func (m *Mapper) SetThread(r ThreadReader) { m.reader = r }

// SyncState brings the client's application state to doc, the thread's
// state as stored: nothing when the client holds it already; STATE_DELTA,
// the RFC 6902 patch from the state this stream gave the client (its
// STATE_SNAPSHOT and every STATE_DELTA since), when that is known; else
// STATE_SNAPSHOT of doc, after which the progress of delegations, tasks
// and loops goes out as CUSTOM ProgressName events (the run has
// application state now). A nil or null doc, or a Mapper outside a run,
// sends nothing: a client cannot be told that its state is gone.
func (m *Mapper) SyncState(doc json.RawMessage, timestamp int64) []events.Event {
	doc = bytes.TrimSpace(doc)
	if !m.active || len(doc) == 0 || string(doc) == "null" {
		return nil
	}
	if m.known != nil {
		if delta, err := stateDiff(m.known, doc); err == nil {
			m.known = doc
			if string(delta) == "[]" {
				return nil
			}
			return []events.Event{&stateDeltaEvent{BaseEvent: base(events.EventTypeStateDelta, timestamp), Delta: delta}}
		}
	}
	m.known, m.stateful = doc, true
	return []events.Event{&events.StateSnapshotEvent{BaseEvent: base(events.EventTypeStateSnapshot, timestamp), Snapshot: doc}}
}

// syncAfterTool reads the stored state after a tool of the run returned,
// unless the tool was core_state_update (its STATE_DELTA went out already)
// or the client's own (it ran in the client).
func (m *Mapper) syncAfterTool(out []events.Event, ts int64, tool string) []events.Event {
	if m.reader.State == nil || tool == StateToolName || m.clientTools[tool] {
		return out
	}
	return append(out, m.SyncState(m.reader.State(), ts)...)
}

// final is what goes out just before a RUN_FINISHED when the Mapper reads
// its thread: the state brought in step, then MESSAGES_SNAPSHOT.
func (m *Mapper) final(out []events.Event, ts int64) []events.Event {
	if m.reader.State != nil {
		out = append(out, m.SyncState(m.reader.State(), ts)...)
	}
	if m.reader.Messages != nil {
		if msgs := m.reader.Messages(); len(msgs) > 0 {
			out = append(out, &events.MessagesSnapshotEvent{BaseEvent: base(events.EventTypeMessagesSnapshot, ts), Messages: m.withForeign(msgs)})
		}
	}
	m.foreign, m.anchor = nil, ""
	return out
}

// applyDelta is the state the client holds once it applied delta to doc,
// or nil (not known) when it cannot be computed: the next SyncState then
// sends a snapshot rather than a diff against a guess.
func applyDelta(doc, delta json.RawMessage) json.RawMessage {
	if doc == nil {
		return nil
	}
	p, err := jsonpatch.DecodePatch(delta)
	if err != nil {
		return nil
	}
	next, err := p.Apply(doc)
	if err != nil {
		return nil
	}
	return next
}

// foreignMessage is a message of a delegated run the client was shown, as
// the client built it from the events, and the root run's tool call it
// came under.
type foreignMessage struct {
	anchor string
	msg    types.Message
	text   string
}

// trackForeign records the messages a delegated run's events make in the
// client's list (@ag-ui/client's own rules: a text message; a tool call
// added to its parent message, or to a message of its own id; a tool
// result).
func (m *Mapper) trackForeign(out []events.Event) {
	find := func(id string) *foreignMessage {
		for i := range m.foreign {
			if m.foreign[i].msg.ID == id {
				return &m.foreign[i]
			}
		}
		return nil
	}
	for _, ev := range out {
		switch e := ev.(type) {
		case *events.TextMessageStartEvent:
			m.foreign = append(m.foreign, foreignMessage{anchor: m.anchor, msg: types.Message{ID: e.MessageID, Role: types.RoleAssistant}})
		case *events.TextMessageContentEvent:
			if f := find(e.MessageID); f != nil {
				f.text += e.Delta
			}
		case *events.ToolCallStartEvent:
			call := types.ToolCall{ID: e.ToolCallID, Type: types.ToolCallTypeFunction, Function: types.FunctionCall{Name: e.ToolCallName}}
			if e.ParentMessageID != nil {
				if f := find(*e.ParentMessageID); f != nil {
					f.msg.ToolCalls = append(f.msg.ToolCalls, call)
					continue
				}
			}
			m.foreign = append(m.foreign, foreignMessage{anchor: m.anchor, msg: types.Message{ID: e.ToolCallID, Role: types.RoleAssistant, ToolCalls: []types.ToolCall{call}}})
		case *events.ToolCallArgsEvent:
			for i := range m.foreign {
				for j := range m.foreign[i].msg.ToolCalls {
					if tc := &m.foreign[i].msg.ToolCalls[j]; tc.ID == e.ToolCallID {
						tc.Function.Arguments += e.Delta
					}
				}
			}
		case *events.ToolCallResultEvent:
			m.foreign = append(m.foreign, foreignMessage{anchor: m.anchor, msg: types.Message{ID: e.MessageID, Role: types.RoleTool, ToolCallID: e.ToolCallID, Content: e.Content}})
		}
	}
}

// withForeign is the thread's history with the delegated runs' messages
// put back where the client has them: after the assistant message holding
// the root run's call they came under and the tool results that follow it;
// at the end when that call is not in the history.
func (m *Mapper) withForeign(history []types.Message) []types.Message {
	if len(m.foreign) == 0 {
		return history
	}
	msgs := func(anchor string) []types.Message {
		var out []types.Message
		for _, f := range m.foreign {
			if f.anchor != anchor {
				continue
			}
			msg := f.msg
			if f.text != "" {
				msg.Content = f.text
			}
			if msg.Role == types.RoleAssistant && msg.Content == nil && len(msg.ToolCalls) == 0 {
				continue
			}
			out = append(out, msg)
		}
		return out
	}
	placed := map[string]bool{}
	out := make([]types.Message, 0, len(history)+len(m.foreign))
	var waiting []string // anchors whose messages go after the next non-tool message's predecessor
	flush := func() {
		for _, a := range waiting {
			out = append(out, msgs(a)...)
			placed[a] = true
		}
		waiting = waiting[:0]
	}
	anchors := map[string]bool{}
	for _, f := range m.foreign {
		anchors[f.anchor] = true
	}
	for _, h := range history {
		if h.Role != types.RoleTool {
			flush()
		}
		out = append(out, h)
		for _, tc := range h.ToolCalls {
			if anchors[tc.ID] && !placed[tc.ID] {
				waiting = append(waiting, tc.ID)
			}
		}
	}
	flush()
	for _, f := range m.foreign {
		if !placed[f.anchor] {
			out = append(out, msgs(f.anchor)...)
			placed[f.anchor] = true
		}
	}
	return out
}
