package chaos

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/engine"
)

// verdict is one named invariant: the ids that violate it, and figures.
type verdict struct {
	name   string
	bad    []string
	detail string
}

func (v *verdict) fail(format string, args ...any) {
	v.bad = append(v.bad, fmt.Sprintf(format, args...))
}

func (v verdict) String() string {
	if len(v.bad) == 0 {
		return fmt.Sprintf("holds     %s%s", v.name, v.detail)
	}
	shown := v.bad
	if len(shown) > 8 {
		shown = append(slices.Clone(shown[:8]), fmt.Sprintf("... %d in all", len(v.bad)))
	}
	return fmt.Sprintf("VIOLATED  %s%s: %s", v.name, v.detail, strings.Join(shown, "; "))
}

type runRow struct {
	id, agent, status, code, checkpoint, pipeline string
	attempt                                       int
}

type crumbRow struct {
	seq       int64
	typ       string
	createdAt int64
	code      string // agent:error's code
}

// store is what the checker reads back from the database.
type store struct {
	runs        map[string]runRow
	crumbs      map[string][]crumbRow
	checkpoints map[string]bool
	sessions    map[string][]core.Message
}

func readStore(db *sql.DB) (*store, error) {
	s := &store{runs: map[string]runRow{}, crumbs: map[string][]crumbRow{}, checkpoints: map[string]bool{}, sessions: map[string][]core.Message{}}
	rows, err := db.Query("SELECT id, agent_id, status, coalesce(error_code, ''), coalesce(checkpoint_id, ''), coalesce(pipeline_id, ''), coalesce(attempt, 0) FROM bread_runs")
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var r runRow
		if err := rows.Scan(&r.id, &r.agent, &r.status, &r.code, &r.checkpoint, &r.pipeline, &r.attempt); err != nil {
			return nil, err
		}
		s.runs[r.id] = r
	}
	rows.Close()
	rows, err = db.Query(`SELECT run_id, seq, type, created_at, CASE WHEN type = 'agent:error' THEN crumb::text ELSE '' END FROM bread_crumbs ORDER BY run_id, seq`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var id, raw string
		var c crumbRow
		if err := rows.Scan(&id, &c.seq, &c.typ, &c.createdAt, &raw); err != nil {
			return nil, err
		}
		if raw != "" {
			var ae struct {
				Error struct{ Code string } `json:"error"`
			}
			_ = json.Unmarshal([]byte(raw), &ae)
			c.code = ae.Error.Code
		}
		s.crumbs[id] = append(s.crumbs[id], c)
	}
	rows.Close()
	rows, err = db.Query("SELECT id FROM bread_checkpoints")
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var id string
		_ = rows.Scan(&id)
		s.checkpoints[id] = true
	}
	rows.Close()
	rows, err = db.Query("SELECT session_id, content::text FROM bread_session_messages ORDER BY session_id, seq")
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var id, raw string
		if err := rows.Scan(&id, &raw); err != nil {
			return nil, err
		}
		var m core.Message
		_ = json.Unmarshal([]byte(raw), &m)
		s.sessions[id] = append(s.sessions[id], m)
	}
	rows.Close()
	return s, nil
}

func isTerminal(typ string) bool { return typ == core.TypeAgentRunEnd || typ == core.TypeAgentError }

