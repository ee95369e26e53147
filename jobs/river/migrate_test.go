package riverjobs_test

import (
	"encoding/json"
	"sync"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/jobs/river"
)

// openConcurrently opens n queues at once on a database River has never
// seen, as replicas starting together do, then once more after; every Open
// must succeed, and the tables must work.
func openConcurrently(t *testing.T, n int, o riverjobs.Options) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, n)
	queues := make([]*riverjobs.Queue, n)
	for i := range n {
		wg.Go(func() { queues[i], errs[i] = riverjobs.Open(t.Context(), o) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Open %d of %d at once: %v", i+1, n, err)
			continue
		}
		t.Cleanup(func() { _ = queues[i].Close() })
	}
	if t.Failed() {
		return
	}
	again, err := riverjobs.Open(t.Context(), o)
	if err != nil {
		t.Fatalf("Open after the tables exist: %v", err)
	}
	t.Cleanup(func() { _ = again.Close() })
	job := core.Job{Kind: "test", Key: "k", Payload: json.RawMessage(`{"a":1}`)}
	if err := queues[0].Enqueue(t.Context(), job); err != nil {
		t.Fatalf("Enqueue: %v", err)
	}
	got, err := again.CancelJob(t.Context(), "k")
	if err != nil || got == nil || got.Key != "k" || got.Kind != "test" {
		t.Fatalf("CancelJob on another queue of the database = %+v, %v; want the job", got, err)
	}
}

func TestMigrateConcurrentlyPostgres(t *testing.T) {
	url := serverURL(t)
	schema := freshSchema(t, adminDB(t, url))
	openConcurrently(t, 4, riverjobs.Options{Dialect: riverjobs.Postgres, DSN: url, Schema: schema, Logger: quietLogger()})
}

// Separate pools on one file, as separate processes would have.
func TestMigrateConcurrentlySQLite(t *testing.T) {
	openConcurrently(t, 4, riverjobs.Options{Dialect: riverjobs.SQLite, DSN: tempPath(t), Logger: quietLogger()})
}

func TestOptionsRefused(t *testing.T) {
	for name, o := range map[string]riverjobs.Options{
		"no dialect":       {DSN: "x"},
		"unknown dialect":  {Dialect: "mysql", DSN: "x"},
		"no database":      {Dialect: riverjobs.SQLite},
		"negative":         {Dialect: riverjobs.SQLite, DSN: "x", Concurrency: -1},
		"negative inserts": {Dialect: riverjobs.SQLite, DSN: "x", InsertsInFlight: -1},
		"schema on lite":   {Dialect: riverjobs.SQLite, DSN: "x", Schema: "s"},
	} {
		q, err := riverjobs.Open(t.Context(), o)
		var be *core.BreadError
		if q != nil || !asBread(err, &be) || be.Code != core.CodeInvalidConfig {
			t.Errorf("%s: Open = %v, %v; want INVALID_CONFIG", name, q, err)
		}
	}
}
