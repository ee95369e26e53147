package riverjobs_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/jobs/river"
)

// The queue's inserts send no NOTIFY: a listener on River's insert channel
// gets the test's own notification, sent after the enqueues committed,
// first. Notifications arrive in commit order, so one from an insert would
// come before it.
func TestEnqueueSendsNoNotify(t *testing.T) {
	url := serverURL(t)
	schema := freshSchema(t, adminDB(t, url))
	q := openQueue(t, fastOptions(riverjobs.Options{Dialect: riverjobs.Postgres, DSN: url, Schema: schema}))
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
}