// checkRuns: each ended run has exactly one terminal crumb, its last, and
// a record that agrees with it; a waiting run has none; no run is left
// running or queued once the cluster settled, but the run of a tick fired
// during the settle (settling, see settleTicks), which may still be on its
// way when the store is read: counted, and judged like any run once ended.
func (s *store) checkRuns(settling map[string]bool) verdict {
	v := verdict{name: "exactly one terminal crumb per run, its record agreeing"}
	refused, inFlight := 0, 0
	for id, r := range s.runs {
		cs := s.crumbs[id]
		ends := 0
		for _, c := range cs {
			if isTerminal(c.typ) {
				ends++
			}
		}
		st := core.RunStatus(r.status)
		switch {
		case st == core.RunSuspended:
			if ends != 0 {
				v.fail("%s suspended after %d terminal crumbs", id, ends)
			}
		case !st.Final() && settling[id]:
			inFlight++
		case !st.Final():
			v.fail("%s still %s after the settle", id, st)
		case len(cs) == 0 && (st == core.RunFailed || st == core.RunCancelled):
			refused++ // refused before it started (SESSION_BUSY, cancelled while queued)
		case ends != 1:
			v.fail("%s %s with %d terminal crumbs", id, st, ends)
		default:
			last := cs[len(cs)-1]
			switch {
			case !isTerminal(last.typ):
				v.fail("%s: %s after its terminal crumb", id, last.typ)
			case st == core.RunCompleted && last.typ != core.TypeAgentRunEnd:
				v.fail("%s completed but ends with %s %s", id, last.typ, last.code)
			case st != core.RunCompleted && (last.typ != core.TypeAgentError || last.code != r.code):
				v.fail("%s %s %s but ends with %s %s", id, st, r.code, last.typ, last.code)
			}
		}
	}
	v.detail = fmt.Sprintf(" (%d records, %d refused before starting)", len(s.runs), refused)
	if inFlight > 0 {
		v.detail = fmt.Sprintf(" (%d records, %d refused before starting, %d runs of ticks fired during the settle not ended yet)", len(s.runs), refused, inFlight)
	}
	return v
}

// checkLogs: every run's crumb log is numbered 1..n with no gap.
func (s *store) checkLogs() verdict {
	v := verdict{name: "each crumb log gap-free and ordered"}
	n := 0
	for id, cs := range s.crumbs {
		n += len(cs)
		for i, c := range cs {
			if c.seq != int64(i+1) {
				v.fail("%s: seq %d at position %d", id, c.seq, i+1)
				break
			}
		}
	}
	v.detail = fmt.Sprintf(" (%d logs, %d crumbs)", len(s.crumbs), n)
	return v
}

// checkOnLost: a retry agent's run completes (or is lost on its last
// attempt), one start per attempt at most; a fail agent's run completes
// or is lost, started once.
func (s *store) checkOnLost() verdict {
	v := verdict{name: "background runs per onLost"}
	per := map[string]int{}
	for id, r := range s.runs {
		if r.agent != "retrier" && r.agent != "failer" {
			continue
		}
		starts := 0
		for _, c := range s.crumbs[id] {
			if c.typ == core.TypeAgentRunStart {
				starts++
			}
		}
		per[r.agent+" "+r.status]++
		st := core.RunStatus(r.status)
		switch {
		case len(s.crumbs[id]) == 0 && r.attempt == 0 && (st == core.RunFailed || st == core.RunCancelled):
			// Refused before it started (its job never queued, cancelled
			// while queued), as the terminal-crumb check counts it: no
			// attempt was made for onLost to govern.
		case st == core.RunFailed && r.code == core.CodeStoreUnavailable && starts <= max(r.attempt, 1):
			// Failed on the store (a terminated connection under one of
			// its writes, its start's among them), once, its end logged (the terminal-crumb check
			// holds it to one that agrees): an outcome, as for a run a
			// client streams, not a lost process for onLost to govern.
		case r.agent == "retrier" && r.status == "completed" && starts >= 1 && starts <= max(r.attempt, 1):
		case r.agent == "retrier" && r.status == "lost" && r.attempt >= 3 && starts <= r.attempt:
		case r.agent == "failer" && r.status == "completed" && starts == 1:
		case r.agent == "failer" && r.status == "lost" && starts <= 1:
		default:
			v.fail("%s %s: %s %s attempt %d, %d starts", r.agent, id, r.status, r.code, r.attempt, starts)
		}
	}
	v.detail = " " + fmt.Sprint(per)
	return v
}

// rolesBefore names the roles of the messages up to i, the last few, so a
// violation shows the shape of the history around it.
func rolesBefore(msgs []core.Message, i int) string {
	var b strings.Builder
	for j := max(0, i-4); j <= i; j++ {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(string(msgs[j].Role))
	}
	return b.String()
}

