package server

import (
	"errors"
	"net/http"

	"github.com/breadai/bread/core"
)

// Actions of the routes the server defines beyond core's list.
const (
	// ActionPipelineList is GET /pipelines.
	ActionPipelineList = "pipeline.list"
	// ActionAgentEval is POST /agents/{id}/evals: it runs the agent.
	ActionAgentEval = "agent.eval"
	// ActionConsoleRead is the web console's page and assets (GET / and
	// GET /console/{file}), served with Options.Console.
	ActionConsoleRead = "console.read"
)

// CodeEvalsNotFound answers POST /agents/{id}/evals for an agent with no
// eval suite.
const CodeEvalsNotFound = "EVALS_NOT_FOUND"

// evalReport is POST /agents/{id}/evals's answer.
type evalReport struct {
	AgentID string            `json:"agentId"`
	Passed  int               `json:"passed"`
	Total   int               `json:"total"`
	Results []core.EvalResult `json:"results"`
}

func (s *Server) runEvals(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if _, ok := s.inst.Agent(id); !ok || !s.inst.Entrypoint(id) {
		writeError(w, http.StatusNotFound, core.CodeAgentNotFound, "agent "+quote(id)+" not found")
		return
	}
	if s.opts.Evals == nil {
		writeError(w, http.StatusNotImplemented, core.CodeNotImplemented, "this server runs no evals")
		return
	}
	results, err := s.opts.Evals(r.Context(), id)
	var be *core.BreadError
	switch {
	case errors.As(err, &be) && be.Code == CodeEvalsNotFound:
		writeError(w, http.StatusNotFound, CodeEvalsNotFound, be.Message)
		return
	case err != nil:
		writeFailure(w, r, s.log, err)
		return
	}
	rep := evalReport{AgentID: id, Total: len(results), Results: nonNil(results)}
	for _, res := range results {
		if res.Passed {
			rep.Passed++
		}
	}
	writeJSON(w, http.StatusOK, rep)
}
