package riverjobs

import (
	"database/sql"
	"log/slog"
	"runtime"
	"time"

	"github.com/breadai/bread/core"
)

// Dialect is the database River runs on.
type Dialect string

const (
	// Postgres is PostgreSQL through pgx's database/sql driver
	// (github.com/jackc/pgx/v5/stdlib, registered as "pgx").
	Postgres Dialect = "postgres"
	// SQLite is SQLite through modernc.org/sqlite (registered as "sqlite").
	SQLite Dialect = "sqlite"
)

// Options configure Open.
type Options struct {
	// Dialect says which database DSN or DB is. Required.
	Dialect Dialect
	// DSN opens the database: a PostgreSQL URL or keyword/value string, or
	// a SQLite file path or modernc.org/sqlite DSN. The queue owns what it
	// opens and Close closes it. For SQLite the pool is one connection (as
	// River's SQLite driver asks) and a busy timeout and WAL journal are
	// added unless the DSN sets pragmas itself.
	DSN string
	// DB is an open database to use instead of DSN; the caller keeps
	// ownership (Close leaves it open). For SQLite, give it one connection
	// (SetMaxOpenConns(1)): River's SQLite driver runs into SQLITE_BUSY
	// otherwise.
	DB *sql.DB
	// Schema is the PostgreSQL schema holding River's tables (empty: the
	// connection's search_path). It must exist. Not used with SQLite.
	Schema string
	// Concurrency is how many jobs this queue runs at once (0: 50 per
	// CPU the Go runtime uses, GOMAXPROCS). A background run mostly waits
	// on its model, so a worker slot costs little CPU; and a fetch takes at
	// most the free slots, so a queue drains at most Concurrency jobs per
	// fetch cooldown (10 ms).
	Concurrency int
	// InsertsInFlight is how many insert transactions the queue runs at
	// once, each holding every Enqueue call queued when it started (0: 2 on
	// PostgreSQL, 1 on SQLite, whose one writer would only queue them). A
	// caller is answered after its own transaction's commit; more in
	// flight means smaller batches, each with its own commit.
	InsertsInFlight int
	// Queue is the River queue the jobs go to and are fetched from (empty:
	// "bread"). Queues with different names on one database do not share
	// jobs, but keys are unique across all of them.
	Queue string
	// PollInterval is how often the queue looks for new jobs (0: 1s).
	// database/sql drivers have no LISTEN, so a job enqueued on another
	// replica waits up to this long before a worker sees it.
	PollInterval time.Duration
	// RescueAfter is how long a running job may go without a heartbeat
	// before River's rescuer takes its replica for dead and hands it out
	// again, its lost attempt counted (River's RescueStuckJobsAfter; 0:
	// River's default, one hour). A live job's worker beats every quarter
	// of it, so a job may run for longer; a replica killed mid-job leaves
	// its jobs running in the table for RescueAfter, plus up to the
	// rescuer's 30 s interval. Shorter releases a dead replica's jobs
	// sooner, at a write per running job per RescueAfter/4, and takes a
	// replica stalled (not dead) for longer than it for lost too.
	RescueAfter time.Duration
	// RetryBackoff is the wait before a job whose attempt failed is handed
	// out again; attempt is the attempt that failed, 1 for the first (nil:
	// River's default, attempt⁴ seconds with jitter).
	RetryBackoff func(attempt int) time.Duration
	// Logger gets River's log lines (nil: slog.Default()).
	Logger *slog.Logger
}

// rescueAfter is o.RescueAfter or River's default.
func rescueAfter(o Options) time.Duration {
	if o.RescueAfter > 0 {
		return o.RescueAfter
	}
	return defaultRescueAfter
}

const (
	defaultRescueAfter  = time.Hour // River's
	defaultQueue        = "bread"
	defaultPollInterval = time.Second
)

// concurrencyPerCPU sizes the default Concurrency to the machine.
const concurrencyPerCPU = 50

// postgresInsertsInFlight is the default InsertsInFlight on PostgreSQL:
// one batch's statements overlap the other's commit. More made smaller
// batches, each a commit and three round trips, and fewer jobs a second
// on the development machine (BenchmarkBackground: 8 and 16 in flight
// gave about half of what 2 and 4 gave).
const postgresInsertsInFlight = 2

// fetchCooldown is the least time between two fetches of a queue (River's
// FetchCooldown, whose default is 100 ms): a fetch takes at most the free
// worker slots, so a queue drains at most Concurrency jobs per cooldown.
const fetchCooldown = 10 * time.Millisecond

func (o Options) withDefaults() (Options, error) {
	switch o.Dialect {
	case Postgres, SQLite:
	case "":
		return o, core.Errorf(core.CodeInvalidConfig, "riverjobs: Options.Dialect is required (postgres or sqlite)")
	default:
		return o, core.Errorf(core.CodeInvalidConfig, "riverjobs: unknown Options.Dialect %q (postgres or sqlite)", o.Dialect)
	}
	switch {
	case o.DSN == "" && o.DB == nil:
		return o, core.Errorf(core.CodeInvalidConfig, "riverjobs: Options needs a DSN or a DB")
	case o.DSN != "" && o.DB != nil:
		return o, core.Errorf(core.CodeInvalidConfig, "riverjobs: Options.DSN and Options.DB are exclusive")
	case o.Concurrency < 0:
		return o, core.Errorf(core.CodeInvalidConfig, "riverjobs: Options.Concurrency is negative")
	case o.InsertsInFlight < 0:
		return o, core.Errorf(core.CodeInvalidConfig, "riverjobs: Options.InsertsInFlight is negative")
	case o.PollInterval < 0, o.RescueAfter < 0:
		return o, core.Errorf(core.CodeInvalidConfig, "riverjobs: Options.PollInterval and RescueAfter cannot be negative")
	case o.Schema != "" && o.Dialect == SQLite:
		return o, core.Errorf(core.CodeInvalidConfig, "riverjobs: Options.Schema is for PostgreSQL only")
	}
	if o.Concurrency == 0 {
		o.Concurrency = concurrencyPerCPU * runtime.GOMAXPROCS(0)
	}
	if o.InsertsInFlight == 0 {
		o.InsertsInFlight = 1
		if o.Dialect == Postgres {
			o.InsertsInFlight = postgresInsertsInFlight
		}
	}
	if o.Queue == "" {
		o.Queue = defaultQueue
	}
	if o.PollInterval == 0 {
		o.PollInterval = defaultPollInterval
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o, nil
}