// answers: every tool result answers a call of the message right before
// it, each call at most once (an approval applied twice shows as a second
// result).
func (s *store) checkApplied() verdict {
	v := verdict{name: "approvals applied at most once"}
	for sid, msgs := range s.sessions {
		for i, m := range msgs {
			if m.Role != core.RoleTool {
				continue
			}
			calls := map[string]int{}
			if i > 0 {
				for _, p := range msgs[i-1].Parts {
					if p.Type == core.PartToolCall {
						calls[p.ToolCallID] = 0
					}
				}
			}
			for _, p := range m.Parts {
				if p.Type != core.PartToolResult {
					continue
				}
				n, ok := calls[p.ToolCallID]
				if !ok || n > 0 {
					v.fail("session %s message %d: a result for %s that no call right before awaits (roles %s)", sid, i, p.ToolCallID, rolesBefore(msgs, i))
				}
				calls[p.ToolCallID] = n + 1
			}
		}
	}
	return v
}

// checkAnswered: every checkpoint a resume was accepted for is gone and
// its run went on from it (resumed, and no longer waiting on it).
func (s *store) checkAnswered(tr *tracker) verdict {
	v := verdict{name: "answered approvals applied exactly once"}
	accepted, doubled := 0, 0
	for cp, a := range tr.answers {
		if a.accepted == 0 {
			continue
		}
		accepted++
		if a.accepted > 1 {
			doubled++
		}
		r, ok := s.runs[a.runID]
		resumed := slices.ContainsFunc(s.crumbs[a.runID], func(c crumbRow) bool { return c.typ == core.TypeHumanResumed })
		switch {
		case s.checkpoints[cp]:
			v.fail("checkpoint %s of run %s still there after an accepted resume", cp, a.runID)
		case !ok || !resumed:
			v.fail("run %s: no record or no human:resumed", a.runID)
		case r.status == "suspended" && r.checkpoint == cp:
			v.fail("run %s still waits on answered %s", a.runID, cp)
		}
	}
	v.detail = fmt.Sprintf(" (%d answered, %d accepted more than once after a cut)", accepted, doubled)
	return v
}

// checkTails: a tail of a run that ended saw its end within heartbeat +
// lease of it (plus the tail's own reconnect: its silence watchdog and
// back-off), or of its own start when it began after the end. The load
// starts a tail on a run's first crumb, which for a run that never started
// is the RUN_LOST its paused replica answers on SIGCONT, seconds after the
// sweeper ended the run: such a tail was reported as ending 5.6 s after
// its run (seed 3, 90 s, at 770fd5a: the tail began and ended at once).
func (s *store) checkTails(tr *tracker) verdict {
	bound := heartbeat + lease + 3*heartbeat + time.Second
	v := verdict{name: "tails ended within heartbeat+lease of their run's end"}
	var worst time.Duration
	n := 0
	for _, t := range tr.tails {
		r, ok := s.runs[t.runID]
		cs := s.crumbs[t.runID]
		if !ok || !core.RunStatus(r.status).Final() || len(cs) == 0 || !isTerminal(cs[len(cs)-1].typ) {
			continue
		}
		n++
		if t.endedAt.IsZero() {
			v.fail("tail of %s never ended (%d reconnects)", t.runID, t.reconnects)
			continue
		}
		from := time.UnixMilli(cs[len(cs)-1].createdAt)
		if t.startedAt.After(from) {
			from = t.startedAt
		}
		lag := t.endedAt.Sub(from)
		worst = max(worst, lag)
		if lag > bound {
			v.fail("tail of %s ended %s after its run (%d reconnects)", t.runID, lag.Round(time.Millisecond), t.reconnects)
		}
	}
	v.detail = fmt.Sprintf(" (%d tails of ended runs, worst %s, bound %s)", n, worst.Round(time.Millisecond), bound)
	return v
}

