package server

import (
	"net/http"
	"slices"
)

// listSchedules serves GET /schedules: every schedule of bread.yaml with its
// next tick, [] when there are none. Under the session ownership rule a
// schedule's session is shown only to whoever may act on it (the identity
// its ticks run as, an admin): the schedule itself is the operator's
// configuration, the session another identity's (or, without runAs, the
// admins'), which to anyone else is a missing one (issue 29).
func (s *Server) listSchedules(w http.ResponseWriter, r *http.Request) {
	list := slices.Clone(s.inst.Schedules()) // the Engine's, not ours to edit
	st := s.inst.Storage()
	for i := range list {
		if list[i].Session != "" && st != nil && !st.SeesSessionsOf(r.Context(), list[i].Owner) {
			list[i].Session = ""
		}
	}
	writeJSON(w, http.StatusOK, nonNil(list))
}
