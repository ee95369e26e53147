package server

import (
	"net/http"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/server/console"
)

// routes registers the server's own routes. Static paths come before the
// parameterised ones they share a prefix with: mux matches in order.
func (s *Server) routes(r core.Router) {
	s.healthRoutes(r)
	r.Handle(core.ActionAgentList, http.MethodGet, "/agents", http.HandlerFunc(s.listAgents))
	r.Handle(core.ActionAgentRead, http.MethodGet, "/agents/{id}", http.HandlerFunc(s.readAgent))
	r.Handle(ActionAgentEval, http.MethodPost, "/agents/{id}/evals", http.HandlerFunc(s.runEvals))
	r.Handle(ActionEvalList, http.MethodGet, "/agents/{id}/evals", http.HandlerFunc(s.listEvals))
	r.Handle(ActionEvalRead, http.MethodGet, "/agents/{id}/evals/{evalId}", http.HandlerFunc(s.readEval))
	r.Handle(ActionPipelineList, http.MethodGet, "/pipelines", http.HandlerFunc(s.listPipelines))

	r.Handle(core.ActionSessionList, http.MethodGet, "/sessions", http.HandlerFunc(s.listSessions))
	r.Handle(core.ActionSessionCleanup, http.MethodPost, "/sessions/cleanup", http.HandlerFunc(s.cleanupSessions))
	r.Handle(core.ActionSessionRead, http.MethodGet, "/sessions/{id}", http.HandlerFunc(s.readSession))
	r.Handle(core.ActionSessionRead, http.MethodGet, "/sessions/{id}/messages", http.HandlerFunc(s.readMessages))
	r.Handle(core.ActionSessionRead, http.MethodGet, "/sessions/{id}/runs", http.HandlerFunc(s.readSessionRuns))
	r.Handle(core.ActionSessionDelete, http.MethodDelete, "/sessions/{id}", http.HandlerFunc(s.deleteSession))

	r.Handle(core.ActionLoopList, http.MethodGet, "/loops", http.HandlerFunc(s.listLoops))
	r.Handle(core.ActionLoopRead, http.MethodGet, "/loops/{id}", http.HandlerFunc(s.readLoop))

	r.Handle(core.ActionTaskList, http.MethodGet, "/tasks", http.HandlerFunc(s.listTasks))
	r.Handle(core.ActionTaskRead, http.MethodGet, "/tasks/{id}", http.HandlerFunc(s.readTask))

	r.Handle(core.ActionScheduleList, http.MethodGet, "/schedules", http.HandlerFunc(s.listSchedules))

	r.Handle(core.ActionRunRead, http.MethodGet, "/runs/{runId}", http.HandlerFunc(s.readRun))
	r.Handle(core.ActionRunCancel, http.MethodPost, "/runs/{runId}/cancel", http.HandlerFunc(s.cancelRun))
	s.blobRoutes(r)
	if s.opts.Console {
		for _, path := range console.Paths {
			r.Handle(ActionConsoleRead, http.MethodGet, path, console.Handler())
		}
	}
}
