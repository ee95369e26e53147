package sqlite

import (
	"fmt"
	"log/slog"
	"net/url"
	"runtime"
	"strings"
	"time"

	"github.com/breadai/bread/core"
)

// MemoryPath is the Path of an ephemeral in-memory database.
const MemoryPath = ":memory:"

// Options configures a Store. Only Path is required.
type Options struct {
	// Path is the database file, created when missing, or ":memory:" for an
	// ephemeral database that lives as long as the Store. An in-memory
	// database is held by exactly one connection, because every SQLite
	// connection to ":memory:" opens a database of its own; operations on it
	// are serialised by the connection pool.
	Path string

	// BusyTimeout is how long a statement waits for another connection's
	// write lock before giving up. Zero means 5s. Writers queue on it, so it
	// bounds the wait of the slowest writer under contention.
	BusyTimeout time.Duration

	// Synchronous is SQLite's synchronous setting: "NORMAL" (the default) or
	// "FULL". In WAL mode NORMAL never corrupts the database, but the last
	// transactions before a power loss (not a process crash) may roll back;
	// FULL makes every commit durable at the cost of an fsync per commit.
	Synchronous string

	// CheckpointInterval is how often a goroutine of the Store copies the
	// WAL's committed pages into the database file (a PASSIVE checkpoint,
	// which never blocks readers or writers). Zero means 1s. SQLite's own
	// automatic checkpoint is off on the Store's connections, so no commit
	// waits for a checkpoint and its fsync, and a page written many times
	// between two checkpoints is copied once. A negative value keeps
	// SQLite's automatic checkpoint (every 1,000 WAL pages, run by the
	// commit that crosses it) and starts no goroutine. Commits are as
	// durable either way: a committed transaction is in the WAL.
	CheckpointInterval time.Duration

	// Logger receives the store's notices (a WAL checkpoint that failed).
	// Nil means slog.Default().
	Logger *slog.Logger

	// MaxOpenConns caps the connection pool of a file database. Zero means
	// max(4, GOMAXPROCS). SQLite admits one writer at a time, so more
	// connections only add readers; callers past the cap wait for a free
	// connection, honouring their context.
	MaxOpenConns int
}

const (
	defaultBusyTimeout        = 5 * time.Second
	defaultCheckpointInterval = time.Second
)

// withDefaults validates o and fills in the defaults. Errors are
// INVALID_CONFIG.
func (o Options) withDefaults() (Options, error) {
	switch {
	case o.Path == "":
		return o, invalidConfig(`Options.Path is empty: give a database file or ":memory:"`)
	case strings.ContainsRune(o.Path, 0):
		return o, invalidConfig("Options.Path contains a NUL byte")
	case o.BusyTimeout < 0:
		return o, invalidConfig("Options.BusyTimeout is negative")
	case o.MaxOpenConns < 0:
		return o, invalidConfig("Options.MaxOpenConns is negative")
	}
	if o.BusyTimeout == 0 {
		o.BusyTimeout = defaultBusyTimeout
	}
	switch strings.ToUpper(o.Synchronous) {
	case "":
		o.Synchronous = "NORMAL"
	case "NORMAL", "FULL":
		o.Synchronous = strings.ToUpper(o.Synchronous)
	default:
		return o, invalidConfig(fmt.Sprintf("Options.Synchronous %q is not NORMAL or FULL", o.Synchronous))
	}
	if o.CheckpointInterval == 0 {
		o.CheckpointInterval = defaultCheckpointInterval
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.MaxOpenConns == 0 {
		o.MaxOpenConns = max(4, runtime.GOMAXPROCS(0))
	}
	if o.inMemory() {
		o.MaxOpenConns = 1
	}
	return o, nil
}

func (o Options) inMemory() bool { return o.Path == MemoryPath }

// checkpointsInBackground says the Store's checkpointer, not the committing
// connection, checkpoints the WAL.
func (o Options) checkpointsInBackground() bool {
	return !o.inMemory() && o.CheckpointInterval > 0
}

// dsn is the modernc.org/sqlite data source name. The pragmas ride on the DSN
// rather than being executed once after Open because database/sql opens
// connections lazily and at any time: a pragma run once would reach one
// connection, and foreign keys (hence every cascade) would be off on the
// others.
func (o Options) dsn() string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", o.BusyTimeout.Milliseconds()))
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous("+o.Synchronous+")")
	if !o.inMemory() {
		q.Add("_pragma", "journal_mode(WAL)")
		if o.checkpointsInBackground() {
			q.Add("_pragma", "wal_autocheckpoint(0)")
		}
	}
	// Every write goes through a transaction begun IMMEDIATE: it takes the
	// write lock up front, waiting on the busy timeout, instead of upgrading
	// a read lock mid-transaction, which SQLite refuses with SQLITE_BUSY
	// without waiting.
	q.Set("_txlock", "immediate")
	return "file:" + escapeURIPath(o.Path) + "?" + q.Encode()
}

// escapeURIPath escapes the characters that would end or alter the path part
// of an SQLite URI filename.
func escapeURIPath(p string) string {
	return strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(p)
}

func invalidConfig(msg string) *core.BreadError {
	return &core.BreadError{Code: core.CodeInvalidConfig, Message: "sqlite store: " + msg}
}
