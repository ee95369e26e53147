package server

import (
	"errors"
	"net/http"

	"github.com/breadai/bread/core"
)

// cancelRun serves POST /runs/{runId}/cancel. After the action grant the
// streams' AuthorizeStream (Options.Streams) runs too: whoever may not watch
// a run may not stop it.
func (s *Server) cancelRun(w http.ResponseWriter, r *http.Request) {
	runID := r.PathValue("runId")
	if !s.streams.AuthorizeStream(r.Context(), core.IdentityFrom(r.Context()), runID) {
		forbidden(w)
		return
	}
	// A background run still in the job queue is cancelled there first:
	// it never starts. One a worker took meanwhile is running, for the
	// canceller.
	found, err := s.inst.CancelQueued(r.Context(), runID)
	if err == nil && !found {
		found, err = s.canceller.Cancel(r.Context(), runID)
	}
	if err == nil && !found {
		// Not running anywhere the canceller reaches: it may be waiting
		// for a human, which any replica can end through the store.
		found, err = s.inst.CancelSuspended(r.Context(), runID)
	}
	var be *core.BreadError
	switch {
	case errors.As(err, &be) && be.Code == core.CodeCheckpointClaimed:
		writeError(w, http.StatusConflict, be.Code, be.Message)
	case errors.As(err, &be) && be.Code == core.CodeNotImplemented:
		writeError(w, http.StatusNotImplemented, be.Code, be.Message)
	case err != nil:
		writeFailure(w, r, s.log, err)
	case !found:
		writeError(w, http.StatusNotFound, core.CodeNotFound, "run "+quote(runID)+" is neither queued, running here nor waiting for a human")
	default:
		writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
	}
}
