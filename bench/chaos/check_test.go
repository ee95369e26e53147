package chaos

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
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
// running or queued once the cluster settled.
func (s *store) checkRuns() verdict {
	v := verdict{name: "exactly one terminal crumb per run, its record agreeing"}
	refused := 0
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
// back-off).
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
		lag := t.endedAt.Sub(time.UnixMilli(cs[len(cs)-1].createdAt))
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

// checkTicks: every ticker run is a tick's, started at most once.
func (s *store) checkTicks(booted, from, to time.Time) verdict {
	v := verdict{name: "schedule fired at most once per tick"}
	ticks := map[string]bool{}
	for tick := booted.Add(-time.Minute).Truncate(time.Second); tick.Before(time.Now().Add(time.Minute)); tick = tick.Add(time.Second) {
		ticks[engine.ScheduleRunID("tick", tick)] = true
	}
	fired := 0
	for id, r := range s.runs {
		if r.agent != "ticker" {
			continue
		}
		fired++
		starts := 0
		for _, c := range s.crumbs[id] {
			if c.typ == core.TypeAgentRunStart {
				starts++
			}
		}
		if !ticks[id] {
			v.fail("ticker run %s is no tick's", id)
		}
		if starts > 1 {
			v.fail("tick run %s started %d times", id, starts)
		}
	}
	v.detail = fmt.Sprintf(" (%d ticks fired over %s)", fired, to.Sub(from).Round(time.Second))
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
