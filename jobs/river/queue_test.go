package riverjobs_test

import (
	"database/sql"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/jobtest"
	"github.com/breadai/bread/jobs/river"
)

// Replicas on one PostgreSQL schema: every queue of a test opens the
// test's schema with its own pool, as separate processes would.
func TestConformancePostgres(t *testing.T) {
	url := serverURL(t)
	admin := adminDB(t, url)
	var schemas perTest[string]
	jobtest.Run(t, jobtest.Harness{
		Shared: true,
		Quiet:  2 * time.Second,
		New: func(t *testing.T) core.JobQueue {
			schema := schemas.get(t, func() string { return freshSchema(t, admin) })
			return openQueue(t, fastOptions(riverjobs.Options{Dialect: riverjobs.Postgres, DSN: url, Schema: schema}))
		},
	})
}

// Replicas in one process on one SQLite file, sharing its one-connection
// pool.
func TestConformanceSQLite(t *testing.T) {
	var dbs perTest[*sql.DB]
	jobtest.Run(t, jobtest.Harness{
		Shared: true,
		Quiet:  2 * time.Second,
		Wait:   30 * time.Second, // one connection for every queue, and -race: 200 jobs take a while
		New: func(t *testing.T) core.JobQueue {
			db := dbs.get(t, func() *sql.DB { return sqliteDB(t, tempPath(t)) })
			return openQueue(t, fastOptions(riverjobs.Options{Dialect: riverjobs.SQLite, DB: db}))
		},
	})
}
