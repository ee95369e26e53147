package httpstream

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/breadai/bread/core"
)

// replayPage is how many log entries one GetCrumbs call reads.
const replayPage = 1000

// A passive stream whose subscription fails is resumed from the log and
// subscribed again, as often as it fails: a reader slower than the run
// (a bus that dropped it) catches up and goes on. When neither the failed
// subscription nor the log brought anything new (a bus that is down, a run
// whose next frames are in neither place yet), it waits before the next
// try, from retryPauseMin doubled up to retryPauseMax, with keep-alives
// and the liveness check going on, and never gives up while the client is
// there: it ends without the run's terminal crumb only when the bus is
// closed (the server stops), or, for a run with no crumb log to catch up
// from, after maxSubscriptionFailures failures in a row.
const (
	retryPauseMin           = 50 * time.Millisecond
	retryPauseMax           = 5 * time.Second
	maxSubscriptionFailures = 3
)

// passive serves GET /runs/{runId}/stream: catch-up from the crumb log,
// then live frames, until the run's terminal crumb.
func (h *handlers) passive() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		vary(w)
		runID := r.PathValue("runId")
		after, err := afterSeq(r)
		if err != nil {
			writeError(w, http.StatusBadRequest, core.CodeBadRequest, err.Error())
			return
		}
		if !h.g.AuthorizeStream(r.Context(), core.IdentityFrom(r.Context()), runID) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`{"error":"Forbidden"}`)) // the seed's exact body

			return
		}
		if h.bus == nil && h.clog == nil {
			writeError(w, http.StatusNotImplemented, core.CodeTransportNotConfigured,
				"this server can neither replay a run (the store keeps no crumb log) nor follow it (the bus cannot subscribe)")
			return
		}
		st := &runState{}
		finished, err := h.known(r.Context(), runID, st)
		if err != nil {
			be := core.AsBreadError(err, core.CodeInternalError)
			if be.Code == core.CodeRunNotFound {
				writeError(w, http.StatusNotFound, be.Code, be.Message)
				return
			}
			h.log.Warn("bread: reading a run's record failed; streaming it anyway", append(st.attrs(runID), "error", err)...)
		}
		w.Header().Set(DeltaSeqHeader, DeltaSeqWatermark)
		s := h.openBuffered(w, r)
		s.beats = true
		s.flush()
		h.tail(r.Context(), s, runID, after, finished, st)
	})
}

// known checks, with the store's run records, that the run exists (an
// unknown run is RUN_NOT_FOUND before anything streams) and reports whether
// it has finished; st learns the run's agent and session from its record.
// Without run records every run may exist and none is
// known to be finished. A run with crumbs in the log but no record (a
// pipeline's own id, a relayed remote run) exists.
func (h *handlers) known(ctx context.Context, runID string, st *runState) (finished bool, err error) {
	if h.runs == nil {
		return false, nil
	}
	rec, err := h.runs.GetRun(ctx, runID)
	if err == nil {
		st.agentID, st.sessionID = rec.AgentID, rec.SessionID
		return rec.Status.Final(), nil
	}
	if !errors.Is(err, core.ErrRunNotFound) {
		return false, err
	}
	if h.clog != nil {
		if seq, lerr := h.clog.MaxCrumbSeq(ctx, runID); lerr == nil && seq > 0 {
			return false, nil
		}
	}
	return false, &core.BreadError{Code: core.CodeRunNotFound, Message: "run " + strconv.Quote(truncate(runID, 64)) + " not found"}
}

// afterSeq reads where the client stopped: Last-Event-ID, else ?after=,
// else the start of the run.
func afterSeq(r *http.Request) (int64, error) {
	raw := r.Header.Get("Last-Event-ID")
	if raw == "" {
		raw = r.URL.Query().Get("after")
	}
	if raw == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || n < 0 || raw[0] == '+' {
		return 0, &core.BreadError{Code: core.CodeBadRequest, Message: "invalid Last-Event-ID / after: " + strconv.Quote(truncate(raw, 64)) + " (expected a non-negative integer)"}
	}
	return n, nil
}

// position is where a passive stream is in its run: how far it has read
// the crumb log, and what it has put on the wire.
//
// The engine's choke point publishes every frame with the run's durable
// floor, and the bus keeps every frame at or above it while the log holds
// every one below it. So the stream subscribes first (the bus replays from
// logged-1, which covers the floor at that moment), reads the log after
// logged (which covers it too), then drains the subscription: every frame
// after the client's position is in one of the two. A bus frame the log
// already gave is dropped (a durable one at or below logged, a delta below
// it: its watermark's entry is logged). The log's aggregated deltas go out
// with the watermark they cover (entry w+1 as seq w), so on the wire every
// delta carries its watermark, as live ones do, and a reconnecting client's
// Last-Event-ID is always a position the log and the bus both understand.
// wire applies the exact Dedup rule to what goes out: when a failed
// subscription is resumed from the log, the deltas of the watermark the
// stream was in come again from their first byte, and only the part the
// client has not had goes out.
type position struct {
	logged int64 // the log is read after this seq
	wire   Dedup
	sent   int // frames written
}

