package server

import (
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/transports/httpstream"
)

func (s *Server) listSessions(w http.ResponseWriter, r *http.Request) {
	tags, err := parseTags(r.URL.Query()["tag"])
	if err != nil {
		badRequest(w, err.Error())
		return
	}
	list, err := s.inst.Storage().ListSessions(r.Context(), core.SessionFilter{Tags: tags})
	if err != nil {
		writeFailure(w, r, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, nonNil(list))
}

// parseTags reads repeated ?tag=key:value filters; the value may contain
// colons, the key may not be empty.
func parseTags(raw []string) (map[string]string, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	tags := make(map[string]string, len(raw))
	for _, t := range raw {
		k, v, ok := strings.Cut(t, ":")
		if !ok || k == "" {
			return nil, errors.New("invalid tag filter " + quote(t) + ": expected key:value")
		}
		tags[k] = v
	}
	return tags, nil
}

func (s *Server) readSession(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	sess, err := s.inst.Storage().GetSession(r.Context(), id)
	switch {
	case errors.Is(err, core.ErrSessionNotFound):
		writeError(w, http.StatusNotFound, core.CodeSessionNotFound, "session "+quote(id)+" not found")
	case err != nil:
		writeFailure(w, r, s.log, err)
	default:
		writeJSON(w, http.StatusOK, sess)
	}
}

// deleteSession answers DELETE /sessions/{id}: {"ok":true} whether or not
// the session existed (the seed's), except that under the session
// ownership rule a session the caller may not see, missing or another's,
// is 404 SESSION_NOT_FOUND, as GET answers it.
func (s *Server) deleteSession(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if err := s.inst.Storage().DeleteSession(r.Context(), id); err != nil {
		if errors.Is(err, core.ErrSessionNotFound) {
			writeError(w, http.StatusNotFound, core.CodeSessionNotFound, "session "+quote(id)+" not found")
			return
		}
		writeFailure(w, r, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
}

// cleanupBody is POST /sessions/cleanup's body. The API speaks days; the
// store speaks durations.
type cleanupBody struct {
	OlderThanDays *float64          `json:"olderThanDays"`
	Tags          map[string]string `json:"tags"`
}

// maxCleanupDays is the largest age a time.Duration holds.
var maxCleanupDays = float64(math.MaxInt64) / float64(24*time.Hour)

func (s *Server) cleanupSessions(w http.ResponseWriter, r *http.Request) {
	var body cleanupBody
	if err := decodeBody(r, &body); err != nil {
		badRequest(w, err.Error())
		return
	}
	var opts core.CleanupOptions
	opts.Tags = body.Tags
	if d := body.OlderThanDays; d != nil {
		if *d < 0 || math.IsNaN(*d) {
			badRequest(w, "olderThanDays must be a non-negative number")
			return
		}
		if *d >= maxCleanupDays {
			opts.OlderThan = time.Duration(math.MaxInt64)
		} else {
			opts.OlderThan = time.Duration(*d * float64(24*time.Hour))
		}
	}
	n, err := s.inst.Storage().CleanupSessions(r.Context(), opts)
	if err != nil {
		writeFailure(w, r, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]int{"deleted": n})
}

// decodeBody reads an optional JSON object; an empty body leaves v alone.
func decodeBody(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	if err := dec.Decode(v); err != nil {
		var tooLarge *http.MaxBytesError
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case errors.As(err, &tooLarge):
			return errors.New("request body too large")
		}
		return errors.New(httpstream.BodyProblem(err))
	}
	if dec.More() {
		return errors.New("the request body holds more than one JSON value")
	}
	return nil
}

func quote(s string) string {
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	return strconv.Quote(s)
}

// nonNil keeps an empty list a JSON array rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// readMessages answers GET /sessions/{id}/messages: the session's history
// in the order it was written. It is session.read's: whoever may read a
// session may read what was said in it.
func (s *Server) readMessages(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	st := s.inst.Storage()
	if _, err := st.GetSession(r.Context(), id); err != nil {
		if errors.Is(err, core.ErrSessionNotFound) {
			writeError(w, http.StatusNotFound, core.CodeSessionNotFound, "session "+quote(id)+" not found")
			return
		}
		writeFailure(w, r, s.log, err)
		return
	}
	msgs, err := st.GetMessages(r.Context(), id)
	if err != nil {
		writeFailure(w, r, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, nonNil(msgs))
}
