package schedule

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/breadai/bread/core"
)

// Starter starts a background run under an id its caller chose, as
// core.Detacher's RunBackground does under one it mints: with a job queue
// the run is queued (a run already recorded under runID is answered as it
// is, so a tick handed out twice is one run), without one it runs on a
// goroutine of the engine. The engine implements it.
type Starter interface {
	StartBackground(ctx context.Context, runID, agentID string, input any, opts core.RunOptions, bg core.BackgroundOptions) (core.Detached, error)
}

// Timetable is a set of checked schedules and what starts their ticks'
// runs. It is safe for concurrent use (it never changes after New).
type Timetable struct {
	schedules []Schedule
	start     Starter
	log       *slog.Logger
}

// New returns the Timetable of schedules, which Check returned (a schedule
// it did not parse never ticks); start starts each tick's run, log (nil:
// slog.Default) hears of each tick.
func New(schedules []Schedule, start Starter, log *slog.Logger) *Timetable {
	if log == nil {
		log = slog.Default()
	}
	return &Timetable{schedules: schedules, start: start, log: log}
}

// Len is the number of schedules.
func (tt *Timetable) Len() int {
	return len(tt.schedules)
}

// Infos lists the schedules by name with their next tick after now.
func (tt *Timetable) Infos(now time.Time) []core.ScheduleInfo {
	return Infos(tt.schedules, now)
}

// Jobs are the schedules as a core.JobQueue fires them (core.JobKindTick
// jobs keyed core.ScheduleTickKey).
func (tt *Timetable) Jobs() []core.JobSchedule {
	out := make([]core.JobSchedule, 0, len(tt.schedules))
	for _, s := range tt.schedules {
		if s.when != nil {
			out = append(out, core.JobSchedule{Name: s.Name, Schedule: s.when})
		}
	}
	return out
}

// Work starts the run of the tick job j (core.JobKindTick) under
// TickRunID(j.Key), in the background, and returns once it is started or
// queued. A tick of a schedule this Timetable does not know (a replica
// with an older bread.yaml fired it) is logged and dropped; a run that
// did not start is the job's error, so the queue retries the tick.
func (tt *Timetable) Work(ctx context.Context, j core.Job) error {
	name, _, _ := strings.Cut(j.Key, "@")
	i := slices.IndexFunc(tt.schedules, func(s Schedule) bool { return s.Name == name })
	if i < 0 {
		tt.log.Warn("bread: a tick of an unknown schedule; this replica's bread.yaml may be older than the one that fired it", "schedule", name, "key", j.Key)
		return nil
	}
	s := tt.schedules[i]
	// The tick's run is its RunAs's, as if that caller had started it;
	// without RunAs, the operator's (no identity).
	ctx = core.WithIdentity(ctx, s.RunAs)
	opts := core.RunOptions{Session: core.SessionOptions{ID: s.Session}}
	d, err := tt.start.StartBackground(ctx, TickRunID(j.Key), s.AgentID, s.Input, opts, core.BackgroundOptions{Webhook: s.Webhook})
	if err != nil {
		tt.log.Warn("bread: a schedule's tick did not start its run", "schedule", name, "key", j.Key, "error", err)
		return fmt.Errorf("schedule %s: %w", name, err)
	}
	tt.log.Info("bread: schedule ticked", append(core.RunLogAttrs(d.RunID, d.SessionID, s.AgentID), "schedule", name, "key", j.Key)...)
	return nil
}
