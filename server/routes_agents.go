package server

import (
	"net/http"

	"github.com/breadai/bread/core"
)

// agentView is what the API shows of an agent: its id, model and output
// format. Settings and provider options stay private (they can hold
// endpoints or keys).
type agentView struct {
	ID           string    `json:"id"`
	Model        modelView `json:"model"`
	OutputFormat string    `json:"outputFormat"`
}

type modelView struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
}

func viewAgent(a *core.Agent) agentView {
	format := a.Output.Format
	if format == "" {
		format = core.FormatText
	}
	return agentView{ID: a.ID, Model: modelView{Provider: a.Model.Provider, Model: a.Model.Model}, OutputFormat: format}
}

func (s *Server) listAgents(w http.ResponseWriter, _ *http.Request) {
	agents := s.inst.Agents()
	out := make([]agentView, 0, len(agents))
	for _, a := range agents {
		if s.inst.Entrypoint(a.ID) { // agents internal to compositions stay unlisted
			out = append(out, viewAgent(a))
		}
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) readAgent(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	a, ok := s.inst.Agent(id)
	if !ok || !s.inst.Entrypoint(id) {
		writeError(w, http.StatusNotFound, core.CodeAgentNotFound, "agent "+quote(id)+" not found")
		return
	}
	writeJSON(w, http.StatusOK, viewAgent(a))
}
