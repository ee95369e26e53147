package mcpserver

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// sessionOwners remembers which identity opened each stateful session, so
// that a request naming a session answers only to that identity: the SDK's
// own check reads its OAuth token info, which bread's auth does not set. A
// session of another identity is answered as a missing one (404), as the
// store's session ownership rule answers.
type sessionOwners struct {
	mu   sync.Mutex
	byID map[string]*sessionOwner
}

type sessionOwner struct {
	key  string
	seen time.Time
}

// owner is the key a request's identity owns sessions under ("" without
// auth).
func owner(r *http.Request) string { return ownerOf(r.Context()) }

// allowed reports whether the request's identity may use session id. A
// session this process does not know is left to the SDK (404).
func (s *sessionOwners) allowed(id, key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.byID[id]
	if !ok {
		return true
	}
	if o.key != key {
		return false
	}
	o.seen = time.Now()
	return true
}

// opened records a session the SDK just created, and forgets the sessions
// idle for longer than keep (the SDK closed them by then).
func (s *sessionOwners) opened(id, key string, keep time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byID == nil {
		s.byID = map[string]*sessionOwner{}
	}
	now := time.Now()
	if keep > 0 {
		for k, o := range s.byID {
			if now.Sub(o.seen) > keep {
				delete(s.byID, k)
			}
		}
	}
	s.byID[id] = &sessionOwner{key: key, seen: now}
}

func (s *sessionOwners) closed(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.byID, id)
}

// serveStateful hands a request to the stateful handler: one naming a
// session after the owner check, an initialize recording who opened the
// session the SDK creates.
func (e *Endpoint) serveStateful(w http.ResponseWriter, r *http.Request) {
	key := owner(r)
	id := r.Header.Get(sessionHeader)
	if id == "" {
		if r.Method != http.MethodPost {
			// GET and DELETE name a session; the SDK answers 400.
			e.stateful.ServeHTTP(w, r)
			return
		}
		e.stateful.ServeHTTP(&sessionRecorder{ResponseWriter: w, opened: func(id string) {
			e.owners.opened(id, key, 2*e.settings.SessionTimeout)
		}}, r)
		return
	}
	if !e.owners.allowed(id, key) {
		http.Error(w, "session not found", http.StatusNotFound)
		return
	}
	if r.Method == http.MethodGet {
		// A GET stream ends after StreamLifetime and the client
		// reconnects, with Last-Event-ID, to whichever server then
		// answers: an idle stream never holds a draining server or a
		// retiring `bread dev` generation open. What was sent meanwhile
		// waits in the event store.
		ctx, cancel := context.WithTimeout(r.Context(), e.settings.StreamLifetime)
		defer cancel()
		r = r.WithContext(ctx)
	}
	e.stateful.ServeHTTP(w, r)
	if r.Method == http.MethodDelete {
		e.owners.closed(id)
	}
}

// sessionRecorder catches the session id the SDK sets on the response
// that creates a session, before the client can read it.
type sessionRecorder struct {
	http.ResponseWriter
	opened func(id string)
	done   bool
}

func (s *sessionRecorder) WriteHeader(code int) {
	s.record()
	s.ResponseWriter.WriteHeader(code)
}

func (s *sessionRecorder) Write(b []byte) (int, error) {
	s.record()
	return s.ResponseWriter.Write(b)
}

func (s *sessionRecorder) record() {
	if s.done {
		return
	}
	s.done = true
	if id := s.Header().Get(sessionHeader); id != "" {
		s.opened(id)
	}
}

// Unwrap lets http.ResponseController reach the connection (the SDK
// flushes every event through it).
func (s *sessionRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }
