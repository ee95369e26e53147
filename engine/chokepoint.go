package engine

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/breadai/bread/core"
)

const (
	defaultDeltaWindowBytes = 4096
	defaultDeltaWindowAge   = time.Second
)

// chokePoint is where every crumb of one public stream (a Run, a Resume, a
// pipeline run) gets its seq, is appended to the crumb log, reaches the
// listeners and is published on the bus. A stream can interleave
// several runs (pipeline steps, supervisor children), so numbering and
// logging state is kept per run.
//
// Sequencing: a non-delta crumb takes ++seq. text:delta and reasoning:delta
// carry the current seq as a watermark and are buffered per run into one
// aggregated log entry, which takes its own ++seq when it is flushed: on the
// next non-delta crumb of the run, on a delta of the other type, at
// MaxBufferBytes, MaxBufferAge after the window opened, or when the stream
// ends. A run has at most one open window, so the deltas carrying watermark
// w are exactly the text of the aggregated entry w+1: a reader that
// resumes at w finds their whole text in the entry after w, or in the
// transport's replay when the entry is not committed yet, and the log keeps
// the live order of text and reasoning.
//
// Durability: every frame is published with Frame.Durable, the run's
// retention floor: the highest seq whose log entry, and every logged entry
// before it, the store has committed (1 before the first commit; 0 when the
// run is not logged). The log holds every frame below the floor, so a
// transport that keeps every frame at or above it (core/stream, Redis)
// loses nothing a reconnect needs.
//
// Logging is best-effort. Writes go, in order, through one writer goroutine
// owned by the choke point, so the stream does not wait on the store; a log
// that writes at memory speed (core.InlineCrumbLog) is written on the
// stream's goroutine instead. A write the store could not make is retried
// for about three seconds (write); one that still fails disables logging
// for that run with one warning, and the run goes on. pipeline:step:* crumbs are
// numbered but never logged (they have no session to cascade with), and
// relayed remote crumbs are numbered but never logged.
type chokePoint struct {
	in       *Instance
	clog     *core.Storage // nil when the store keeps no crumb log
	inline   bool          // clog is written on the caller's goroutine
	one      [1]core.CrumbLogEntry
	pubCtx   context.Context
	maxBytes int
	maxAge   time.Duration

	mu sync.Mutex
	// first is the stream's first run, runs any more: most streams carry
	// one run, which then costs no map (see run).
	first   *runSeq
	runs    map[string]*runSeq
	pending []core.CrumbLogEntry
	spare   []core.CrumbLogEntry
	signal  chan struct{}
	flushes chan chan struct{} // sync's requests to the writer
	stop    chan struct{}
	done    chan struct{}
}

type runSeq struct {
	id            string
	counter       int64
	window        *deltaWindow // the open delta window, text or reasoning
	noLog         bool         // logging disabled, relayed, or unsupported
	relayed       bool         // a remote run relayed through this stream
	gone          bool         // its end is not this stream's to log (Instance.quietEnds)
	agentID       string       // for log lines about the run
	sessionID     string
	publishWarned bool
	// logCtx is the context the run's entries are logged with: under the
	// run's core.RunFence when this instance executes it (Instance.fences),
	// so a log write of an attempt another instance took is refused.
	logCtx context.Context
	// durable is the retention floor published with every frame (see
	// chokePoint): written by the writer (or the inline append) as entries
	// commit, read by publish without cp.mu.
	durable atomic.Int64
	// folded is the crumb numbered by fold for a run write that logs it:
	// when it passes, it keeps its seq and is not logged again.
	folded core.Crumb
}

// newRunSeq is a run's state with its counter at seq; a logged run's floor
// starts there (everything up to seq is logged already, or nothing is).
func (cp *chokePoint) newRunSeq(runID, agentID, sessionID string, seq int64) *runSeq {
	_, relayed := cp.in.relayed.Load(runID)
	rs := &runSeq{id: runID, relayed: relayed, noLog: cp.clog == nil || relayed, agentID: agentID, sessionID: sessionID, counter: seq, logCtx: cp.pubCtx}
	if token, ok := cp.in.fences.Load(runID); ok && !rs.noLog {
		rs.logCtx = core.WithRunFence(cp.pubCtx, core.RunFence{RunID: runID, Token: token.(string)})
	}
	if !rs.noLog {
		rs.durable.Store(max(seq, 1))
	}
	return rs
}

type deltaWindow struct {
	crumbType string
	agentID   string
	sessionID string
	timestamp int64
	text      strings.Builder
	timer     *time.Timer
}

func (in *Instance) newChokePoint(ctx context.Context) *chokePoint {
	cp := &chokePoint{
		in:       in,
		pubCtx:   context.WithoutCancel(ctx),
		maxBytes: in.cfg.CrumbLog.MaxBufferBytes,
		maxAge:   in.cfg.CrumbLog.MaxBufferAge,
	}
	if in.store.Has(core.StoreCrumbLog) {
		cp.clog, cp.inline = in.store, in.store.AppendsInline()
	}
	if cp.maxBytes <= 0 {
		cp.maxBytes = defaultDeltaWindowBytes
	}
	if cp.maxAge <= 0 {
		cp.maxAge = defaultDeltaWindowAge
	}
	return cp
}

// process numbers c, queues its log entry, calls the listeners and publishes
// it. It is called from the stream's goroutine only; delta-window timers are
// the one other writer of the state and take the same lock.
func (cp *chokePoint) process(ctx context.Context, c core.Crumb) {
	b := c.Base()
	var rs *runSeq
	if b.RunID != "" {
		rs = cp.sequence(ctx, c, b)
		if h, ok := c.(*core.HumanRequired); ok && core.EndsCall(h) {
			cp.sync()
		}
	}
	cp.in.notify(ctx, c)
	if rs != nil {
		cp.publish(rs, c, b)
	}
}

func (cp *chokePoint) sequence(ctx context.Context, c core.Crumb, b *core.CrumbBase) *runSeq {
	cp.mu.Lock()
	rs := cp.run(b.RunID)
	cp.mu.Unlock()
	if rs == nil {
		rs = cp.openRun(ctx, b)
	}

	cp.mu.Lock()
	defer cp.mu.Unlock()
	if rs.folded != nil && rs.folded == c {
		rs.folded = nil
		return rs
	}
	typ := c.CrumbType()
	if core.IsDelta(typ) {
		if w := rs.window; w != nil && w.crumbType != typ {
			cp.flushWindow(rs)
		}
		b.Seq = rs.counter
		if !rs.noLog {
			cp.addDelta(rs, typ, b, deltaText(c))
		}
		return rs
	}
	cp.flushWindow(rs)
	if (core.IsTerminal(typ) || typ == core.TypeHumanRequired) && !rs.gone {
		if _, ok := cp.in.quietEnds.Load(rs.id); ok {
			// Another instance declared the run lost and logged its
			// RUN_LOST: this end is the live consumer's alone.
			rs.gone, rs.noLog = true, true
		}
	}
	rs.counter++
	b.Seq = rs.counter
	if !rs.noLog && logged(typ) {
		cp.enqueue(rs, core.CrumbLogEntry{
			RunID: b.RunID, Seq: b.Seq, SessionID: b.SessionID, AgentID: b.AgentID,
			Type: typ, Crumb: c, CreatedAt: stamp(b.Timestamp),
		})
	}
	return rs
}

