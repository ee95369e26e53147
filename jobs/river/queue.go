package riverjobs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivertype"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver

	"github.com/breadai/bread/core"
)

// Queue is a core.JobQueue on River. Every Queue opened on one database
// (and schema) shares its jobs: each is handed to one of them, and
// schedules tick once across them. Its methods are safe for concurrent
// use.
type Queue struct {
	opts    Options
	db      *sql.DB
	ownsDB  bool
	pool    *pgxpool.Pool // under db, when Open opened PostgreSQL from a DSN
	client  riverClient
	forward *forwarder
	inserts *inserter

	stopping atomic.Bool
	hardStop chan struct{} // closed when Stop's deadline passed: cancels the jobs
	mu       sync.Mutex
	started  bool
	stopped  bool
}

var _ core.JobQueue = (*Queue)(nil)

// Open connects to the database, brings River's tables up to date (safe
// when replicas open at once) and returns a Queue, not started. Enqueue
// works before Start.
//
// PostgreSQL opened from a DSN runs on a pgx pool and River's pgx driver;
// from a DB, on River's database/sql driver. Both are poll-only
// (pollOnlyDriver).
func Open(ctx context.Context, o Options) (*Queue, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	q := &Queue{opts: o, db: o.DB, hardStop: make(chan struct{})}
	switch {
	case o.Dialect == Postgres && o.DB == nil:
		if q.pool, err = openPool(ctx, o); err != nil {
			return nil, err
		}
		q.db, q.ownsDB = stdlib.OpenDBFromPool(q.pool), true
		err = q.open(newClient(ctx, q, pollOnlyDriver[pgx.Tx]{riverpgxv5.New(q.pool)}))
	case o.Dialect == Postgres:
		err = q.open(newClient(ctx, q, pollOnlyDriver[*sql.Tx]{riverdatabasesql.New(q.db)}))
	default:
		if q.db == nil {
			if q.db, err = openSQLite(o); err != nil {
				return nil, err
			}
			q.ownsDB = true
		}
		err = q.open(newClient(ctx, q, riversqlite.New(q.db)))
	}
	if err != nil {
		q.closeDB()
		return nil, err
	}
	return q, nil
}

// open keeps the client newClient made, or returns its error.
func (q *Queue) open(c riverClient, err error) error {
	if err != nil {
		return err
	}
	q.client = c
	q.inserts = newInserter(func(ctx context.Context, p []river.InsertManyParams) error {
		_, err := c.InsertMany(ctx, p)
		return err
	}, q.opts.InsertsInFlight)
	return nil
}

// riverClient is what the queue uses of a River client, whatever its
// driver's transaction type.
type riverClient interface {
	InsertMany(ctx context.Context, params []river.InsertManyParams) ([]*rivertype.JobInsertResult, error)
	JobDeleteMany(ctx context.Context, params *river.JobDeleteManyParams) (*river.JobDeleteManyResult, error)
	JobList(ctx context.Context, params *river.JobListParams) (*river.JobListResult, error)
	PeriodicJobs() *river.PeriodicJobBundle
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
	StopAndCancel(ctx context.Context) error
}

// newClient migrates River's tables through driver and makes the queue's
// River client on it.
func newClient[TTx any](ctx context.Context, q *Queue, driver riverdriver.Driver[TTx]) (riverClient, error) {
	o := q.opts
	if err := migrate(ctx, o, q.db, driver); err != nil {
		return nil, core.Errorf(core.CodeStoreUnavailable, "%v", err).WithCause(err)
	}
	q.forward = &forwarder{stopping: &q.stopping, hardStop: q.hardStop, beat: q.heartbeat,
		every: max(rescueAfter(o)/4, 10*time.Millisecond), log: o.Logger}
	workers := river.NewWorkers()
	if err := river.AddWorkerSafely(workers, q.forward); err != nil {
		return nil, fmt.Errorf("riverjobs: %w", err)
	}
	cfg := &river.Config{
		Logger:            o.Logger,
		Schema:            o.Schema,
		Workers:           workers,
		Queues:            map[string]river.QueueConfig{o.Queue: {MaxWorkers: o.Concurrency}},
		FetchPollInterval: o.PollInterval,
		FetchCooldown:     min(fetchCooldown, o.PollInterval),
		PollOnly:          true, // no LISTEN (pollOnlyDriver)
		// River's timeout must be finite for its rescuer to release a dead
		// replica's jobs; the job's own context ignores it (forwarder).
		JobTimeout:           rescueAfter(o) - rescueAfter(o)/10,
		JobStuckThreshold:    100 * 365 * 24 * time.Hour, // no "stuck" warning: a long run is not stuck
		RescueStuckJobsAfter: rescueAfter(o),
		MaxAttempts:          core.DefaultJobAttempts,
	}
	if o.RetryBackoff != nil {
		cfg.RetryPolicy = retryPolicy{backoff: o.RetryBackoff}
	}
	c, err := river.NewClient(driver, cfg)
	if err != nil {
		return nil, core.Errorf(core.CodeInvalidConfig, "riverjobs: %v", err).WithCause(err)
	}
	return c, nil
}

