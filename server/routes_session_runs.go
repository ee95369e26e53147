package server

import (
	"errors"
	"net/http"

	"github.com/breadai/bread/core"
)

// sessionRunsLimit caps the runs GET /sessions/{id}/runs reads: a console
// draws a session's recent runs, not an archive.
const sessionRunsLimit = 100

// sessionRun is one run of GET /sessions/{id}/runs: its record's summary
// and what its crumb log says it cost. Usage sums the usage of every
// agent:run:end in the run's log (its own model calls and those of the
// runs it delegated to and logged with it); DurationMs is the run's own
// end's.
type sessionRun struct {
	ID         string         `json:"id"`
	AgentID    string         `json:"agentId"`
	PipelineID string         `json:"pipelineId,omitempty"`
	Status     core.RunStatus `json:"status"`
	CreatedAt  int64          `json:"createdAt"`
	UpdatedAt  int64          `json:"updatedAt"`
	DurationMs int64          `json:"durationMs,omitempty"`
	Usage      *core.Usage    `json:"usage,omitempty"`
}

// readSessionRuns serves GET /sessions/{id}/runs: the session's runs,
// newest first, at most 100, each with its tokens and duration, so a
// console can show a session's token usage and chart its runs. Runs the
// caller may not stream are left out. A store that does not list runs or
// keep a crumb log is 501 NOT_IMPLEMENTED.
func (s *Server) readSessionRuns(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	st := s.inst.Storage()
	if !st.Has(core.StoreRunList) || !st.Has(core.StoreCrumbLog) {
		writeError(w, http.StatusNotImplemented, core.CodeNotImplemented, "the configured store does not list runs with their crumbs")
		return
	}
	if _, err := st.GetSession(r.Context(), id); err != nil {
		if errors.Is(err, core.ErrSessionNotFound) {
			writeError(w, http.StatusNotFound, core.CodeSessionNotFound, "session "+quote(id)+" not found")
			return
		}
		writeFailure(w, r, s.log, err)
		return
	}
	recs, err := st.ListRuns(r.Context(), core.RunFilter{SessionID: id, Limit: sessionRunsLimit})
	if err != nil {
		writeFailure(w, r, s.log, err)
		return
	}
	who := core.IdentityFrom(r.Context())
	out := make([]sessionRun, 0, len(recs))
	for _, rec := range recs {
		if !s.streams.AuthorizeStream(r.Context(), who, rec.ID) {
			continue
		}
		run := sessionRun{ID: rec.ID, AgentID: rec.AgentID, PipelineID: rec.PipelineID, Status: rec.Status, CreatedAt: rec.CreatedAt, UpdatedAt: rec.UpdatedAt}
		entries, err := st.GetCrumbs(r.Context(), rec.ID, 0, 0)
		if err != nil {
			writeFailure(w, r, s.log, err)
			return
		}
		var usage core.Usage
		for _, e := range entries {
			end, ok := e.Crumb.(*core.AgentRunEnd)
			if !ok {
				continue
			}
			if end.Usage != nil {
				usage = usage.Add(*end.Usage)
			}
			if end.AgentID == rec.AgentID {
				run.DurationMs = end.DurationMs
			}
		}
		if usage != (core.Usage{}) {
			run.Usage = &usage
		}
		out = append(out, run)
	}
	writeJSON(w, http.StatusOK, out)
}
