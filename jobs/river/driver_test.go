package riverjobs_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/jobs/river"
)

// pgOpeners are the two ways to open PostgreSQL: from a DSN (a pgx pool
// and River's pgx driver) and from a *sql.DB (River's database/sql driver).
func pgOpeners(url string) map[string]func(t *testing.T, schema string, o riverjobs.Options) riverjobs.Options {
	return map[string]func(t *testing.T, schema string, o riverjobs.Options) riverjobs.Options{
		"DSN": func(_ *testing.T, schema string, o riverjobs.Options) riverjobs.Options {
			o.Dialect, o.DSN, o.Schema = riverjobs.Postgres, url, schema
			return o
		},
		"DB": func(t *testing.T, schema string, o riverjobs.Options) riverjobs.Options {
			db, err := sql.Open("pgx", url)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = db.Close() })
			o.Dialect, o.DB, o.Schema = riverjobs.Postgres, db, schema
			return o
		},
	}
}

// The queue's inserts send no NOTIFY: a listener on River's insert channel
// gets the test's own notification, sent after the enqueues committed,
// first. Notifications arrive in commit order, so one from an insert would
// come before it.
func TestEnqueueSendsNoNotify(t *testing.T) {
	url := serverURL(t)
	admin := adminDB(t, url)
	for name, open := range pgOpeners(url) {
		t.Run(name, func(t *testing.T) {
			schema := freshSchema(t, admin)
			q := openQueue(t, open(t, schema, fastOptions(riverjobs.Options{})))
			listener, err := pgx.Connect(t.Context(), url)
			if err != nil {
				t.Fatal(err)
			}
			defer listener.Close(context.Background())
			channel := schema + ".river_insert" // River's insert topic, schema-qualified
			if _, err := listener.Exec(t.Context(), "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
				t.Fatal(err)
			}
			for _, key := range []string{"a", "b", "c"} {
				if err := q.Enqueue(t.Context(), core.Job{Kind: "k", Key: key}); err != nil {
					t.Fatalf("Enqueue: %v", err)
				}
			}
			if _, err := listener.Exec(t.Context(), "SELECT pg_notify($1, 'sentinel')", channel); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			n, err := listener.WaitForNotification(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if n.Payload != "sentinel" {
				t.Errorf("first notification on %s: %q, want the sentinel (the queue notified)", channel, n.Payload)
			}
		})
	}
}

// A queue's own inserts wake its fetcher: with a poll interval of an hour,
// jobs enqueued after Start are worked at once.
func TestOwnInsertsWakeTheQueue(t *testing.T) {
	url := serverURL(t)
	admin := adminDB(t, url)
	for name, open := range pgOpeners(url) {
		t.Run(name, func(t *testing.T) {
			o := fastOptions(riverjobs.Options{})
			o.PollInterval = time.Hour
			q := openQueue(t, open(t, freshSchema(t, admin), o))
			worked := make(chan string, 3)
			if err := q.Start(t.Context(), workerFunc(func(_ context.Context, j core.Job) error {
				worked <- j.Key
				return nil
			}), nil); err != nil {
				t.Fatalf("Start: %v", err)
			}
			for _, key := range []string{"a", "b", "c"} {
				if err := q.Enqueue(t.Context(), core.Job{Kind: "k", Key: key}); err != nil {
					t.Fatalf("Enqueue: %v", err)
				}
			}
			deadline := time.After(30 * time.Second) // far below the poll interval
			for range 3 {
				select {
				case <-worked:
				case <-deadline:
					t.Fatal("jobs enqueued after Start were not worked: the insert did not wake the queue")
				}
			}
		})
	}
}
