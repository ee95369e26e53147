package server

import (
	"encoding/json"
	"log/slog"
	"net/http"

	"github.com/breadai/bread/core"
)

// CodeMethodNotAllowed answers a known path with a method it does not serve.
const CodeMethodNotAllowed = "METHOD_NOT_ALLOWED"

// writeJSON encodes v fully before writing, so a value that cannot be
// encoded is a clean 500 rather than half a response.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		body, _ = json.Marshal(errorBody{Error: core.Sanitize(err)})
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

type errorBody struct {
	Error core.ClientError `json:"error"`
}

// writeError answers {"error":{"code","message"}}.
func writeError(w http.ResponseWriter, status int, code, message string) {
	writeJSON(w, status, errorBody{Error: core.ClientError{Code: code, Message: message}})
}

// writeFailure answers a failed store call with 500 and the error reduced
// to what a client may see; the whole error goes to the log.
func writeFailure(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	log.ErrorContext(r.Context(), "bread: request failed", "method", r.Method, "path", r.URL.Path, "error", err)
	writeJSON(w, http.StatusInternalServerError, errorBody{Error: core.Sanitize(err)})
}

// forbidden answers 403 with exactly the seed's body, {"error":"Forbidden"}:
// a refusal says nothing about what exists behind it.
func forbidden(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusForbidden)
	_, _ = w.Write([]byte(ForbiddenBody))
}

// ForbiddenBody is the body of every 403, byte for byte the seed's (the
// original's JSON answer, with no trailing newline).
const ForbiddenBody = `{"error":"Forbidden"}`

func badRequest(w http.ResponseWriter, message string) {
	writeError(w, http.StatusBadRequest, core.CodeBadRequest, message)
}
