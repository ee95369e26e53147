package httpstream

import (
	"bytes"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/breadai/bread/core"
)

// TestRefusalStatus: a background run refused before it started gets the
// status its code means; a store that cannot be reached is 503, retried
// like a draining instance, not 500.
func TestRefusalStatus(t *testing.T) {
	for code, want := range map[string]int{
		core.CodeInstanceStopping: http.StatusServiceUnavailable,
		core.CodeStoreUnavailable: http.StatusServiceUnavailable,
		core.CodeSessionBusy:      http.StatusConflict,
		core.CodeAgentNotFound:    http.StatusNotFound,
		core.CodeValidationError:  http.StatusBadRequest,
		core.CodeConcurrencyLimit: http.StatusTooManyRequests,
		core.CodeNotImplemented:   http.StatusNotImplemented,
		core.CodeStoreError:       http.StatusInternalServerError,
		core.CodeInternalError:    http.StatusInternalServerError,
	} {
		if got := refusalStatus(code); got != want {
			t.Errorf("%s: %d, want %d", code, got, want)
		}
	}
}

// TestABackgroundRefusalOfTheServersOwnIsLogged: a background run refused
// with a 5xx for the server's own trouble (the store unreachable) answers
// 503 with Retry-After and the code a client may see, and the whole error
// goes to the log; a refusal for the client's input is not logged.
func TestABackgroundRefusalOfTheServersOwnIsLogged(t *testing.T) {
	for _, tc := range []struct {
		err    error
		status int
		logged bool
	}{
		{&core.BreadError{Code: core.CodeStoreUnavailable, Message: "postgres store: cannot reach the database", Cause: errors.New("dial tcp: connection refused")}, http.StatusServiceUnavailable, true},
		{&core.BreadError{Code: core.CodeStoreError, Message: "postgres store: put run: boom"}, http.StatusInternalServerError, true},
		{&core.BreadError{Code: core.CodeAgentNotFound, Message: "agent \"x\" not found"}, http.StatusNotFound, false},
	} {
		var logs bytes.Buffer
		h := &handlers{log: slog.New(slog.NewTextHandler(&logs, nil))}
		rec := httptest.NewRecorder()
		h.answerBackground(rec, httptest.NewRequest("POST", "/agents/x/run", nil), func() (core.Detached, error) { return core.Detached{}, tc.err })
		code := tc.err.(*core.BreadError).Code
		if rec.Code != tc.status || !strings.Contains(rec.Body.String(), code) {
			t.Errorf("%s: %d %s, want %d", code, rec.Code, rec.Body, tc.status)
		}
		if got := rec.Header().Get("Retry-After") != ""; got != (tc.status == http.StatusServiceUnavailable) {
			t.Errorf("%s: Retry-After %q", code, rec.Header().Get("Retry-After"))
		}
		if got := strings.Contains(logs.String(), "a background run was refused"); got != tc.logged {
			t.Errorf("%s: logged %v, want %v: %s", code, got, tc.logged, logs.String())
		}
		if tc.logged && !strings.Contains(logs.String(), code) {
			t.Errorf("%s: the log line lacks the error: %s", code, logs.String())
		}
	}
}
