package riverjobs_test

import (
	"context"
	"database/sql"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/jobs/river"
)

// benchDrain enqueues jobs jobs on one of three queues sharing a database
// and times until the three have worked them all: the throughput of a
// three-replica deployment with trivial jobs (polling every 100 ms, 10
// workers a queue).
func benchDrain(b *testing.B, open func() *riverjobs.Queue, jobs int) {
	var worked atomic.Int64
	all := make(chan struct{}, 1)
	var target atomic.Int64
	w := workerFunc(func(context.Context, core.Job) error {
		if worked.Add(1) == target.Load() {
			all <- struct{}{}
		}
		return nil
	})
	qs := []*riverjobs.Queue{open(), open(), open()}
	for _, q := range qs {
		if err := q.Start(b.Context(), w, nil); err != nil {
			b.Fatalf("Start: %v", err)
		}
	}
	b.ResetTimer()
	for i := range b.N {
		target.Store(int64((i + 1) * jobs))
		for j := range jobs {
			if err := qs[0].Enqueue(b.Context(), core.Job{Kind: "bench", Key: fmt.Sprintf("%d-%d", i, j)}); err != nil {
				b.Fatalf("Enqueue: %v", err)
			}
		}
		select {
		case <-all:
		case <-time.After(5 * time.Minute):
			b.Fatalf("%d of %d jobs worked after 5 minutes", worked.Load(), target.Load())
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(jobs*b.N)/b.Elapsed().Seconds(), "jobs/s")
	for _, q := range qs {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_ = q.Stop(ctx)
		cancel()
		_ = q.Close()
	}
}

func benchOptions(o riverjobs.Options) riverjobs.Options {
	o.PollInterval = 100 * time.Millisecond
	o.Logger = quietLogger()
	return o
}

func BenchmarkDrain500Postgres(b *testing.B) {
	url := serverURL(b)
	admin, err := sql.Open("pgx", url)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = admin.Close() }) // after the schema's drop
	schema := freshSchema(b, admin)
	benchDrain(b, func() *riverjobs.Queue {
		q, err := riverjobs.Open(b.Context(), benchOptions(riverjobs.Options{Dialect: riverjobs.Postgres, DSN: url, Schema: schema}))
		if err != nil {
			b.Fatalf("Open: %v", err)
		}
		return q
	}, 500)
}

func BenchmarkDrain500SQLite(b *testing.B) {
	db, err := sql.Open("sqlite", tempPath(b)+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)")
	if err != nil {
		b.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	defer db.Close()
	benchDrain(b, func() *riverjobs.Queue {
		q, err := riverjobs.Open(b.Context(), benchOptions(riverjobs.Options{Dialect: riverjobs.SQLite, DB: db}))
		if err != nil {
			b.Fatalf("Open: %v", err)
		}
		return q
	}, 500)
}
