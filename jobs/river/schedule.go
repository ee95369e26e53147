package riverjobs

import (
	"encoding/json"
	"sync"
	"time"

	"github.com/riverqueue/river"

	"github.com/breadai/bread/core"
)

// tickSchedule is a core.Schedule as River's PeriodicSchedule that
// remembers the tick it last announced. River's periodic enqueuer asks the
// schedule for a job's next run, waits for it, calls the job's constructor
// and only then asks for the run after; so when the constructor runs, the
// tick remembered is the one being fired. The constructor gives no other
// way to learn it, and computing it from the clock is wrong by a tick when
// River fires early (it fires runs due within 100 ms).
type tickSchedule struct {
	s       core.Schedule
	mu      sync.Mutex
	pending time.Time
}

func (t *tickSchedule) Next(now time.Time) time.Time {
	n := t.s.Next(now)
	t.mu.Lock()
	t.pending = n
	t.mu.Unlock()
	return n
}

func (t *tickSchedule) tick() time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.pending
}

// periodicJob is s as a River periodic job. Only the leader fires it; its
// key, ScheduleTickKey(name, tick), is unique among queued, running and
// completed jobs, so a tick fired twice (a new leader elected within the
// tick's second) is one job.
func (q *Queue) periodicJob(s core.JobSchedule) *river.PeriodicJob {
	ts := &tickSchedule{s: s.Schedule}
	payload := append(json.RawMessage(nil), s.Payload...)
	return river.NewPeriodicJob(ts, func() (river.JobArgs, *river.InsertOpts) {
		at := ts.tick()
		if at.IsZero() {
			return nil, nil // not announced yet: nothing to fire
		}
		return jobArgs{JobKind: core.JobKindTick, Key: core.ScheduleTickKey(s.Name, at), Payload: payload},
			q.insertOpts(core.JobKindTick, 0)
	}, nil)
}
