package core

import (
	"encoding/json"
	"errors"
)

// ToolQuestion is what a tool returns, as its error, to ask a human in the
// middle of a call (an MCP server's elicitation, say): the engine parks the
// call on a checkpoint of kind input whose human:required carries Schema and
// Prompt, exactly as a human tool's would, and ends the run's stream there.
// The answer, given through the ordinary resume, executes the same tool
// again with the same arguments and ToolContext.Answer set; what that
// execution returns is the call's result (or another question).
//
// The tool owns whatever it keeps between the question and the answer (an
// open request to a server, say): the engine keeps nothing in memory, so a
// resume on another replica or after a restart reaches a tool that must do
// without it, and should say so or start over.
type ToolQuestion struct {
	// Schema is the JSON Schema of the answer the tool expects.
	Schema json.RawMessage
	// Prompt is what the human reads.
	Prompt string
}

func (q *ToolQuestion) Error() string { return "the tool asks a human: " + q.Prompt }

// AsToolQuestion reports whether err is (or wraps) a ToolQuestion.
func AsToolQuestion(err error) (*ToolQuestion, bool) {
	var q *ToolQuestion
	if errors.As(err, &q) && q != nil {
		return q, true
	}
	return nil, false
}
