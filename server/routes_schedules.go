package server

import "net/http"

// listSchedules serves GET /schedules: every schedule of bread.yaml with its
// next tick, [] when there are none.
func (s *Server) listSchedules(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, nonNil(s.inst.Schedules()))
}
