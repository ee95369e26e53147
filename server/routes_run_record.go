package server

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/breadai/bread/core"
)

// runView is what GET /runs/{runId} answers: the run's durable record, the
// seq of its last logged crumb (to resume a tail after it), and, while it
// waits for a human, its checkpoint.
type runView struct {
	core.RunRecord
	LastSeq    int64           `json:"lastSeq"`
	Checkpoint *checkpointView `json:"checkpoint,omitempty"`
}

// checkpointView is what a client needs to answer a suspended run.
type checkpointView struct {
	ID       string          `json:"id"`
	ToolName string          `json:"toolName"`
	Kind     core.HumanKind  `json:"kind,omitempty"`
	Prompt   string          `json:"prompt,omitempty"`
	Schema   json.RawMessage `json:"schema,omitempty"`
}

// readRun serves GET /runs/{runId}. Like the stream and cancel routes, the
// streams' AuthorizeStream runs after the action grant: whoever may not
// watch a run may not read its state either.
func (s *Server) readRun(w http.ResponseWriter, r *http.Request) {
	runID := r.PathValue("runId")
	st := s.inst.Storage()
	if !st.Has(core.StoreRuns) {
		writeError(w, http.StatusNotImplemented, core.CodeNotImplemented, "the configured store does not record runs")
		return
	}
	if !s.streams.AuthorizeStream(r.Context(), core.IdentityFrom(r.Context()), runID) {
		forbidden(w)
		return
	}
	rec, err := st.GetRun(r.Context(), runID)
	switch {
	case errors.Is(err, core.ErrRunNotFound):
		writeError(w, http.StatusNotFound, core.CodeRunNotFound, "run "+quote(runID)+" not found")
		return
	case err != nil:
		writeFailure(w, r, s.log, err)
		return
	}
	rec.Owner = "" // an instance id is the operator's business, not the client's
	view := runView{RunRecord: rec}
	if st.Has(core.StoreCrumbLog) {
		if view.LastSeq, err = st.MaxCrumbSeq(r.Context(), runID); err != nil {
			writeFailure(w, r, s.log, err)
			return
		}
	}
	if rec.Status == core.RunSuspended && rec.CheckpointID != "" {
		cp, err := st.GetCheckpoint(r.Context(), rec.CheckpointID)
		switch {
		case err == nil:
			view.Checkpoint = &checkpointView{ID: cp.ID, ToolName: cp.ToolName, Kind: cp.Kind, Prompt: cp.Prompt, Schema: cp.Schema}
		case !errors.Is(err, core.ErrCheckpointNotFound):
			writeFailure(w, r, s.log, err)
			return
		}
	}
	writeJSON(w, http.StatusOK, view)
}
