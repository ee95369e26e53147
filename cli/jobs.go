package cli

import (
	"context"

	"github.com/breadai/bread/cli/project"
	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/engine"
	riverjobs "github.com/breadai/bread/jobs/river"
)

// schedules are bread.yaml's schedules as the engine takes them.
func (a *app) schedules() []engine.Schedule {
	var out []engine.Schedule
	for _, s := range a.project.Config.Schedules {
		spec := s.Cron
		if s.Every > 0 {
			spec = "@every " + s.Every.String()
		}
		sc := engine.Schedule{Name: s.Name, Spec: spec, TimeZone: s.TimeZone, AgentID: s.Agent, Input: s.Input, Session: s.Session, Webhook: s.Webhook}
		if ra := s.RunAs; ra != nil {
			// The identity the strategy would authenticate: its owner key
			// (core.OwnerKey) is the strategy's name, issuer and subject.
			claims := map[string]any{ClaimStrategy: ra.Strategy}
			if ra.Issuer != "" {
				claims["iss"] = ra.Issuer
			}
			sc.RunAs = &core.AuthIdentity{Subject: ra.Subject, Claims: claims}
		}
		out = append(out, sc)
	}
	return out
}

// jobs wires bread.yaml's workers and schedules into c. A durable queue
// (jobs/river, on the project's sqlite or postgres database) is used when
// bread.yaml has a workers section, or schedules on a SQL store: with
// several replicas only a shared queue fires each tick once. A memory store
// with workers gets the in-process queue; schedules alone on it are fired
// by the engine in-process.
//
// A terminal command only enqueues (`invoke --background`): its queue is
// never started, so it neither works jobs nor fires ticks, and it keeps no
// schedules. `bread build` opens no queue (it checks the schedules itself:
// checkSchedules).
func (a *app) jobs(ctx context.Context, c *engine.Config, m mode) error {
	cfg := a.project.Config
	if cfg.Store != nil && cfg.Store.Type == "mysql" && (cfg.Workers != nil || len(cfg.Schedules) > 0) {
		return located(cfg.Store, &core.BreadError{Code: core.CodeInvalidConfig,
			Message: "a mysql store cannot hold the job queue that workers: and schedules: need (River, the durable queue, has no MySQL driver, " +
				"and an in-process queue would run each job or tick on every replica): use a sqlite or postgres store for a project with background runs or schedules"})
	}
	if m == modeBuild {
		return nil
	}
	if m == modeServe {
		c.Schedules = a.schedules()
	}
	dialect, dsn, err := a.jobsDatabase(cfg.Store)
	if err != nil {
		return err
	}
	w := cfg.Workers
	switch {
	case dialect == "" && w != nil && m == modeServe:
		c.Jobs = memory.NewQueue(memory.QueueOptions{Concurrency: w.Concurrency, Logger: a.log})
		return nil
	case dialect == "" || (w == nil && len(cfg.Schedules) == 0):
		return nil
	}
	if w == nil {
		w = &project.WorkersConfig{}
	}
	q, err := riverjobs.Open(ctx, riverjobs.Options{Dialect: dialect, DSN: dsn, Concurrency: w.Concurrency, Queue: w.Queue,
		PollInterval: w.PollInterval, RescueAfter: w.RescueAfter, Logger: a.log})
	if err != nil {
		return located(cfg.Store, err)
	}
	a.durableJobs = true
	if m == modeTerminal {
		c.Jobs = enqueueOnly{q}
		return nil
	}
	c.Jobs = q
	return nil
}

// jobsDatabase is the River dialect and DSN of the project's store, or ""
// for a store River cannot share (memory, a Go extension's).
func (a *app) jobsDatabase(c *project.Component) (riverjobs.Dialect, string, error) {
	switch c.Type {
	case "sqlite":
		o, err := sqliteOptions(c, a.project)
		return riverjobs.SQLite, o.Path, err
	case "postgres":
		o, err := a.postgresOptions(c)
		return riverjobs.Postgres, o.URL, err
	}
	return "", "", nil
}

// enqueueOnly is a queue a terminal command enqueues on but never starts:
// the serving replicas work its jobs. Stop closes the database.
type enqueueOnly struct{ q *riverjobs.Queue }

func (e enqueueOnly) Start(context.Context, core.JobWorker, []core.JobSchedule) error { return nil }
func (e enqueueOnly) Enqueue(ctx context.Context, j core.Job) error                   { return e.q.Enqueue(ctx, j) }
func (e enqueueOnly) CancelJob(ctx context.Context, key string) (*core.Job, error) {
	return e.q.CancelJob(ctx, key)
}
func (e enqueueOnly) Stop(context.Context) error { return e.q.Close() }

// checkSchedules checks bread.yaml's schedules as the engine will when it
// starts (engine.CheckSchedules) and returns them parsed.
func (a *app) checkSchedules() ([]engine.Schedule, error) {
	return engine.CheckSchedules(a.schedules(), func(id string) bool {
		_, ok := a.project.Agent(id)
		return ok
	})
}
