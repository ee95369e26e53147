package server

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/breadai/bread/core"
)

// Check is one readiness check: Check answers nil when the dependency it
// names is ready, within the context's deadline (Options.ReadyTimeout).
type Check struct {
	Name  string
	Check func(ctx context.Context) error
}

// CheckResult is one line of a /healthz or /readyz body.
type CheckResult struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Error  string `json:"error,omitempty"`
	Millis int64  `json:"ms"`
}

// HealthBody is the JSON body of GET /healthz and GET /readyz.
type HealthBody struct {
	Status string        `json:"status"` // "ok" or "unavailable"
	Checks []CheckResult `json:"checks"`
}

// CodeNotReady is a readiness check that did not answer in time.
const CodeNotReady = "NOT_READY"

// runStarting are the actions that start or continue a run: refused while
// the server drains.
var runStarting = []string{core.ActionRunStart, core.ActionPipelineStart, core.ActionRunResume}

// drainState counts the run-starting requests in flight and whether the
// server drains.
type drainState struct {
	mu       sync.Mutex
	draining bool
	inflight int
	idle     chan struct{} // closed when draining and inflight reaches 0
}

// enter admits a run-starting request, or reports false when draining.
func (d *drainState) enter() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.draining {
		return false
	}
	d.inflight++
	return true
}

func (d *drainState) leave() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.inflight--
	if d.draining && d.inflight == 0 && d.idle != nil {
		close(d.idle)
		d.idle = nil
	}
}

func (d *drainState) isDraining() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.draining
}

// Drain turns readiness false and refuses new runs (POST /agents/{id}/run,
// /pipelines/{id}/run, /resume/{checkpointId}) with 503 INSTANCE_STOPPING
// and Retry-After, then waits until the run-starting requests in flight
// have ended (their runs finished and their streams closed) or ctx ends,
// whose error it returns then. Every other route keeps serving. Draining
// cannot be undone: stop the instance and the server next.
func (s *Server) Drain(ctx context.Context) error {
	s.drain.mu.Lock()
	s.drain.draining = true
	var idle chan struct{}
	if s.drain.inflight > 0 {
		if s.drain.idle == nil {
			s.drain.idle = make(chan struct{})
		}
		idle = s.drain.idle
	}
	s.drain.mu.Unlock()
	s.log.Info("bread: draining: readiness is false and new runs are refused")
	if idle == nil {
		return nil
	}
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Draining reports whether Drain was called.
func (s *Server) Draining() bool { return s.drain.isDraining() }

// refuseDraining answers a run-starting request while draining.
func (s *Server) refuseDraining(w http.ResponseWriter) {
	w.Header().Set("Retry-After", strconv.Itoa(int(max(1, s.opts.RetryAfter.Round(time.Second)/time.Second))))
	writeError(w, http.StatusServiceUnavailable, core.CodeInstanceStopping, "the bread instance is draining; retry on another replica")
}

// healthRoutes registers GET /healthz and GET /readyz.
func (s *Server) healthRoutes(r core.Router) {
	r.Handle(core.ActionHealthLive, http.MethodGet, "/healthz", http.HandlerFunc(s.liveness))
	r.Handle(core.ActionHealthReady, http.MethodGet, "/readyz", http.HandlerFunc(s.readiness))
}

// liveness answers 200 whenever the process serves HTTP.
func (s *Server) liveness(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, HealthBody{Status: "ok", Checks: []CheckResult{{Name: "serving", OK: true}}})
}

// readinessChecks are the built-in checks then Options.Checks: the
// instance admits runs (started: store migrated, bus started; not
// stopping), the server is not draining, the store and the bus answer a
// ping when they implement core.Pinger.
func (s *Server) readinessChecks() []Check {
	checks := []Check{{Name: "draining", Check: func(context.Context) error {
		if s.Draining() {
			return &core.BreadError{Code: core.CodeInstanceStopping, Message: "the server is draining"}
		}
		return nil
	}}}
	checks = append(checks, Check{Name: "instance", Check: func(context.Context) error {
		if !s.inst.Accepting() {
			return &core.BreadError{Code: core.CodeInstanceStopping, Message: "the instance is not started (store migrations, bus) or is stopping"}
		}
		return nil
	}})
	if st := s.inst.Storage(); st.Has(core.StorePing) {
		checks = append(checks, Check{Name: "store", Check: st.Ping})
	}
	if bus := s.inst.Bus(); bus.Has(core.BusPing) {
		checks = append(checks, Check{Name: "bus", Check: bus.Ping})
	}
	return append(checks, s.opts.Checks...)
}

// readiness runs every check concurrently, each within ReadyTimeout, and
// answers 200 when all pass, 503 otherwise. Errors are reduced to what a
// client may see.
func (s *Server) readiness(w http.ResponseWriter, r *http.Request) {
	checks := s.readinessChecks()
	results := make([]CheckResult, len(checks))
	var wg sync.WaitGroup
	for i, c := range checks {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(r.Context(), s.opts.ReadyTimeout)
			defer cancel()
			start := time.Now()
			err := runCheck(ctx, c.Check)
			results[i] = CheckResult{Name: c.Name, OK: err == nil, Millis: time.Since(start).Milliseconds()}
			if err != nil {
				results[i].Error = core.Sanitize(err).Message
				s.log.WarnContext(r.Context(), "bread: readiness check failed", "check", c.Name, "error", err)
			}
		})
	}
	wg.Wait()
	body, status := HealthBody{Status: "ok", Checks: results}, http.StatusOK
	if slices.ContainsFunc(results, func(c CheckResult) bool { return !c.OK }) {
		body.Status, status = "unavailable", http.StatusServiceUnavailable
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, status, body)
}

// runCheck bounds a check that ignores its context.
func runCheck(ctx context.Context, check func(context.Context) error) error {
	done := make(chan error, 1)
	go func() { done <- check(ctx) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return &core.BreadError{Code: CodeNotReady, Message: "the check did not answer within the readiness deadline"}
	}
}