// tail streams a run. It subscribes before it reads the log, so a frame
// published while the log is read is buffered rather than lost, then drains
// the subscription (see position). A subscription that fails (the bus
// dropped a slow reader) is resumed from the log.
func (h *handlers) tail(ctx context.Context, s *response, runID string, after int64, finished bool, st *runState) {
	clog := h.clog
	p := &position{logged: after, wire: Dedup{Last: after}}
	for idle := 0; ; {
		var live *liveFeed
		if h.bus != nil {
			// One below: the deltas at watermark logged are in no log
			// entry yet, so the bus must replay them too.
			live = follow(ctx, h.bus, runID, max(p.logged-1, 0))
		}
		// The new subscription replays the watermark the wire is in from
		// its first byte: it is at or above the durable floor, unless the
		// run has no log (then the bus's own bound may have cut it, and
		// counting from zero would drop what the client never had).
		if clog != nil {
			p.wire.Restart(true)
		}
		sent := p.sent
		terminal, ok := h.replay(ctx, s, clog, runID, p, st)
		// A finished run has nothing more to send once the log is
		// replayed, whatever position the client resumed from.
		if terminal || !ok || live == nil || finished {
			if live != nil {
				live.stop()
			}
			return
		}
		end, err := h.drain(ctx, s, live, runID, p, st, clog)
		live.stop()
		if end != subscriptionFailed {
			return
		}
		if p.sent != sent {
			idle = 0
			continue
		}
		idle++
		switch {
		case errors.Is(err, core.ErrBusClosed):
			h.log.Info("bread: the bus is closed; closing the run stream", st.attrs(runID)...)
			return
		case clog == nil && idle >= maxSubscriptionFailures:
			h.log.Warn("bread: run stream subscription keeps failing and there is no crumb log to catch up from; closing the stream", st.attrs(runID)...)
			return
		}
		if end := h.pause(ctx, s, runID, p, st, clog, retryPause(idle)); end != subscriptionFailed {
			return
		}
	}
}

// retryPause is the wait before the idle-th subscription in a row that
// follows one that brought nothing new.
func retryPause(idle int) time.Duration {
	return min(retryPauseMin<<min(idle-1, 10), retryPauseMax)
}

// pause waits d before the next subscription, sending keep-alives and, when
// the wait is as long as the liveness interval, asking whether the run is
// still running anywhere. It returns subscriptionFailed when the stream
// goes on, anything else when it is over.
func (h *handlers) pause(ctx context.Context, s *response, runID string, p *position, st *runState, clog *core.Storage, d time.Duration) drainEnd {
	if h.liveness != nil && d >= h.g.livecheck {
		if end, lost := h.lost(ctx, s, runID, p, st, clog); lost {
			return end
		}
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	ticker := time.NewTicker(h.g.heartbeat / 3)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return clientGone
		case <-timer.C:
			return subscriptionFailed
		case <-ticker.C:
			if !s.heartbeat(h.g.heartbeat - h.g.heartbeat/3) {
				return clientGone
			}
		}
	}
}

// replay writes the log entries after p.logged, page by page. It reports
// whether a terminal crumb went out and whether the client is still there.
func (h *handlers) replay(ctx context.Context, s *response, clog *core.Storage, runID string, p *position, st *runState) (terminal, ok bool) {
	if clog == nil {
		return false, true
	}
	filter := h.inst.CrumbFilter()
	for {
		entries, err := clog.GetCrumbs(ctx, runID, p.logged, replayPage)
		if err != nil {
			if ctx.Err() == nil {
				h.log.Warn("bread: run stream catch-up from the crumb log failed; serving live frames only", append(st.attrs(runID), "error", err)...)
			}
			return false, ctx.Err() == nil
		}
		for _, e := range entries {
			p.logged = max(p.logged, e.Seq)
			if e.Crumb == nil {
				continue
			}
			st.saw(e.Crumb)
			if filter != nil && !filter(e.Crumb) {
				continue
			}
			f := core.Frame{RunID: runID, Seq: e.Seq, Crumb: e.Crumb}
			if core.IsDelta(e.Type) {
				// An aggregate: the deltas of watermark e.Seq-1, from
				// their first byte.
				f.Seq--
				f.Crumb = withDelta(e.Crumb, f.Seq, deltaOf(e.Crumb))
				p.wire.Restart(true)
			}
			if !h.send(s, p, f) {
				return false, false
			}
			if core.IsTerminal(e.Type) {
				return true, true
			}
		}
		if len(entries) < replayPage {
			return false, true
		}
	}
}

