package agui

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"strings"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/breadai/bread/core"
)

// RunAgentInput is the body of the run route, the spec's type.
type RunAgentInput = types.RunAgentInput

// Turn is what one RunAgentInput asks bread to do: run the agent on a new
// message of the thread, or continue the run waiting on the thread by
// answering its interrupts (Resume) or its client tools' calls
// (ToolResults).
type Turn struct {
	// ThreadID is the bread session.
	ThreadID string
	// Input is the content of the last message, the new turn's input
	// (empty when the turn answers).
	Input string
	// Resume lists the interrupts the client answered, in its order; empty
	// for a new message.
	Resume []types.ResumeEntry
	// ToolResults are the tool messages that end the messages: the
	// client's answers to calls of its tools, in its order.
	ToolResults []ToolResult
	// Client is what the client gives the run besides its input: context,
	// forwardedProps, tools and state.
	Client core.ClientInput
	// Prior is how many messages came before the new ones (the last user
	// message, or the tool messages that end the list); New are those.
	Prior int
	New   []types.Message
}

// ToolResult is a tool message answering a client tool's call.
type ToolResult struct {
	ToolCallID string
	Content    string
}

// maxResumeEntries bounds the interrupts one RunAgentInput may answer.
const maxResumeEntries = 64

// maxThreadID bounds the thread id: it becomes a session id.
const maxThreadID = 256

// ParseRunAgentInput reads a RunAgentInput and says what it asks for. Every
// refusal is a *core.BreadError: BAD_REQUEST for a body that is not one JSON
// object, VALIDATION_ERROR for one that is not a usable RunAgentInput.
//
// Only the new messages are read (the last user message, or the tool
// messages that end the list): bread keeps the thread's history in its
// session, so earlier messages a client resends are already there. state,
// tools, context and forwardedProps become the run's core.ClientInput.
func ParseRunAgentInput(body []byte) (Turn, error) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' {
		return Turn{}, badRequest("the body must be a RunAgentInput JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var in RunAgentInput
	if err := dec.Decode(&in); err != nil {
		return Turn{}, badRequest("the body is not a valid RunAgentInput: " + truncate(err.Error(), 200))
	}
	if _, err := dec.Token(); err != io.EOF {
		return Turn{}, badRequest("the body must be one JSON object with nothing after it")
	}
	if in.ThreadID == "" {
		return Turn{}, invalid(`"threadId" is required`)
	}
	if len(in.ThreadID) > maxThreadID {
		return Turn{}, invalid(`"threadId" is longer than ` + strconv.Itoa(maxThreadID) + " bytes")
	}
	client, err := clientInput(in)
	if err != nil {
		return Turn{}, err
	}
	t := Turn{ThreadID: in.ThreadID, Client: client}
	if len(in.Resume) > maxResumeEntries {
		return Turn{}, invalid("resume answers at most " + strconv.Itoa(maxResumeEntries) + " interrupts per RunAgentInput; got " + strconv.Itoa(len(in.Resume)))
	}
	seen := map[string]bool{}
	for i, r := range in.Resume {
		at := `"resume[` + strconv.Itoa(i) + `]`
		if r.InterruptID == "" {
			return Turn{}, invalid(at + `.interruptId" is required`)
		}
		if seen[r.InterruptID] {
			return Turn{}, invalid(at + `" answers interrupt ` + strconv.Quote(truncate(r.InterruptID, 64)) + " a second time")
		}
		seen[r.InterruptID] = true
		if r.Status != types.ResumeStatusResolved && r.Status != types.ResumeStatusCancelled {
			return Turn{}, invalid(at + `.status" must be "resolved" or "cancelled"`)
		}
	}
	t.Resume = in.Resume
	// The tool messages that end the list answer client tools' calls.
	first := len(in.Messages)
	for first > 0 && in.Messages[first-1].Role == types.RoleTool {
		first--
	}
	if n := len(in.Messages) - first; n > maxResumeEntries {
		return Turn{}, invalid("the messages end with " + strconv.Itoa(n) + " tool messages; at most " + strconv.Itoa(maxResumeEntries) + " are answered per RunAgentInput")
	}
	for i := first; i < len(in.Messages); i++ {
		m := in.Messages[i]
		at := `"messages[` + strconv.Itoa(i) + `]`
		if m.ToolCallID == "" {
			return Turn{}, invalid(at + `.toolCallId" is required on a tool message`)
		}
		content, err := toolContent(m.Content, at)
		if err != nil {
			return Turn{}, err
		}
		if seen[m.ToolCallID] {
			return Turn{}, invalid(at + `" answers tool call ` + strconv.Quote(truncate(m.ToolCallID, 64)) + " a second time")
		}
		seen[m.ToolCallID] = true
		t.ToolResults = append(t.ToolResults, ToolResult{ToolCallID: m.ToolCallID, Content: content})
	}
	if len(t.Resume) > 0 || len(t.ToolResults) > 0 {
		t.Prior, t.New = first, in.Messages[first:]
		return t, nil
	}
	if len(in.Messages) == 0 {
		return Turn{}, invalid(`"messages" must be a non-empty array (or "resume" must answer an interrupt)`)
	}
	last := in.Messages[len(in.Messages)-1]
	text, ok := last.Content.(string)
	if !ok {
		return Turn{}, invalid("the last message must have string content; other content is not supported")
	}
	t.Input = text
	t.Prior, t.New = len(in.Messages)-1, in.Messages[len(in.Messages)-1:]
	return t, nil
}