// openRun starts the state of a run the first time one of its crumbs passes.
// A resumed run's counter is seeded from the log, so its continuation extends
// the original numbering.
func (cp *chokePoint) openRun(ctx context.Context, b *core.CrumbBase) *runSeq {
	rs := cp.newRunSeq(b.RunID, b.AgentID, b.SessionID, 0)
	if !rs.noLog {
		seq, err := cp.clog.MaxCrumbSeq(ctx, b.RunID)
		wait := 100 * time.Millisecond
		for try := 1; err != nil && try < logRetries && unavailable(err) && ctx.Err() == nil; try++ {
			// A resumed run's numbering needs the log: without it the log
			// would be given up for the whole continuation.
			t := cp.in.clock.NewTimer(wait)
			<-t.C()
			wait *= 2
			seq, err = cp.clog.MaxCrumbSeq(ctx, b.RunID)
		}
		if err != nil {
			cp.disable(rs, err)
		} else {
			rs.counter = seq
			rs.durable.Store(max(seq, 1))
		}
	}
	cp.mu.Lock()
	cp.keep(rs)
	cp.mu.Unlock()
	return rs
}

// openFresh starts the state of a run this instance just minted the id of,
// before its first crumb: nothing of it is logged, so its counter starts at
// zero and the crumb log is not asked (a read per run).
func (cp *chokePoint) openFresh(runID, agentID, sessionID string) {
	rs := cp.newRunSeq(runID, agentID, sessionID, 0)
	cp.mu.Lock()
	if cp.run(runID) == nil {
		cp.keep(rs)
	}
	cp.mu.Unlock()
}

// run is the state of run id, nil when the stream has not seen it. Called
// with cp.mu held.
func (cp *chokePoint) run(id string) *runSeq {
	if cp.first != nil && cp.first.id == id {
		return cp.first
	}
	return cp.runs[id]
}

// keep adds or replaces the state of rs.id. Called with cp.mu held.
func (cp *chokePoint) keep(rs *runSeq) {
	switch {
	case cp.first == nil || cp.first.id == rs.id:
		cp.first = rs
	case cp.runs == nil:
		cp.runs = map[string]*runSeq{rs.id: rs}
	default:
		cp.runs[rs.id] = rs
	}
}

// eachRun calls f with the state of every run the stream has seen.
// Called with cp.mu held.
func (cp *chokePoint) eachRun(f func(*runSeq)) {
	if cp.first != nil {
		f(cp.first)
	}
	for _, rs := range cp.runs {
		f(rs)
	}
}

// stamp is the time an entry is logged: the crumb's own timestamp, taken
// moments earlier, spares a clock read per crumb.
func stamp(ts int64) int64 {
	if ts > 0 {
		return ts
	}
	return core.NowMillis()
}

func deltaText(c core.Crumb) string {
	switch d := c.(type) {
	case *core.TextDelta:
		return d.Delta
	case *core.ReasoningDelta:
		return d.Delta
	}
	return ""
}

func logged(typ string) bool {
	return typ != core.TypePipelineStepStart && typ != core.TypePipelineStepEnd
}

// addDelta appends to the run's open window, opening one (with its age
// timer) when needed; the caller closed a window of the other type. Called
// with cp.mu held.
func (cp *chokePoint) addDelta(rs *runSeq, typ string, b *core.CrumbBase, text string) {
	w := rs.window
	if w == nil {
		w = &deltaWindow{crumbType: typ, agentID: b.AgentID, sessionID: b.SessionID, timestamp: b.Timestamp}
		w.timer = time.AfterFunc(cp.maxAge, func() {
			cp.mu.Lock()
			defer cp.mu.Unlock()
			if rs.window == w {
				cp.flushWindow(rs)
			}
		})
		rs.window = w
	}
	w.text.WriteString(text)
	if w.text.Len() >= cp.maxBytes {
		cp.flushWindow(rs)
	}
}

// flushWindow turns the run's open window, if any, into one aggregated log
// entry with its own seq. Called with cp.mu held.
func (cp *chokePoint) flushWindow(rs *runSeq) {
	w := rs.window
	if w == nil {
		return
	}
	rs.window = nil
	w.timer.Stop()
	if rs.noLog {
		return
	}
	rs.counter++
	base := core.CrumbBase{AgentID: w.agentID, RunID: rs.id, SessionID: w.sessionID, Timestamp: w.timestamp, Seq: rs.counter}
	var agg core.Crumb
	if w.crumbType == core.TypeReasoningDelta {
		agg = &core.ReasoningDelta{CrumbBase: base, Delta: w.text.String()}
	} else {
		agg = &core.TextDelta{CrumbBase: base, Delta: w.text.String()}
	}
	cp.enqueue(rs, core.CrumbLogEntry{
		RunID: rs.id, Seq: rs.counter, SessionID: w.sessionID, AgentID: w.agentID,
		Type: w.crumbType, Crumb: agg, CreatedAt: core.NowMillis(),
	})
}

