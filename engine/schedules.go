package engine

import (
	"context"
	"errors"
	"fmt"
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
	if err := s.in.scheduleSession(ctx, agentID, opts.Session.ID); err != nil {
		return core.Detached{}, err
	}
	if s.in.jobs != nil {
		return s.in.enqueueRun(ctx, runID, agentID, input, opts, bg)
	}
	return s.in.runBackground(ctx, runID, agentID, input, opts, bg)
}

// scheduleSession applies the session ownership rule to the session a
// schedule names (bread.yaml's own, which no client chose): the tick runs
// as the schedule's RunAs (the identity of ctx) or, without it, as the
// operator, and the session must be that one's. A session that does not
// exist yet is created for RunAs now, whatever its id's form, since the
// operator named it; a session another identity owns refuses the tick,
// with SESSION_NOT_FOUND naming what to do, as the operator's to read in
// the log. Without the rule, or a session, there is nothing to check.
func (in *Instance) scheduleSession(ctx context.Context, agentID, id string) error {
	if id == "" || !in.store.SessionsOwned() {
		return nil
	}
	owner := core.OwnerKey(core.IdentityFrom(ctx))
	op := core.WithIdentity(ctx, nil) // the operator: every session
	sess, err := in.store.GetSession(op, id)
	if errors.Is(err, core.ErrSessionNotFound) {
		if owner == "" {
			return nil // the run creates it, with no owner
		}
		if sess, err = in.store.CreateSession(op, core.NewSession{ID: id, AgentID: agentID, Owner: owner}); err != nil {
			// Another replica's tick may have created it meanwhile.
			if sess, err = in.store.GetSession(op, id); err != nil {
				return err
			}
		}
	}
	if err != nil {
		return err
	}
	if sess.Owner != owner {
		return &core.BreadError{Code: core.CodeSessionNotFound, Message: fmt.Sprintf(
			"the schedule's session %q belongs to another identity than the one the schedule runs as: give the schedule runAs that identity, or name another session", id),
			Context: map[string]any{"sessionId": id}}
	}
	return nil
}
