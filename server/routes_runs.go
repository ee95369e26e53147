package server

import (
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
	found, err := s.canceller.Cancel(r.Context(), runID)
	switch {
	case err != nil:
		writeFailure(w, r, s.log, err)
	case !found:
		writeError(w, http.StatusNotFound, core.CodeNotFound, "run "+quote(runID)+" is not running here")
	default:
		writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
	}
}