// enqueue hands an entry of rs to the writer goroutine, starting it on
// first use, or writes it at once to an inline log. Called with cp.mu held.
func (cp *chokePoint) enqueue(rs *runSeq, e core.CrumbLogEntry) {
	if cp.inline {
		cp.one[0] = e
		err := cp.clog.AppendCrumbs(rs.logCtx, cp.one[:])
		cp.one[0] = core.CrumbLogEntry{}
		if err != nil {
			cp.disable(rs, err)
		} else {
			rs.durable.Store(e.Seq)
		}
		return
	}
	if cp.pending == nil {
		cp.pending = make([]core.CrumbLogEntry, 0, 4)
	}
	cp.pending = append(cp.pending, e)
	if cp.signal == nil {
		cp.signal = make(chan struct{}, 1)
		cp.flushes = make(chan chan struct{})
		cp.stop = make(chan struct{})
		cp.done = make(chan struct{})
		go cp.writeLoop()
	}
	// Only the first entry after a drain wakes the writer: while it is busy
	// it drains again before parking, so waking it per crumb would only pay
	// for scheduler round trips.
	if len(cp.pending) == 1 {
		select {
		case cp.signal <- struct{}{}:
		default:
		}
	}
}

func (cp *chokePoint) writeLoop() {
	defer close(cp.done)
	for {
		select {
		case <-cp.signal:
			for cp.drain() > 0 {
			}
		case ack := <-cp.flushes:
			for cp.drain() > 0 {
			}
			close(ack)
		case <-cp.stop:
			for cp.drain() > 0 {
			}
			return
		}
	}
}

// drain writes what is pending, one AppendCrumbs per consecutive run of
// entries of the same run, skipping runs whose logging is disabled. It
// returns how many entries it took.
func (cp *chokePoint) drain() int {
	cp.mu.Lock()
	if len(cp.pending) == 0 {
		cp.mu.Unlock()
		return 0
	}
	// Double buffering: the writer owns batch while enqueue fills the other
	// slice; the two never alias.
	batch := cp.pending
	cp.pending = cp.spare[:0]
	cp.mu.Unlock()

	for start := 0; start < len(batch); {
		end := start + 1
		for end < len(batch) && batch[end].RunID == batch[start].RunID {
			end++
		}
		cp.mu.Lock()
		rs := cp.run(batch[start].RunID)
		skip := rs == nil || rs.noLog
		cp.mu.Unlock()
		if !skip {
			if err := cp.write(rs.logCtx, batch[start:end]); err != nil {
				cp.mu.Lock()
				cp.disable(rs, err)
				cp.mu.Unlock()
			} else {
				rs.durable.Store(batch[end-1].Seq)
			}
		}
		start = end
	}
	n := len(batch)
	clear(batch)
	cp.mu.Lock()
	cp.spare = batch[:0]
	cp.mu.Unlock()
	return n
}

// logRetries is how many times a crumb-log write the store could not make
// (STORE_UNAVAILABLE) is tried before the run's log is given up: five
// tries, 100 ms apart and doubling, about three seconds in all, as a run's
// end write.
const logRetries = 5