// defaultPoolConns is the pgx pool's size when the DSN does not set
// pool_max_conns: pgx's default (the CPUs, at least 4) is less than
// River's services, the insert transactions and the heartbeats of running
// jobs use at once on a small machine.
const defaultPoolConns = 16

func openPool(ctx context.Context, o Options) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(o.DSN)
	if err != nil {
		return nil, core.Errorf(core.CodeInvalidConfig, "riverjobs: open: %v", err).WithCause(err)
	}
	if !strings.Contains(o.DSN, "pool_max_conns") {
		cfg.MaxConns = max(cfg.MaxConns, defaultPoolConns)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, core.Errorf(core.CodeStoreUnavailable, "riverjobs: open: %v", err).WithCause(err)
	}
	return pool, nil
}

func openSQLite(o Options) (*sql.DB, error) {
	dsn := o.DSN
	if !strings.Contains(dsn, "_pragma=") {
		sep := "?"
		if strings.Contains(dsn, "?") {
			sep = "&"
		}
		dsn += sep + "_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)"
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, core.Errorf(core.CodeInvalidConfig, "riverjobs: open: %v", err).WithCause(err)
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// closeDB closes what Open opened: the database/sql handle, and the pgx
// pool under it.
func (q *Queue) closeDB() error {
	var err error
	if q.ownsDB && q.db != nil {
		err = q.db.Close()
	}
	if q.pool != nil {
		q.pool.Close()
	}
	return err
}

// Start starts fetching jobs for w and, if this queue is elected leader,
// firing schedules. ctx's cancellation does not stop the queue; Stop does.
func (q *Queue) Start(ctx context.Context, w core.JobWorker, schedules []core.JobSchedule) error {
	periodic := make([]*river.PeriodicJob, 0, len(schedules))
	for _, s := range schedules {
		periodic = append(periodic, q.periodicJob(s))
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.started || q.stopped {
		return core.Errorf(core.CodeInvalidConfig, "riverjobs: Start called twice, or after Stop")
	}
	q.forward.worker.Store(&w)
	if _, err := q.client.PeriodicJobs().AddManySafely(periodic); err != nil {
		return core.Errorf(core.CodeInvalidConfig, "riverjobs: schedules: %v", err).WithCause(err)
	}
	if err := q.client.Start(context.WithoutCancel(ctx)); err != nil {
		return core.Errorf(core.CodeStoreUnavailable, "riverjobs: start: %v", err).WithCause(err)
	}
	q.started = true
	return nil
}

// Enqueue inserts j, unless a job with its key is queued or running (River
// skips the insert as a unique duplicate). It returns once the insert
// committed; the Enqueue calls of one moment share one insert (inserter).
func (q *Queue) Enqueue(ctx context.Context, j core.Job) error {
	if j.Kind == "" || j.Key == "" {
		return core.Errorf(core.CodeValidationError, "riverjobs: a job needs a Kind and a Key")
	}
	args := jobArgs{JobKind: j.Kind, Key: j.Key, Payload: j.Payload}
	p := river.InsertManyParams{Args: args, InsertOpts: q.insertOpts(j.Kind, j.Attempts())}
	if err := q.inserts.insert(ctx, j.Key, p); err != nil {
		return core.Errorf(core.CodeStoreUnavailable, "riverjobs: enqueue %q: %v", j.Key, err).WithCause(err)
	}
	return nil
}

// CancelJob deletes the queued job with key and returns it. The delete
// skips running jobs in the same statement that finds the job, so a job a
// worker fetches meanwhile is either deleted before the fetch (and never
// runs) or running (and left alone); never both.
func (q *Queue) CancelJob(ctx context.Context, key string) (*core.Job, error) {
	pred, args := q.keyPredicate(key)
	del := river.NewJobDeleteManyParams().Kinds(riverKind).
		States(rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRetryable, rivertype.JobStateScheduled).
		Where(pred, args)
	for attempt := 0; ; attempt++ {
		res, err := q.client.JobDeleteMany(ctx, del)
		if err != nil {
			return nil, core.Errorf(core.CodeStoreUnavailable, "riverjobs: cancel %q: %v", key, err).WithCause(err)
		}
		if len(res.Jobs) > 0 {
			j, err := toCore(res.Jobs[0])
			if err != nil {
				return nil, core.Errorf(core.CodeStoreError, "riverjobs: cancel %q: the job's args: %v", key, err).WithCause(err)
			}
			return &j, nil
		}
		// PostgreSQL's delete skips rows another transaction holds (a
		// fetch, River's scheduler moving it to available). Look again
		// without locking: a job still queued was only held, so retry.
		list, err := q.client.JobList(ctx, river.NewJobListParams().Kinds(riverKind).
			States(rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRetryable, rivertype.JobStateScheduled).
			Where(pred, args).First(1))
		if err != nil {
			return nil, core.Errorf(core.CodeStoreUnavailable, "riverjobs: cancel %q: %v", key, err).WithCause(err)
		}
		if len(list.Jobs) == 0 || attempt >= 50 {
			return nil, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("riverjobs: cancel %q: %w", key, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// heartbeat moves a running job's attempted_at to now, so River's rescuer
// does not take a live job for one whose replica died. It writes River's
// own column, in River's own format for it (v0.51's schema).
func (q *Queue) heartbeat(ctx context.Context, id int64) error {
	var err error
	if q.opts.Dialect == Postgres {
		table := "river_job"
		if q.opts.Schema != "" {
			table = quoteIdent(q.opts.Schema) + ".river_job"
		}
		_, err = q.db.ExecContext(ctx, "UPDATE "+table+" SET attempted_at = now() WHERE id = $1 AND state = 'running'", id)
	} else {
		_, err = q.db.ExecContext(ctx, "UPDATE river_job SET attempted_at = datetime('now', 'subsec') WHERE id = ? AND state = 'running'", id)
	}
	return err
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// keyPredicate matches the job args' key, in the dialect's JSON syntax.
func (q *Queue) keyPredicate(key string) (string, river.NamedArgs) {
	if q.opts.Dialect == Postgres {
		return "args->>'key' = @bread_key", river.NamedArgs{"bread_key": key}
	}
	return "args ->> '$.key' = @bread_key", river.NamedArgs{"bread_key": key}
}

// Stop stops fetching and firing schedules and waits for the running jobs
// until ctx ends; then it cancels their contexts, waits for them to return
// (River puts each back, available at once, its attempt not counted) and
// returns ctx's error. It does not close the database: Close does.
func (q *Queue) Stop(ctx context.Context) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.stopped {
		return nil
	}
	q.stopped = true
	if !q.started {
		return nil
	}
	err := q.client.Stop(ctx)
	if err == nil {
		return nil
	}
	if ctx.Err() == nil {
		return fmt.Errorf("riverjobs: stop: %w", err)
	}
	q.stopping.Store(true)
	close(q.hardStop)
	if err := q.client.StopAndCancel(context.WithoutCancel(ctx)); err != nil && !errors.Is(err, context.Canceled) {
		q.opts.Logger.Error("riverjobs: stop and cancel", "error", err.Error())
	}
	return fmt.Errorf("riverjobs: stop: %w", ctx.Err())
}

// Close stops the queue if it runs (waiting for its jobs without a
// deadline) and closes the database if Open opened it.
func (q *Queue) Close() error {
	err := q.Stop(context.Background())
	q.inserts.stop()
	if err != nil {
		return err
	}
	return q.closeDB()
}
