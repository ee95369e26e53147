package httpstream

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/breadai/bread/core"
)

// A run request with the header "Prefer: respond-async" or the body field
// "background": true is answered 202 at once, with {runId, sessionId} and
// "Location: /runs/{runId}", when the Runtime runs agents in the background
// (core.Detacher). The run goes on after the request ends, on the instance
// that accepted it: GET /runs/{runId}/stream tails it, GET /runs/{runId}
// reads its record, POST /runs/{runId}/cancel ends it. A "webhook" in the
// body is POSTed the run's record when it ends or suspends.

// wantsAsync reports whether the request asks for a background run: the
// body's "background", or a respond-async preference (RFC 7240).
func wantsAsync(r *http.Request, background bool) bool {
	if background {
		return true
	}
	for _, v := range r.Header.Values("Prefer") {
		for pref := range strings.SplitSeq(v, ",") {
			name, _, _ := strings.Cut(pref, ";")
			name, _, _ = strings.Cut(name, "=")
			if strings.EqualFold(strings.TrimSpace(name), "respond-async") {
				return true
			}
		}
	}
	return false
}

// runInBackground starts the run on the Runtime's background and answers
// 202, or the refusal as a plain JSON error before anything ran.
func (h *handlers) runInBackground(w http.ResponseWriter, r *http.Request, agentID string, input json.RawMessage, opts core.RunOptions, webhook string) {
	d, ok := h.inst.(core.Detacher)
	if !ok {
		writeError(w, http.StatusNotImplemented, core.CodeNotImplemented, "this server does not run agents in the background")
		return
	}
	h.answerBackground(w, r, func() (core.Detached, error) {
		return d.RunBackground(r.Context(), agentID, input, opts, core.BackgroundOptions{Webhook: webhook})
	})
}

// answerBackground starts a background run (an agent's or a pipeline's)
// and answers 202 with its Location, or its refusal as a plain JSON error.
func (h *handlers) answerBackground(w http.ResponseWriter, r *http.Request, start func() (core.Detached, error)) {
	run, err := start()
	if err != nil {
		ce := core.Sanitize(err)
		status := refusalStatus(ce.Code)
		if status == http.StatusServiceUnavailable {
			w.Header().Set("Retry-After", RetryAfter)
		}
		if status >= 500 && status != http.StatusNotImplemented {
			// The client sees the code alone: the cause goes to the log.
			h.log.WarnContext(r.Context(), "bread: a background run was refused", "path", r.URL.Path, "status", status, "error", err)
		}
		writeError(w, status, ce.Code, ce.Message)
		return
	}
	if h.g.headers != nil {
		h.g.headers(r, run.RunID, w.Header())
	}
	w.Header().Set("Location", "/runs/"+url.PathEscape(run.RunID))
	w.Header().Set("Preference-Applied", "respond-async")
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
	_ = json.NewEncoder(w).Encode(run)
}

// badBody answers an unreadable run body: in the stream, as before, unless
// the request asked for a background run by its Prefer header; that client
// expects no stream, so it gets a plain JSON error (400, or 413 past the
// body cap).
func (h *handlers) badBody(w http.ResponseWriter, r *http.Request, agentID string, err error) {
	if !wantsAsync(r, false) {
		h.open(w, r).fail(agentID, err)
		return
	}
	ce := core.Sanitize(err)
	status := http.StatusBadRequest
	if ce.Code == core.CodeBodyTooLarge {
		status = http.StatusRequestEntityTooLarge
	}
	writeError(w, status, ce.Code, ce.Message)
}

// refusalStatus is the HTTP status of a background run refused before it
// started. A store that cannot be reached is 503, worth a retry, as a
// draining instance is: it was 500, which the chaos harness's clients got
// while PostgreSQL's connections were being terminated.
func refusalStatus(code string) int {
	switch code {
	case core.CodeInstanceStopping, core.CodeNotStarted, core.CodeStoreUnavailable:
		return http.StatusServiceUnavailable
	case core.CodeSessionBusy:
		return http.StatusConflict
	case core.CodeAgentNotFound, core.CodePipelineNotFound, core.CodeSessionNotFound:
		return http.StatusNotFound
	case core.CodeValidationError, core.CodeBadRequest:
		return http.StatusBadRequest
	case core.CodeConcurrencyLimit:
		return http.StatusTooManyRequests
	case core.CodeNotImplemented: // a Runtime that runs nothing in the background
		return http.StatusNotImplemented
	}
	return http.StatusInternalServerError
}
