package modeltest

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"sync"
	"time"

	"github.com/breadai/bread/core"
)

// Turn is the scripted answer to one model call.
type Turn struct {
	Events []core.ModelEvent
	// Err, when set, is yielded after the events instead of a finish.
	Err error
	// Delay is waited before each event (and before Err).
	Delay time.Duration
	// Block, when true, makes the call wait after its events until its
	// context is cancelled, then yield the context's error.
	Block bool
	// Reached, when set, is closed when Stream is called: a test can wait
	// for the runner to reach this turn.
	Reached chan struct{}
	// Pace, when set, is called before event i (from 0) and may wait: a
	// test paces a long turn by what its client has read, without
	// sleeping. An error ends the call with it.
	Pace func(ctx context.Context, i int) error
}

// Model is a scripted core.LanguageModel, safe for concurrent use. Calls take
// turns in order; after the last turn, the last one repeats.
type Model struct {
	mu       sync.Mutex
	turns    []Turn
	next     int
	requests []core.ModelRequest
}

// New returns a Model that plays turns in order.
func New(turns ...Turn) *Model { return &Model{turns: turns} }

// Registry returns a provider registry naming this model under provider, for
// any model id.
func (m *Model) Registry(provider string) core.ProviderRegistry {
	return core.ProviderRegistry{provider: func(string) (core.LanguageModel, error) { return m, nil }}
}

// Requests returns a copy of every request received so far.
func (m *Model) Requests() []core.ModelRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]core.ModelRequest(nil), m.requests...)
}

// Calls returns how many times Stream was called.
func (m *Model) Calls() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.requests)
}

// Stream implements core.LanguageModel.
func (m *Model) Stream(ctx context.Context, req core.ModelRequest) iter.Seq2[core.ModelEvent, error] {
	m.mu.Lock()
	m.requests = append(m.requests, req)
	var turn Turn
	if len(m.turns) > 0 {
		turn = m.turns[min(m.next, len(m.turns)-1)]
		m.next++
	}
	if turn.Reached != nil {
		select {
		case <-turn.Reached:
		default:
			close(turn.Reached)
		}
	}
	m.mu.Unlock()

	return func(yield func(core.ModelEvent, error) bool) {
		for i, ev := range turn.Events {
			if err := wait(ctx, turn.Delay); err != nil {
				yield(core.ModelEvent{}, err)
				return
			}
			if turn.Pace != nil {
				if err := turn.Pace(ctx, i); err != nil {
					yield(core.ModelEvent{}, err)
					return
				}
			}
			if !yield(ev, nil) {
				return
			}
		}
		if err := wait(ctx, turn.Delay); err != nil {
			yield(core.ModelEvent{}, err)
			return
		}
		switch {
		case turn.Block:
			<-ctx.Done()
			yield(core.ModelEvent{}, ctx.Err())
		case turn.Err != nil:
			yield(core.ModelEvent{}, turn.Err)
		}
	}
}

func wait(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Finish returns a finish event.
func Finish(reason core.FinishReason) core.ModelEvent {
	return core.ModelEvent{Type: core.EventFinish, FinishReason: reason, Usage: core.Usage{InputTokens: 1, OutputTokens: 1, TotalTokens: 2}}
}

// Text is a turn streaming chunks of text, then finishing with "stop".
func Text(chunks ...string) Turn {
	evs := make([]core.ModelEvent, 0, len(chunks)+1)
	for _, c := range chunks {
		evs = append(evs, core.ModelEvent{Type: core.EventTextDelta, Delta: c})
	}
	return Turn{Events: append(evs, Finish(core.FinishStop))}
}

// Reasoning is a turn that thinks in chunks, then answers with text.
func Reasoning(thoughts []string, answer ...string) Turn {
	evs := make([]core.ModelEvent, 0, len(thoughts)+len(answer)+1)
	for _, t := range thoughts {
		evs = append(evs, core.ModelEvent{Type: core.EventReasoningDelta, Delta: t})
	}
	t := Text(answer...)
	t.Events = append(evs, t.Events...)
	return t
}

// JSON is a turn answering structured output: v encoded, split in two chunks
// so consumers must join them.
func JSON(v any) Turn {
	b := mustJSON(v)
	half := len(b) / 2
	return Text(string(b[:half]), string(b[half:]))
}

// Call is one tool call of a turn.
type Call struct {
	ID   string
	Name string
	Args any
}

// ToolCall is a turn calling one tool (call id "call-<name>"), finishing
// with "tool-calls".
func ToolCall(name string, args any) Turn {
	return ToolCalls(Call{ID: "call-" + name, Name: name, Args: args})
}

// ToolCalls is a turn calling several tools at once; empty ids become
// "call-<index>".
func ToolCalls(calls ...Call) Turn {
	evs := make([]core.ModelEvent, 0, len(calls)+1)
	for i, c := range calls {
		id := c.ID
		if id == "" {
			id = fmt.Sprintf("call-%d", i)
		}
		evs = append(evs, core.ModelEvent{Type: core.EventToolCall, ToolCallID: id, ToolName: c.Name, Input: mustJSON(c.Args)})
	}
	return Turn{Events: append(evs, Finish(core.FinishToolCalls))}
}

// StreamedToolCall is a turn whose tool arguments arrive as input deltas
// (tool-input-start, deltas, tool-input-end) before the complete call.
// chunks must join to the JSON arguments.
func StreamedToolCall(id, name string, chunks ...string) Turn {
	evs := []core.ModelEvent{{Type: core.EventToolInputStart, ToolCallID: id, ToolName: name}}
	joined := ""
	for _, c := range chunks {
		joined += c
		evs = append(evs, core.ModelEvent{Type: core.EventToolInputDelta, ToolCallID: id, Delta: c})
	}
	evs = append(evs,
		core.ModelEvent{Type: core.EventToolInputEnd, ToolCallID: id},
		core.ModelEvent{Type: core.EventToolCall, ToolCallID: id, ToolName: name, Input: json.RawMessage(joined)},
		Finish(core.FinishToolCalls),
	)
	return Turn{Events: evs}
}

// File is a turn generating a file, then finishing.
func File(mediaType string, data []byte, name string) Turn {
	return Turn{Events: []core.ModelEvent{
		{Type: core.EventFile, File: &core.GeneratedFile{MediaType: mediaType, Data: data, Name: name}},
		Finish(core.FinishStop),
	}}
}

// Fail is a turn that fails with err after streaming chunks of text.
func Fail(err error, chunks ...string) Turn {
	t := Text(chunks...)
	t.Events = t.Events[:len(t.Events)-1]
	t.Err = err
	return t
}

// Block is a turn that streams chunks, then waits until the call is
// cancelled. reached, when non-nil, is closed when the call starts.
func Block(reached chan struct{}, chunks ...string) Turn {
	t := Text(chunks...)
	t.Events = t.Events[:len(t.Events)-1]
	t.Block = true
	t.Reached = reached
	return t
}

// Slow returns t with delay before each event.
func Slow(t Turn, delay time.Duration) Turn {
	t.Delay = delay
	return t
}

func mustJSON(v any) json.RawMessage {
	if raw, ok := v.(json.RawMessage); ok {
		return raw
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("modeltest: cannot encode %T: %v", v, err))
	}
	return b
}