// write appends entries, all of one run, retrying a write the store could
// not make (a connection terminated, the database restarting). Found by
// the chaos harness: a terminated connection under one write disabled the
// run's log for good, so its end was never logged and a replay never
// ended. Before each retry it reads what the log holds at those seqs: a
// write whose commit landed but whose answer was lost is done; a seq
// another instance took (a sweeper's RUN_LOST) fails it, and the run's log
// ends there.
func (cp *chokePoint) write(ctx context.Context, entries []core.CrumbLogEntry) error {
	err := cp.clog.AppendCrumbs(ctx, entries)
	wait := 100 * time.Millisecond
	for try := 1; err != nil && try < logRetries && unavailable(err); try++ {
		t := cp.in.clock.NewTimer(wait)
		<-t.C()
		wait *= 2
		held, gerr := cp.clog.GetCrumbs(ctx, entries[0].RunID, entries[0].Seq-1, len(entries))
		switch {
		case gerr != nil:
			err = gerr
		case len(held) == 0:
			err = cp.clog.AppendCrumbs(ctx, entries)
		case sameEntries(held, entries):
			return nil
		default:
			return &core.BreadError{Code: core.CodeValidationError, Message: "the run's crumb log holds other entries at these seqs", Cause: err}
		}
	}
	return err
}

// unavailable reports whether err is the store's "cannot reach the
// database", worth a retry.
func unavailable(err error) bool {
	var be *core.BreadError
	return errors.As(err, &be) && be.Code == core.CodeStoreUnavailable
}

// sameEntries reports whether the log's entries are the ones written (a
// retried batch whose first try committed).
func sameEntries(held, written []core.CrumbLogEntry) bool {
	if len(held) != len(written) {
		return false
	}
	for i := range held {
		if held[i].Seq != written[i].Seq || held[i].Type != written[i].Type || held[i].CreatedAt != written[i].CreatedAt {
			return false
		}
	}
	return true
}

// disable stops logging for a run after a write failed for good, with one
// warning. The run itself goes on.
func (cp *chokePoint) disable(rs *runSeq, err error) {
	if rs.noLog {
		return
	}
	if fenced(err) {
		cp.taken(rs)
		return
	}
	rs.noLog = true
	rs.durable.Store(0) // nothing more will be logged: transports bound the replay themselves
	cp.in.log.Warn("bread: crumb log disabled for run after a failed store write", append(runAttrs(rs.id, rs.agentID, rs.sessionID), "error", err)...)
}

// taken stops a run whose log write the store refused under its fence
// (RUN_TAKEN): another instance took it, so nothing more of it is logged
// or published, its end included, and the run is stopped. Called with
// cp.mu held.
func (cp *chokePoint) taken(rs *runSeq) {
	rs.noLog, rs.gone = true, true
	rs.durable.Store(0)
	cp.in.quietEnds.Store(rs.id, struct{}{})
	cp.in.log.Warn("bread: a run's crumb log write was refused: another instance took the run (this one was paused or cut off beyond its lease); it stops and writes nothing more",
		runAttrs(rs.id, rs.agentID, rs.sessionID)...)
	cp.in.runsMu.Lock()
	cancel := cp.in.runs[rs.id]
	cp.in.runsMu.Unlock()
	if cancel != nil {
		cancel(errLeaseLost)
	}
}

func (cp *chokePoint) publish(rs *runSeq, c core.Crumb, b *core.CrumbBase) {
	if rs.gone {
		return
	}
	if f := cp.in.cfg.CrumbFilter; f != nil && !f(c) {
		return
	}
	err := cp.in.bus.Publish(cp.pubCtx, core.Frame{RunID: b.RunID, Seq: b.Seq, Crumb: c, Durable: rs.durable.Load()})
	if err == nil {
		return
	}
	cp.mu.Lock()
	warn := !rs.publishWarned
	if warn {
		rs.publishWarned = true
	}
	cp.mu.Unlock()
	if warn {
		cp.in.log.Warn("bread: bus publish failed; the run goes on", append(runAttrs(b.RunID, b.AgentID, b.SessionID), "error", err)...)
	}
}

