package server

import (
	"errors"
	"net/http"

	"github.com/breadai/bread/core"
)

// loopStore returns the store, which records loops, or answers 501.
func (s *Server) loopStore(w http.ResponseWriter) (*core.Storage, bool) {
	st := s.inst.Storage()
	if !st.Has(core.StoreLoops) {
		writeError(w, http.StatusNotImplemented, core.CodeNotImplemented, "the configured store does not record loops")
		return nil, false
	}
	return st, true
}

func (s *Server) listLoops(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := core.LoopFilter{SessionID: q.Get("session"), AgentID: q.Get("agent"), Status: core.LoopStatus(q.Get("status"))}
	switch f.Status {
	case "", core.LoopRunning, core.LoopCompleted, core.LoopExhausted, core.LoopFailed:
	default:
		badRequest(w, "invalid loop status "+quote(string(f.Status))+": expected running, completed, exhausted or failed")
		return
	}
	ls, ok := s.loopStore(w)
	if !ok {
		return
	}
	list, err := ls.ListLoops(r.Context(), f)
	if err != nil {
		writeFailure(w, r, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, nonNil(list))
}

func (s *Server) readLoop(w http.ResponseWriter, r *http.Request) {
	ls, ok := s.loopStore(w)
	if !ok {
		return
	}
	id := r.PathValue("id")
	d, err := ls.GetLoop(r.Context(), id)
	switch {
	case errors.Is(err, core.ErrLoopNotFound):
		writeError(w, http.StatusNotFound, core.CodeLoopNotFound, "loop "+quote(id)+" not found")
	case err != nil:
		writeFailure(w, r, s.log, err)
	default:
		d.Iterations = nonNil(d.Iterations)
		writeJSON(w, http.StatusOK, d)
	}
}
