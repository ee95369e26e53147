package jobtest

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/breadai/bread/core"
)

// checkTicks checks calls are ticks of sched, each tick handed out once,
// inside [from, to] give or take a second, and returns the ticks' times.
func checkTicks(t *testing.T, calls []call, sched core.JobSchedule, from, to time.Time) []time.Time {
	t.Helper()
	seen := map[string]int{}
	var ticks []time.Time
	for _, c := range calls {
		j := c.job
		if j.Kind != core.JobKindTick {
			t.Errorf("a tick of kind %q, want %q", j.Kind, core.JobKindTick)
		}
		if !jsonEqual(j.Payload, sched.Payload) {
			t.Errorf("tick %q: payload %s, want the schedule's %s", j.Key, j.Payload, sched.Payload)
		}
		if seen[j.Key]++; seen[j.Key] > 1 {
			t.Errorf("tick %q handed out %d times, want once: %s", j.Key, seen[j.Key], describe(calls))
			continue
		}
		name, unix, ok := strings.Cut(j.Key, "@")
		sec, err := strconv.ParseInt(unix, 10, 64)
		if !ok || err != nil || name != sched.Name {
			t.Errorf("tick key %q is not ScheduleTickKey(%q, t)", j.Key, sched.Name)
			continue
		}
		at := time.Unix(sec, 0)
		if core.ScheduleTickKey(sched.Name, at) != j.Key {
			t.Errorf("tick key %q is not ScheduleTickKey(%q, %v)", j.Key, sched.Name, at)
		}
		if at.Before(from.Add(-time.Second)) || at.After(to.Add(time.Second)) {
			t.Errorf("tick %q at %v, outside the queue's run %v..%v", j.Key, at, from, to)
		}
		// A key naming a later tick than the one fired shows as a job
		// handed out before its time (half a second of slack for a queue
		// that fires a little early).
		if c.at.Before(at.Add(-500 * time.Millisecond)) {
			t.Errorf("tick %q handed out at %v, before its tick", j.Key, c.at)
		}
		ticks = append(ticks, at)
	}
	return ticks
}

// scheduleTicks: a schedule every second fires ticks of kind JobKindTick
// with Key ScheduleTickKey(name, tick) and the schedule's payload, each
// once.
func (s *suite) scheduleTicks(t *testing.T) {
	q := s.newQueue(t)
	l := newLog()
	sched := core.JobSchedule{Name: "every-second", Schedule: core.Every(time.Second), Payload: json.RawMessage(`{"agent":"a","input":"tick"}`)}
	from := time.Now()
	q.start(&worker{log: l}, sched)
	l.waitFor(t, s.h.Wait+3*time.Second, "3 ticks", func(cs []call) bool { return len(cs) >= 3 })
	q.stopNow()
	to := time.Now()
	time.Sleep(s.h.Quiet)
	ticks := checkTicks(t, l.snapshot(), sched, from, to)
	if len(ticks) < 3 {
		t.Errorf("%d distinct ticks, want at least 3", len(ticks))
	}
}

// startRefusesBadArguments: a nil worker, a schedule without a name or a
// Schedule, and two schedules of one name (a typo in a config) are each
// INVALID_CONFIG from Start, and the queue can still be started right.
func (s *suite) startRefusesBadArguments(t *testing.T) {
	q := s.newQueue(t)
	l := newLog()
	every := core.Every(time.Hour)
	for _, c := range []struct {
		name      string
		w         core.JobWorker
		schedules []core.JobSchedule
	}{
		{"nil worker", nil, nil},
		{"unnamed schedule", &worker{log: l}, []core.JobSchedule{{Schedule: every}}},
		{"schedule without a Schedule", &worker{log: l}, []core.JobSchedule{{Name: "nightly"}}},
		{"two schedules of one name", &worker{log: l}, []core.JobSchedule{{Name: "nightly", Schedule: every}, {Name: "nightly", Schedule: every}}},
	} {
		err := q.Start(t.Context(), c.w, c.schedules)
		if be := core.AsBreadError(err, ""); err == nil || be.Code != core.CodeInvalidConfig {
			t.Errorf("Start with %s = %v, want INVALID_CONFIG", c.name, err)
		}
	}
	q.start(&worker{log: l}, core.JobSchedule{Name: "nightly", Schedule: every})
}