// toolContent is a tool message's result: its string content, or its
// content parts (@ag-ui/core 1.0 allows them on a tool message) when every
// part is text, joined in order. Bread gives a client tool's result to the
// model as one string, so a part of any other type (an image, a document)
// is VALIDATION_ERROR naming it rather than dropped unseen. at is the
// message's path in the request ("messages[i]) for the error.
func toolContent(content any, at string) (string, error) {
	switch c := content.(type) {
	case string:
		return c, nil
	case []any:
		var b strings.Builder
		for j, part := range c {
			where := at + `.content[` + strconv.Itoa(j) + `]"`
			p, ok := part.(map[string]any)
			if !ok {
				return "", invalid(where + " must be a content part object")
			}
			typ, _ := p["type"].(string)
			if typ != "text" {
				return "", invalid(where + " is a " + strconv.Quote(truncate(typ, 32)) + " part; a tool message's content parts must be text: bread gives the model a client tool's result as text")
			}
			t, ok := p["text"].(string)
			if !ok {
				return "", invalid(where + ` is a text part without a string "text"`)
			}
			b.WriteString(t)
		}
		return b.String(), nil
	}
	return "", invalid(at + `.content" must be a string or an array of text parts: the tool's result`)
}

// clientInput is the part of in bread passes to the run as
// core.ClientInput, checked.
func clientInput(in RunAgentInput) (core.ClientInput, error) {
	var ci core.ClientInput
	for _, c := range in.Context {
		ci.Context = append(ci.Context, core.ContextEntry{Description: c.Description, Value: c.Value})
	}
	for i, t := range in.Tools {
		ct := core.ClientTool{Name: t.Name, Description: t.Description}
		if t.Parameters != nil {
			raw, err := json.Marshal(t.Parameters)
			if err != nil {
				return ci, invalid(`"tools[` + strconv.Itoa(i) + `].parameters" is not JSON`)
			}
			ct.Parameters = raw
		}
		ci.Tools = append(ci.Tools, ct)
	}
	if in.ForwardedProps != nil {
		raw, err := json.Marshal(in.ForwardedProps)
		if err != nil {
			return ci, invalid(`"forwardedProps" is not JSON`)
		}
		ci.ForwardedProps = raw
	}
	if in.State != nil {
		raw, err := json.Marshal(in.State)
		if err != nil {
			return ci, invalid(`"state" is not JSON`)
		}
		ci.State = raw
	}
	if err := ci.Validate(); err != nil {
		return ci, err
	}
	return ci, nil
}

func badRequest(msg string) error { return &core.BreadError{Code: core.CodeBadRequest, Message: msg} }

func invalid(msg string) error { return &core.BreadError{Code: core.CodeValidationError, Message: msg} }

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
