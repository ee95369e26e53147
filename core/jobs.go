package core

import (
	"context"
	"encoding/json"
	"strconv"
	"time"
)

// JobQueue is the port for work that outlives the request asking for it:
// background runs and schedule ticks. A queue stores jobs durably (as
// durably as its backend) and hands each to exactly one worker among all
// queues sharing that backend, so several replicas on one database share
// the work. Adapters: core/memory (in-process, for one process and dev)
// and jobs/river (River on PostgreSQL or SQLite). core/jobtest is the
// conformance suite every adapter runs.
//
// The engine (engine.Config.Jobs) is its only caller; users configure it
// and never call it.
type JobQueue interface {
	// Start begins handing jobs to w and firing schedules, until Stop. A
	// queue is started once. Its caller, a core.Queue, has checked the
	// arguments: w is not nil, and every schedule has a Schedule and a
	// name no other has. Every queue on one backend must be started with
	// the same schedules: a tick fires once across all of them.
	Start(ctx context.Context, w JobWorker, schedules []JobSchedule) error
	// Enqueue stores j for a worker. It returns once j is stored: a process
	// that dies after Enqueue returns does not lose it. A job whose Key
	// names a job still queued or running is not added again (nil error).
	Enqueue(ctx context.Context, j Job) error
	// CancelJob removes the queued job with key, so it never starts, and
	// returns it (the engine tells the run's webhook). A job that is
	// running, finished or unknown is (nil, nil): a running job is stopped
	// through the run it executes.
	CancelJob(ctx context.Context, key string) (*Job, error)
	// Stop stops handing out jobs and firing schedules, waits for the jobs
	// running until ctx ends, then cancels their contexts and returns ctx's
	// error. A job cancelled by Stop is handed out again later (to this
	// process after a restart, or to another queue on the backend).
	Stop(ctx context.Context) error
}

// JobWorker executes the jobs a JobQueue hands out.
type JobWorker interface {
	// WorkJob executes j. nil completes it. A *JobSnooze hands it out again
	// after its delay without counting an attempt. Any other error fails
	// this attempt: the job is handed out again with backoff until
	// j.MaxAttempts attempts failed, then it is discarded.
	WorkJob(ctx context.Context, j Job) error
}

// The kinds of job the engine enqueues.
const (
	// JobKindRun executes a background run (agent or pipeline).
	JobKindRun = "bread.run"
	// JobKindTick is one tick of a schedule; its Key is the schedule's
	// name and the tick's time (ScheduleTickKey).
	JobKindTick = "bread.tick"
)

// DefaultJobAttempts bounds the attempts of a job whose MaxAttempts is
// unset.
const DefaultJobAttempts = 5

// Job is one unit of queued work.
type Job struct {
	// Kind says what the job is (JobKindRun, JobKindTick).
	Kind string `json:"kind"`
	// Key identifies the job: a run's id for JobKindRun. At most one job
	// per key is queued or running at a time, and CancelJob finds it by it.
	Key string `json:"key"`
	// Payload is the worker's input, JSON.
	Payload json.RawMessage `json:"payload,omitempty"`
	// MaxAttempts bounds the failed attempts (WorkJob errors) before the
	// job is discarded; <= 0 is DefaultJobAttempts.
	MaxAttempts int `json:"maxAttempts,omitempty"`
	// Attempt is which attempt this is, 1 for the first; the queue sets it
	// when it hands the job out. A job rescued from a process that died
	// while running it counts that lost attempt too.
	Attempt int `json:"attempt,omitempty"`
}

// Attempts is j.MaxAttempts, or DefaultJobAttempts when unset.
func (j Job) Attempts() int {
	if j.MaxAttempts > 0 {
		return j.MaxAttempts
	}
	return DefaultJobAttempts
}

// JobSnooze is the error WorkJob returns to have its job handed out again
// after After, without counting an attempt: the engine snoozes a job whose
// run is still held by a live replica.
type JobSnooze struct {
	After time.Duration
}

func (e *JobSnooze) Error() string {
	return "bread: job snoozed for " + e.After.String()
}

// Schedule says when a schedule ticks: Next returns its first tick strictly
// after t. It is River's PeriodicSchedule, and a parsed cron expression
// (robfig/cron) implements it.
type Schedule interface {
	Next(t time.Time) time.Time
}

// JobSchedule is a schedule a JobQueue fires: at each tick it hands one
// worker, across all the queues of its backend, a Job of kind JobKindTick
// with Key ScheduleTickKey(Name, tick) and Payload.
type JobSchedule struct {
	Name     string
	Schedule Schedule
	Payload  json.RawMessage
}

// checkJobStart checks the arguments of JobQueue.Start for every adapter,
// in Queue.Start: a worker, and schedules that each have a name and a
// Schedule, no two with one name. The error is INVALID_CONFIG, its message
// prefixed with who.
func checkJobStart(who string, w JobWorker, schedules []JobSchedule) error {
	if w == nil {
		return Errorf(CodeInvalidConfig, "%s: Start needs a JobWorker", who)
	}
	names := make(map[string]bool, len(schedules))
	for _, s := range schedules {
		if s.Name == "" || s.Schedule == nil {
			return Errorf(CodeInvalidConfig, "%s: schedule %q needs a name and a Schedule", who, s.Name)
		}
		if names[s.Name] {
			return Errorf(CodeInvalidConfig, "%s: two schedules named %q", who, s.Name)
		}
		names[s.Name] = true
	}
	return nil
}

// ScheduleTickKey is the key of schedule name's tick at t: the name and
// t's Unix second, so a tick enqueued twice (two leaders, a retry) is one
// job.
func ScheduleTickKey(name string, t time.Time) string {
	return name + "@" + strconv.FormatInt(t.Unix(), 10)
}

// Every is a Schedule ticking at every whole multiple of the interval on the
// clock (time.Truncate; at least one second), so replicas that start at
// different times agree on the ticks.
type Every time.Duration

// Next returns the first multiple of the interval after t.
func (e Every) Next(t time.Time) time.Time {
	d := time.Duration(e)
	if d < time.Second {
		d = time.Second
	}
	return t.Truncate(d).Add(d)
}

// ScheduleInfo is a configured schedule as GET /schedules and `bread
// schedules` list it.
type ScheduleInfo struct {
	Name     string `json:"name"`
	Spec     string `json:"spec"`
	TimeZone string `json:"timeZone,omitempty"`
	AgentID  string `json:"agentId"`
	Session  string `json:"session,omitempty"`
	// Next is the schedule's next tick.
	Next time.Time `json:"next"`
	// Owner is the OwnerKey of the identity its ticks run as (its runAs),
	// empty without one. Not listed: under the session ownership rule,
	// GET /schedules shows Session only to whoever may act on that
	// owner's sessions (Storage.SeesSessionsOf).
	Owner string `json:"-"`
}
