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
// (jobs/river) is used when bread.yaml has a workers section, or schedules
// on a SQL store: with several replicas only a shared queue fires each tick
// once. It lives on workers.database when that is set, else on the
// project's sqlite or postgres database. A memory store with workers (and
// no workers.database) gets the in-process queue; schedules alone on it
// are fired by the engine in-process.
//
// A terminal command only enqueues (`invoke --background`): its queue is
// never started, so it neither works jobs nor fires ticks, and it keeps no
// schedules. `bread build` opens no queue (it checks the schedules itself:
// checkSchedules), but it checks workers.database's type and options.
func (a *app) jobs(ctx context.Context, c *engine.Config, m mode) error {
	cfg := a.project.Config
	w := cfg.Workers
	var qdb queueDB
	if w != nil && w.Database != nil {
		var err error
		if qdb, err = a.workersDatabase(w.Database); err != nil {
			return err
		}
	} else if cfg.Store != nil && cfg.Store.Type == "mysql" && (w != nil || len(cfg.Schedules) > 0) {
		return located(cfg.Store, &core.BreadError{Code: core.CodeInvalidConfig,
			Message: "a mysql store cannot hold the job queue that workers: and schedules: need (River, the durable queue, has no MySQL driver, " +
				"and an in-process queue would run each job or tick on every replica): put the queue on a postgres or sqlite database of its own " +
				"with workers.database (workers: {database: {type: postgres, url: ...}}), or use a sqlite or postgres store"})
	}
	if m == modeBuild {
		return nil
	}
	if m == modeServe {
		c.Schedules = a.schedules()
	}
	where := cfg.Store
	if qdb.dialect != "" {
		where = w.Database
	} else {
		var err error
		if qdb, err = a.jobsDatabase(cfg.Store); err != nil {
			return err
		}
	}
	switch {
	case qdb.dialect == "" && w != nil && m == modeServe:
		c.Jobs = memory.NewQueue(memory.QueueOptions{Concurrency: w.Concurrency, Logger: a.log})
		return nil
	case qdb.dialect == "" || (w == nil && len(cfg.Schedules) == 0):
		return nil
	}
	if w == nil {
		w = &project.WorkersConfig{}
	}
	q, err := riverjobs.Open(ctx, riverjobs.Options{Dialect: qdb.dialect, DSN: qdb.dsn, Schema: qdb.schema, Concurrency: w.Concurrency, Queue: w.Queue,
		PollInterval: w.PollInterval, RescueAfter: w.RescueAfter, Logger: a.log})
	if err != nil {
		return located(where, err)
	}
	a.durableJobs = true
	if m == modeTerminal {
		c.Jobs = enqueueOnly{q}
		return nil
	}
	c.Jobs = q
	return nil
}

// queueDB is where a River queue lives: dialect "" is no database River
// can use.
type queueDB struct {
	dialect riverjobs.Dialect
	dsn     string
	schema  string
}

// jobsDatabase is the River database of the project's store, or none for
// a store River cannot share (memory, mysql, a Go extension's).
func (a *app) jobsDatabase(c *project.Component) (queueDB, error) {
	switch c.Type {
	case "sqlite":
		o, err := sqliteOptions(c, a.project)
		return queueDB{dialect: riverjobs.SQLite, dsn: o.Path}, err
	case "postgres":
		o, err := a.postgresOptions(c)
		return queueDB{dialect: riverjobs.Postgres, dsn: o.URL}, err
	}
	return queueDB{}, nil
}

// workersDatabase reads workers.database, the queue's own database: a
// postgres URL (and schema) or a sqlite path, checked without connecting.
// Its options are its own: it takes no default from the store or from
// $DATABASE_URL, which name the store's database.
func (a *app) workersDatabase(c *project.Component) (queueDB, error) {
	switch c.Type {
	case "postgres":
		var o struct {
			URL    string `json:"url"`
			Schema string `json:"schema"`
		}
		if err := decode(c, &o); err != nil {
			return queueDB{}, err
		}
		if o.URL == "" {
			return queueDB{}, c.Errorf(core.CodeInvalidConfig, "workers.database of type postgres needs a url")
		}
		return queueDB{dialect: riverjobs.Postgres, dsn: o.URL, schema: o.Schema}, nil
	case "sqlite":
		var o struct {
			Path string `json:"path"`
		}
		if err := decode(c, &o); err != nil {
			return queueDB{}, err
		}
		if o.Path == "" {
			return queueDB{}, c.Errorf(core.CodeInvalidConfig, "workers.database of type sqlite needs a path")
		}
		return queueDB{dialect: riverjobs.SQLite, dsn: projectPath(a.project, o.Path)}, nil
	}
	return queueDB{}, c.Errorf(core.CodeInvalidConfig, "unknown workers.database type %q (River, the job queue, runs on postgres or sqlite); known: postgres, sqlite", c.Type)
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
