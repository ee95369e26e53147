package agui

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/breadai/bread/core"
)

// RunAgentInput is the body of the run route, the spec's type.
type RunAgentInput = types.RunAgentInput

// Turn is what one RunAgentInput asks bread to do: run the agent on a new
// message of the thread, or resume the checkpoint one of its interrupts
// named.
type Turn struct {
	// ThreadID is the bread session.
	ThreadID string
	// Input is the content of the last message, the new turn's input
	// (empty when Resume is set).
	Input string
	// Resume lists the interrupts the client answered, in its order; empty
	// for a new message.
	Resume []types.ResumeEntry
}

// maxResumeEntries bounds the interrupts one RunAgentInput may answer.
const maxResumeEntries = 64

// maxThreadID bounds the thread id: it becomes a session id.
const maxThreadID = 256

// ParseRunAgentInput reads a RunAgentInput and says what it asks for. Every
// refusal is a *core.BreadError: BAD_REQUEST for a body that is not one JSON
// object, VALIDATION_ERROR for one that is not a usable RunAgentInput.
//
// Only the last message is read: bread keeps the thread's history in its
// session, so earlier messages a client resends are already there. state,
// tools, context and forwardedProps are accepted and not used.
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
	t := Turn{ThreadID: in.ThreadID}
	if len(in.Resume) > 0 {
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
	return t, nil
}

func badRequest(msg string) error { return &core.BreadError{Code: core.CodeBadRequest, Message: msg} }

func invalid(msg string) error { return &core.BreadError{Code: core.CodeValidationError, Message: msg} }

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
