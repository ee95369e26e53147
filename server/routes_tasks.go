package server

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/breadai/bread/core"
)

// maxTaskLimit bounds ?limit on GET /tasks.
const maxTaskLimit = 10000

// taskRuns returns the store, which audits task runs, or answers 501.
func (s *Server) taskRuns(w http.ResponseWriter) (*core.Storage, bool) {
	st := s.inst.Storage()
	if !st.Has(core.StoreTaskRuns) {
		writeError(w, http.StatusNotImplemented, core.CodeNotImplemented, "the configured store does not record task runs")
		return nil, false
	}
	return st, true
}

func (s *Server) listTasks(w http.ResponseWriter, r *http.Request) {
	ts, ok := s.taskRuns(w)
	if !ok {
		return
	}
	q := r.URL.Query()
	f := core.TaskRunFilter{TaskID: q.Get("task"), SessionID: q.Get("session"), AgentID: q.Get("agent"), Status: core.TaskRunStatus(q.Get("status"))}
	switch f.Status {
	case "", core.TaskRunning, core.TaskCompleted, core.TaskFailed:
	default:
		badRequest(w, "invalid task run status "+quote(string(f.Status))+": expected running, completed or failed")
		return
	}
	if raw := q.Get("limit"); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 || n > maxTaskLimit || raw[0] == '+' {
			badRequest(w, "invalid limit "+quote(raw)+": expected an integer from 1 to "+strconv.Itoa(maxTaskLimit))
			return
		}
		f.Limit = n
	}
	list, err := ts.ListTaskRuns(r.Context(), f)
	if err != nil {
		writeFailure(w, r, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, nonNil(list))
}

func (s *Server) readTask(w http.ResponseWriter, r *http.Request) {
	ts, ok := s.taskRuns(w)
	if !ok {
		return
	}
	id := r.PathValue("id")
	run, err := ts.GetTaskRun(r.Context(), id)
	switch {
	case errors.Is(err, core.ErrTaskRunNotFound):
		writeError(w, http.StatusNotFound, core.CodeTaskRunNotFound, "task run "+quote(id)+" not found")
	case err != nil:
		writeFailure(w, r, s.log, err)
	default:
		writeJSON(w, http.StatusOK, run)
	}
}
