package engine

import (
	"context"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/engine/schedule"
)

// Schedule is an agent run on a timetable (bread.yaml `schedules:`); see
// package schedule, which parses, checks and fires them.
type Schedule = schedule.Schedule

// ParseSchedule reads a Schedule's Spec in timeZone (schedule.Parse).
func ParseSchedule(spec, timeZone string) (core.Schedule, error) {
	return schedule.Parse(spec, timeZone)
}

// CheckSchedules checks schedules as Start does and returns them parsed
// (schedule.Check). `bread build` and `bread schedules` call it without an
// Instance.
func CheckSchedules(schedules []Schedule, agentKnown func(id string) bool) ([]Schedule, error) {
	return schedule.Check(schedules, agentKnown)
}

// ScheduleInfos lists schedules checked by CheckSchedules by name, with
// their next tick after now (schedule.Infos).
func ScheduleInfos(schedules []Schedule, now time.Time) []core.ScheduleInfo {
	return schedule.Infos(schedules, now)
}

// ScheduleRunID is the run id of schedule name's tick at t (schedule.RunID).
func ScheduleRunID(name string, tick time.Time) string {
	return schedule.RunID(name, tick)
}

// checkSchedules parses the configured schedules once at Start, when
// plugins have added their agents, into the Instance's timetable.
func (in *Instance) checkSchedules() error {
	parsed, err := schedule.Check(in.cfg.Schedules, func(id string) bool { return in.agents[id] != nil })
	if err != nil {
		return err
	}
	in.timetable = schedule.New(parsed, tickStarter{in}, in.log)
	return nil
}

// Schedules lists the configured schedules by name, with their next tick
// after now (none before Start has checked them).
func (in *Instance) Schedules() []core.ScheduleInfo {
	if in.timetable == nil {
		return schedule.Infos(in.cfg.Schedules, time.Now())
	}
	return in.timetable.Infos(time.Now())
}

// tickStarter is the Instance's schedule.Starter. It is its own type so
// that starting a run under a chosen id is not part of the Instance's API.
type tickStarter struct{ in *Instance }

// StartBackground starts a tick's run under runID: queued with a job
// queue, else on an Instance goroutine.
func (s tickStarter) StartBackground(ctx context.Context, runID, agentID string, input any, opts core.RunOptions, bg core.BackgroundOptions) (core.Detached, error) {
	if s.in.jobs != nil {
		return s.in.enqueueRun(ctx, runID, agentID, input, opts, bg)
	}
	return s.in.runBackground(ctx, runID, agentID, input, opts, bg)
}