// send writes f when the wire has not had it (or the part of a delta it
// has not had); it reports whether the client is still there.
func (h *handlers) send(s *response, p *position, f core.Frame) bool {
	f, ok := p.wire.Frame(f)
	if !ok {
		return true
	}
	f.Crumb = ClientSafe(f.Crumb)
	p.sent++
	return s.crumb(f)
}

func deltaOf(c core.Crumb) string {
	_, text, _ := deltaText(c)
	return text
}

type drainEnd int

const (
	clientGone drainEnd = iota
	terminalSent
	subscriptionEnded
	subscriptionFailed
)

// drain writes the live frames the log has not given, with a heartbeat
// while the run is idle. A failed subscription is subscriptionFailed with
// its error.
func (h *handlers) drain(ctx context.Context, s *response, live *liveFeed, runID string, p *position, st *runState, clog *core.Storage) (drainEnd, error) {
	// Checked every third of the interval, a keep-alive goes out once the
	// stream has been quiet for two thirds of it: no silence on the wire
	// lasts longer than Heartbeat, from the moment the stream opens (a
	// proxy with a 30 s idle timeout cut streams whose first heartbeat came
	// at twice the interval).
	ticker := time.NewTicker(h.g.heartbeat / 3)
	defer ticker.Stop()
	var check <-chan time.Time
	if h.liveness != nil {
		t := time.NewTicker(h.g.livecheck)
		defer t.Stop()
		check = t.C
	}
	var batch []core.Frame
	for {
		var err error
		var ended bool
		batch, ended, err = live.take(batch[:0])
		for i, f := range batch {
			batch[i] = core.Frame{}
			if f.Crumb == nil {
				continue
			}
			typ := f.Crumb.CrumbType()
			st.saw(f.Crumb)
			if f.Seq < p.logged || (f.Seq == p.logged && !core.IsDelta(typ)) {
				continue // the log gave it
			}
			if !h.send(s, p, core.Frame{RunID: runID, Seq: f.Seq, Crumb: f.Crumb}) {
				return clientGone, nil
			}
			if core.IsTerminal(typ) {
				return terminalSent, nil
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return clientGone, nil
			}
			h.log.Info("bread: run stream subscription failed; catching up from the crumb log", append(st.attrs(runID), "error", err)...)
			return subscriptionFailed, err
		}
		if ended {
			if ctx.Err() != nil {
				return clientGone, nil
			}
			return subscriptionEnded, nil
		}
		select {
		case <-ctx.Done():
			return clientGone, nil
		case <-live.signal:
		case <-ticker.C:
			if !s.heartbeat(h.g.heartbeat - h.g.heartbeat/3) {
				return clientGone, nil
			}
		case <-check:
			if end, lost := h.lost(ctx, s, runID, p, st, clog); lost {
				return end, nil
			}
		}
	}
}

// runState is what a passive stream knows of its run from the crumbs it
// saw: whether it started, and whether it waits for a human.
type runState struct {
	agentID   string
	sessionID string
	started   bool
	suspended bool
}

func (st *runState) saw(c core.Crumb) {
	b := c.Base()
	if st.agentID == "" {
		st.agentID, st.sessionID = b.AgentID, b.SessionID
	}
	st.started = true
	switch c.CrumbType() {
	case core.TypeHumanRequired:
		st.suspended = true
	case core.TypeTextDelta, core.TypeReasoningDelta:
	default:
		st.suspended = false
	}
}

// attrs are the log attributes of the run: its agent and session come
// from its record, else from the first crumb the stream saw.
func (st *runState) attrs(runID string) []any {
	return core.RunLogAttrs(runID, st.sessionID, st.agentID)
}

// lost ends the stream with agent:error RUN_LOST when its run started, does
// not wait for a human, and no replica runs it any more. The log is read
// once more first: the run may have ended just before its replica let go.
func (h *handlers) lost(ctx context.Context, s *response, runID string, p *position, st *runState, clog *core.Storage) (drainEnd, bool) {
	if !st.started || st.suspended {
		return 0, false
	}
	alive, err := h.liveness.Alive(ctx, runID)
	if err != nil || alive {
		return 0, false
	}
	terminal, ok := h.replay(ctx, s, clog, runID, p, st)
	switch {
	case !ok:
		return clientGone, true
	case terminal:
		return terminalSent, true
	case st.suspended:
		return 0, false
	}
	h.log.Warn("bread: run lost: no replica holds it any more", st.attrs(runID)...)
	lost := &core.AgentError{
		CrumbBase: core.CrumbBase{AgentID: st.agentID, RunID: runID, SessionID: st.sessionID, Timestamp: time.Now().UnixMilli(), Seq: p.wire.Last},
		Error:     &core.BreadError{Code: core.CodeRunLost, Message: "the replica running this run stopped; it will not finish"},
	}
	if !s.crumb(core.Frame{RunID: runID, Seq: p.wire.Last, Crumb: lost}) {
		return clientGone, true
	}
	return terminalSent, true
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