// checkSessions: each assistant message that calls tools is followed by a
// tool message answering every call, unless it is the session's last
// message and a run waits on it.
func (s *store) checkSessions() verdict {
	v := verdict{name: "session histories well formed (tool result next to its call)"}
	for sid, msgs := range s.sessions {
		for i, m := range msgs {
			var calls []string
			for _, p := range m.Parts {
				if p.Type == core.PartToolCall {
					calls = append(calls, p.ToolCallID)
				}
			}
			if len(calls) == 0 || i == len(msgs)-1 {
				continue
			}
			got := map[string]bool{}
			if msgs[i+1].Role == core.RoleTool {
				for _, p := range msgs[i+1].Parts {
					got[p.ToolCallID] = true
				}
			}
			for _, c := range calls {
				if !got[c] {
					v.fail("session %s: call %s at %d not answered by the next message (%s)", sid, c, i, roles(msgs))
					break
				}
			}
		}
	}
	v.detail = fmt.Sprintf(" (%d sessions)", len(s.sessions))
	return v
}

func roles(msgs []core.Message) string {
	var b []string
	for _, m := range msgs {
		b = append(b, string(m.Role))
	}
	return strings.Join(b, ",")
}

// scheduleTicks maps the run id of every tick of the harness's schedule
// ("tick", every second) from a minute before the replicas booted to a
// minute after now to the tick's time.
func scheduleTicks(booted time.Time) map[string]time.Time {
	ticks := map[string]time.Time{}
	for tick := booted.Add(-time.Minute).Truncate(time.Second); tick.Before(time.Now().Add(time.Minute)); tick = tick.Add(time.Second) {
		ticks[engine.ScheduleRunID("tick", tick)] = tick
	}
	return ticks
}

// settleTicks are the ticker runs of ticks at or after to, when the load
// and the faults stopped: the schedule of the replicas, which the harness
// cannot stop without restarting them (and so losing the survivors whose
// descriptors it measures), goes on firing every second through the
// settle, and a tick fired moments before the store is read may still be
// running. The settle's own wait saw those that fired before it ended.
func (s *store) settleTicks(booted, to time.Time) map[string]bool {
	ticks := scheduleTicks(booted)
	late := map[string]bool{}
	for id, r := range s.runs {
		if tick, ok := ticks[id]; r.agent == "ticker" && ok && !tick.Before(to) {
			late[id] = true
		}
	}
	return late
}

// checkTicks: every ticker run is a tick's, started at most once; the
// ticks of the load (from a minute before boot to to) and those of the
// settle are counted apart.
func (s *store) checkTicks(booted, from, to time.Time) verdict {
	v := verdict{name: "schedule fired at most once per tick"}
	ticks := scheduleTicks(booted)
	fired, settling := 0, 0
	for id, r := range s.runs {
		if r.agent != "ticker" {
			continue
		}
		starts := 0
		for _, c := range s.crumbs[id] {
			if c.typ == core.TypeAgentRunStart {
				starts++
			}
		}
		tick, ok := ticks[id]
		switch {
		case !ok:
			v.fail("ticker run %s is no tick's", id)
		case tick.Before(to):
			fired++
		default:
			settling++
		}
		if starts > 1 {
			v.fail("tick run %s started %d times", id, starts)
		}
	}
	v.detail = fmt.Sprintf(" (%d ticks fired over %s, %d more during the settle)", fired, to.Sub(from).Round(time.Second), settling)
	return v
}

