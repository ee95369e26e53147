package server

import (
	"net/http"

	"github.com/breadai/bread/core"
)

// scheduleLister lists the schedules of a runtime that has them
// (*engine.Instance).
type scheduleLister interface {
	Schedules() []core.ScheduleInfo
}

// listSchedules serves GET /schedules: every schedule of bread.yaml with its
// next tick, [] when there are none.
func (s *Server) listSchedules(w http.ResponseWriter, r *http.Request) {
	var list []core.ScheduleInfo
	if sl, ok := s.inst.(scheduleLister); ok {
		list = sl.Schedules()
	}
	writeJSON(w, http.StatusOK, nonNil(list))
}
