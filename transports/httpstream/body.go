package httpstream

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/breadai/bread/core"
)

// runBody is the body of POST /agents/{id}/run.
type runBody struct {
	Input   json.RawMessage     `json:"input"`
	Session core.SessionOptions `json:"session"`
	Skill   string              `json:"skill"`
}

// pipelineBody is the body of POST /pipelines/{id}/run.
type pipelineBody struct {
	Input json.RawMessage `json:"input"`
}

// resumeBody is the body of POST /resume/{checkpointId}.
type resumeBody struct {
	Response json.RawMessage `json:"response"`
}

// emptyObject is the input of a run whose request names none, as in the
// original.
var emptyObject = json.RawMessage(`{}`)

func inputOrEmpty(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return emptyObject
	}
	return raw
}

// decodeBody reads a JSON object into v. An empty body leaves v as it is;
// anything unreadable is BAD_REQUEST (BODY_TOO_LARGE past the server's cap).
func decodeBody(r *http.Request, v any) error {
	data, err := io.ReadAll(r.Body)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return &core.BreadError{Code: core.CodeBodyTooLarge, Message: "request body too large", Cause: err}
		}
		return &core.BreadError{Code: core.CodeBadRequest, Message: "the request body could not be read", Cause: err}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	if err := json.Unmarshal(data, v); err != nil {
		return &core.BreadError{Code: core.CodeBadRequest, Message: "the request body is not a valid JSON object: " + err.Error(), Cause: err}
	}
	return nil
}
