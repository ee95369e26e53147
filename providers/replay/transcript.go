package replay

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/breadai/bread/core"
)

// line is one transcript line: a model event of a call.
type line struct {
	Call         int               `json:"call"`
	Type         string            `json:"type"`
	Delta        string            `json:"delta,omitempty"`
	ToolCallID   string            `json:"toolCallId,omitempty"`
	ToolName     string            `json:"toolName,omitempty"`
	Input        json.RawMessage   `json:"input,omitempty"`
	File         *file             `json:"file,omitempty"`
	FinishReason core.FinishReason `json:"finishReason,omitempty"`
	Usage        *core.Usage       `json:"usage,omitempty"`
	// Error, on a line of type "error", fails the call.
	Error *core.ClientError `json:"error,omitempty"`
	// DelayMs waits before the event, for realistic streaming.
	DelayMs int `json:"delayMs,omitempty"`
}

type file struct {
	MediaType string `json:"mediaType"`
	Data      []byte `json:"data"`
	Name      string `json:"name,omitempty"`
}

// step is one event to play: an event, or an error.
type step struct {
	event   core.ModelEvent
	err     error
	delayMs int
}

// Transcript is a parsed recording: the events of each call, in order.
type Transcript struct {
	calls [][]step
}

// Calls returns how many model calls the transcript holds.
func (t *Transcript) Calls() int { return len(t.calls) }

const maxLine = 4 << 20

// Parse reads a transcript. Calls must be numbered 0, 1, 2, ... in order
// (lines of one call are contiguous); every malformed line is an error naming
// its line number, with code INVALID_CONFIG.
func Parse(r io.Reader) (*Transcript, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	t := &Transcript{}
	n := 0
	for sc.Scan() {
		n++
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 || raw[0] == '#' {
			continue
		}
		var l line
		if err := json.Unmarshal(raw, &l); err != nil {
			return nil, bad(n, "not a JSON event: %v", err)
		}
		switch {
		case l.Call == len(t.calls):
			t.calls = append(t.calls, nil)
		case l.Call != len(t.calls)-1:
			return nil, bad(n, "call %d out of order (expected %d or %d)", l.Call, len(t.calls)-1, len(t.calls))
		}
		s, err := l.step()
		if err != nil {
			return nil, bad(n, "%v", err)
		}
		t.calls[l.Call] = append(t.calls[l.Call], s)
	}
	if err := sc.Err(); err != nil {
		return nil, bad(n+1, "%v", err)
	}
	if len(t.calls) == 0 {
		return nil, &core.BreadError{Code: core.CodeInvalidConfig, Message: "replay transcript holds no model call"}
	}
	return t, nil
}

func bad(lineNo int, format string, args ...any) *core.BreadError {
	return &core.BreadError{Code: core.CodeInvalidConfig, Message: fmt.Sprintf("replay transcript line %d: ", lineNo) + fmt.Sprintf(format, args...), Context: map[string]any{"line": lineNo}}
}

func (l line) step() (step, error) {
	s := step{delayMs: max(l.DelayMs, 0)}
	ev := core.ModelEvent{Type: core.ModelEventType(l.Type), Delta: l.Delta, ToolCallID: l.ToolCallID, ToolName: l.ToolName, FinishReason: l.FinishReason}
	switch ev.Type {
	case core.EventTextDelta, core.EventReasoningDelta, core.EventToolInputDelta, core.EventToolInputEnd:
	case core.EventToolInputStart:
		if l.ToolName == "" {
			return s, fmt.Errorf("tool-input-start needs toolName")
		}
	case core.EventToolCall:
		if l.ToolName == "" || l.ToolCallID == "" {
			return s, fmt.Errorf("tool-call needs toolCallId and toolName")
		}
		ev.Input = l.Input
		if len(ev.Input) == 0 {
			ev.Input = json.RawMessage(`{}`)
		}
	case core.EventFile:
		if l.File == nil {
			return s, fmt.Errorf("file needs a file object")
		}
		ev.File = &core.GeneratedFile{MediaType: l.File.MediaType, Data: l.File.Data, Name: l.File.Name}
	case core.EventFinish:
		if l.Usage != nil {
			ev.Usage = *l.Usage
		}
		if ev.FinishReason == "" {
			ev.FinishReason = core.FinishStop
		}
	case "error":
		if l.Error == nil {
			return s, fmt.Errorf("error needs an error object")
		}
		s.err = &core.BreadError{Code: l.Error.Code, Message: l.Error.Message}
		return s, nil
	default:
		return s, fmt.Errorf("unknown event type %q", l.Type)
	}
	s.event = ev
	return s, nil
}

// encode writes one event of a call as a transcript line.
func encode(call int, ev core.ModelEvent, err error) ([]byte, error) {
	l := line{Call: call, Type: string(ev.Type), Delta: ev.Delta, ToolCallID: ev.ToolCallID, ToolName: ev.ToolName, Input: ev.Input, FinishReason: ev.FinishReason}
	if ev.File != nil {
		l.File = &file{MediaType: ev.File.MediaType, Data: ev.File.Data, Name: ev.File.Name}
	}
	if ev.Type == core.EventFinish && ev.Usage != (core.Usage{}) {
		u := ev.Usage
		l.Usage = &u
	}
	if err != nil {
		ce := core.Sanitize(err)
		if be := core.AsBreadError(err, core.CodeProviderError); be != nil {
			ce = core.ClientError{Code: be.Code, Message: be.Message}
		}
		l = line{Call: call, Type: "error", Error: &ce}
	}
	b, mErr := json.Marshal(l)
	return append(b, '\n'), mErr
}