// outcomes counts records by agent and status.
func (s *store) outcomes() string {
	per := map[string]int{}
	for _, r := range s.runs {
		k := r.status
		if r.code != "" {
			k += " " + r.code
		}
		per[k]++
	}
	keys := make([]string, 0, len(per))
	for k := range per {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b []string
	for _, k := range keys {
		b = append(b, fmt.Sprintf("%s=%d", k, per[k]))
	}
	return strings.Join(b, " ")
}

// The runs of ticks the schedule fired during the settle may still be on
// their way when the store is read: checkRuns counts them, where it holds
// every other run (a tick's of the load among them) to have ended.
func TestATickFiredDuringTheSettleNeedNotHaveEnded(t *testing.T) {
	booted := time.Now().Add(-2 * time.Minute).Truncate(time.Second)
	to := booted.Add(90 * time.Second)
	tick := func(at time.Time) string { return engine.ScheduleRunID("tick", at) }
	ended := []crumbRow{{seq: 1, typ: core.TypeAgentRunStart}, {seq: 2, typ: core.TypeAgentRunEnd}}
	started := []crumbRow{{seq: 1, typ: core.TypeAgentRunStart}}
	cases := []struct {
		name   string
		run    runRow
		crumbs []crumbRow
		bad    bool
	}{
		{name: "a tick of the settle, running", run: runRow{id: tick(to.Add(time.Second)), agent: "ticker", status: "running"}, crumbs: started},
		{name: "a tick of the settle, queued", run: runRow{id: tick(to), agent: "ticker", status: "queued"}},
		{name: "a tick of the settle, ended", run: runRow{id: tick(to.Add(time.Second)), agent: "ticker", status: "completed"}, crumbs: ended},
		{name: "a tick of the settle, ended with no terminal crumb", run: runRow{id: tick(to.Add(time.Second)), agent: "ticker", status: "completed"}, crumbs: started, bad: true},
		{name: "a tick of the load, running", run: runRow{id: tick(to.Add(-time.Second)), agent: "ticker", status: "running"}, crumbs: started, bad: true},
		{name: "a run of the load, running", run: runRow{id: "r-1", agent: "streamer", status: "running"}, crumbs: started, bad: true},
		{name: "a ticker run of no tick, running", run: runRow{id: "r-2", agent: "ticker", status: "running"}, crumbs: started, bad: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := &store{runs: map[string]runRow{c.run.id: c.run}, crumbs: map[string][]crumbRow{c.run.id: c.crumbs}}
			v := s.checkRuns(s.settleTicks(booted, to))
			if bad := len(v.bad) > 0; bad != c.bad {
				t.Fatalf("checkRuns: %s; want violated %v", v, c.bad)
			}
		})
	}
}

// A tail is held to its run's end, or to its own start when it began after
// the end (the load starts one on a run's first crumb, which may be its
// end): one that began 5 s after a lost run's RUN_LOST and ended at once
// holds; one that followed the run from before its end and saw it 6 s
// late does not.
func TestATailIsHeldFromItsRunsEndOrItsOwnStart(t *testing.T) {
	end := time.Now().Add(-time.Minute)
	crumbs := []crumbRow{{seq: 1, typ: core.TypeAgentError, createdAt: end.UnixMilli()}}
	cases := []struct {
		name string
		tail tail
		bad  bool
	}{
		{name: "began after the end, ended at once", tail: tail{runID: "r", startedAt: end.Add(5 * time.Second), endedAt: end.Add(5*time.Second + 20*time.Millisecond)}},
		{name: "followed the run, saw its end at once", tail: tail{runID: "r", startedAt: end.Add(-time.Second), endedAt: end.Add(300 * time.Millisecond)}},
		{name: "followed the run, saw its end 6 s late", tail: tail{runID: "r", startedAt: end.Add(-time.Second), endedAt: end.Add(6 * time.Second)}, bad: true},
		{name: "began after the end, ended 6 s after it began", tail: tail{runID: "r", startedAt: end.Add(time.Second), endedAt: end.Add(7 * time.Second)}, bad: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := &store{runs: map[string]runRow{"r": {id: "r", agent: "chat_enqueue", status: "lost"}}, crumbs: map[string][]crumbRow{"r": crumbs}}
			v := s.checkTails(&tracker{tails: []*tail{&c.tail}})
			if bad := len(v.bad) > 0; bad != c.bad {
				t.Fatalf("checkTails: %s; want violated %v", v, c.bad)
			}
		})
	}
}