// fold numbers c, the crumb that tells a client of a run's start or end
// write, and returns the crumb-log entries that write carries so they
// commit with it (core.RunWrite.Crumbs): the run's entries the writer has
// not taken, its open delta window's, and c's. A write of the run's
// earlier entries in flight lands first, so the log stays gap-free and in
// order. A short run then logs nothing of its own: its agent:run:start
// goes with its start, its text and agent:run:end with its end, two
// commits where a third waited for the log.
//
// It returns nil when the run's crumbs cannot go with the write (an
// inline log, a run not logged or not opened here): c is then numbered
// and logged as usual when it passes. Otherwise settle must follow the
// write. Called on the stream's goroutine, before c is processed.
func (cp *chokePoint) fold(c core.Crumb) []core.CrumbLogEntry {
	b := c.Base()
	typ := c.CrumbType()
	cp.mu.Lock()
	rs := cp.run(b.RunID)
	if cp.inline || rs == nil || rs.noLog || rs.gone || core.IsDelta(typ) || !logged(typ) {
		cp.mu.Unlock()
		return nil
	}
	cp.flushWindow(rs)
	var entries []core.CrumbLogEntry
	kept := cp.pending[:0]
	for _, e := range cp.pending {
		if e.RunID == rs.id {
			entries = append(entries, e)
		} else {
			kept = append(kept, e)
		}
	}
	clear(cp.pending[len(kept):])
	cp.pending = kept
	rs.counter++
	b.Seq = rs.counter
	entries = append(entries, core.CrumbLogEntry{
		RunID: b.RunID, Seq: b.Seq, SessionID: b.SessionID, AgentID: b.AgentID,
		Type: typ, Crumb: c, CreatedAt: stamp(b.Timestamp),
	})
	rs.folded = c
	started := cp.signal != nil
	cp.mu.Unlock()
	if started {
		// The writer may hold a batch with the run's earlier entries.
		cp.sync()
	}
	cp.mu.Lock()
	defer cp.mu.Unlock()
	if rs.noLog {
		// That batch failed for good: nothing more of the run is logged.
		cp.unfold(rs, c)
		return nil
	}
	return entries
}

// settle follows the run write fold handed entries to: committed, they
// are the run's floor; not (the write failed, or wrote nothing because
// another instance took the run), c gives its seq back to whichever crumb
// ends the run instead, and the entries before it go to the writer as
// they would have.
func (cp *chokePoint) settle(c core.Crumb, entries []core.CrumbLogEntry, committed bool) {
	b := c.Base()
	cp.mu.Lock()
	defer cp.mu.Unlock()
	rs := cp.run(b.RunID)
	if rs == nil {
		return
	}
	if committed {
		rs.durable.Store(b.Seq)
		return
	}
	cp.unfold(rs, c)
	for _, e := range entries[:len(entries)-1] {
		cp.enqueue(rs, e)
	}
}

// unfold undoes fold's numbering of c. Called with cp.mu held.
func (cp *chokePoint) unfold(rs *runSeq, c core.Crumb) {
	b := c.Base()
	if rs.folded == c {
		rs.folded = nil
		if rs.counter == b.Seq {
			rs.counter--
		}
	}
	b.Seq = 0
}

// sync waits until the writer has stored every entry queued so far. A
// suspension's last human:required goes through it before any client sees
// it: a client may resume at once, on another replica, whose continuation
// numbers its crumbs after the highest seq in the log; with the entry still
// queued here, that seq would be taken twice and the continuation's log
// refused.
func (cp *chokePoint) sync() {
	cp.mu.Lock()
	started := cp.signal != nil
	cp.mu.Unlock()
	if !started {
		return
	}
	ack := make(chan struct{})
	select {
	case cp.flushes <- ack:
		<-ack
	case <-cp.done:
	}
}

// finish flushes every open delta window and waits until the writer has
// stored everything queued. Call it once, when the stream ends, however it
// ends.
func (cp *chokePoint) finish() {
	cp.mu.Lock()
	cp.eachRun(func(rs *runSeq) {
		cp.flushWindow(rs)
		if rs.relayed {
			cp.in.relayed.Delete(rs.id)
		}
		if rs.gone {
			cp.in.quietEnds.Delete(rs.id)
		}
	})
	started := cp.signal != nil
	cp.mu.Unlock()
	if started {
		close(cp.stop)
		<-cp.done
	}
}
