package llm

import (
	"encoding/json"
	"strings"

	"github.com/breadai/bread/core"
)

// toolCallBuffer assembles streamed tool calls. Vendors that stream
// arguments in pieces (OpenAI's index-keyed deltas, Anthropic's
// input_json_delta, Cohere's tool-call-delta) feed it; it keeps each call
// apart by its slot and hands back the complete calls, in the order they
// started, when the turn ends.
type toolCallBuffer struct {
	calls []*pendingCall
}

type pendingCall struct {
	slot  int64
	id    string
	name  string
	args  strings.Builder
	ended bool
}

// find returns the open call in slot, or nil.
func (b *toolCallBuffer) find(slot int64) *pendingCall {
	for i := len(b.calls) - 1; i >= 0; i-- {
		if c := b.calls[i]; c.slot == slot && !c.ended {
			return c
		}
	}
	return nil
}

// start opens a call in slot. A new id in a slot that already holds an open
// call with a different id starts a second call: some OpenAI-compatible
// vendors send every call at index 0.
func (b *toolCallBuffer) start(slot int64, id, name string) (*pendingCall, bool) {
	if c := b.find(slot); c != nil && (id == "" || c.id == "" || c.id == id) {
		if c.id == "" {
			c.id = id
		}
		if c.name == "" {
			c.name = name
		}
		return c, false
	}
	c := &pendingCall{slot: slot, id: id, name: name}
	b.calls = append(b.calls, c)
	return c, true
}

func (b *toolCallBuffer) len() int { return len(b.calls) }

// input returns the call's arguments as JSON; no arguments is {}.
func (c *pendingCall) input() json.RawMessage {
	s := strings.TrimSpace(c.args.String())
	if s == "" {
		return json.RawMessage("{}")
	}
	return json.RawMessage(s)
}

// endEvents returns tool-input-end then tool-call for c.
func (c *pendingCall) endEvents() (core.ModelEvent, core.ModelEvent) {
	c.ended = true
	return core.ModelEvent{Type: core.EventToolInputEnd, ToolCallID: c.id, ToolName: c.name},
		core.ModelEvent{Type: core.EventToolCall, ToolCallID: c.id, ToolName: c.name, Input: c.input()}
}

// flush ends every open call, in start order, and yields their events. It
// reports false when the consumer stopped.
func (b *toolCallBuffer) flush(yield func(core.ModelEvent, error) bool) bool {
	for _, c := range b.calls {
		if c.ended {
			continue
		}
		end, call := c.endEvents()
		if !yield(end, nil) || !yield(call, nil) {
			return false
		}
	}
	b.calls = b.calls[:0]
	return true
}
