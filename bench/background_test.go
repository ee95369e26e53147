package bench_test

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/engine"
	riverjobs "github.com/breadai/bread/jobs/river"
	"github.com/breadai/bread/providers/replay"
)

// BenchmarkBackground measures background runs drained through River:
// each iteration is one run enqueued through the engine's RunBackground
// (16 callers at once, as the short-run benchmarks' clients), handed out by
// River, run (a replay model answering one text delta) and completed. It
// reports jobs/s, from the first enqueue to the last job's end, and
// enqueued/s, the rate of the RunBackground calls alone. The runs'
// store is the memory store, so the figure is the queue's: River on
// PostgreSQL (a fresh schema of BREAD_TEST_POSTGRES_URL, skipped without it)
// and on a SQLite file, with the queue's default options.
func BenchmarkBackground(b *testing.B) {
	for _, bc := range []struct {
		name string
		open func(b *testing.B) riverjobs.Options
	}{
		{"postgres", riverPostgres},
		{"sqlite", riverSQLite},
	} {
		b.Run(bc.name, func(b *testing.B) {
			o := bc.open(b)
			o.Logger = slog.New(slog.DiscardHandler)
			q, err := riverjobs.Open(b.Context(), o)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = q.Close() })
			counted := &countingQueue{JobQueue: q}
			inst := startBackground(b, counted)
			b.ReportAllocs()
			b.ResetTimer()
			var next atomic.Int64
			var wg sync.WaitGroup
			var failed atomic.Pointer[error]
			for range min(clients, b.N) {
				wg.Go(func() {
					for next.Add(1) <= int64(b.N) {
						if _, err := inst.RunBackground(b.Context(), "a", "hi", core.RunOptions{}, core.BackgroundOptions{}); err != nil {
							failed.CompareAndSwap(nil, &err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "enqueued/s")
			if err := failed.Load(); err != nil {
				b.Fatal(*err)
			}
			if err := counted.wait(b.Context(), int64(b.N), 5*time.Minute); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
		})
	}
}

// riverPostgres is River on a fresh schema of BREAD_TEST_POSTGRES_URL,
// dropped at cleanup.
func riverPostgres(b *testing.B) riverjobs.Options {
	base := os.Getenv("BREAD_TEST_POSTGRES_URL")
	if base == "" {
		b.Skip("BREAD_TEST_POSTGRES_URL is not set")
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = admin.Close() })
	schema := fmt.Sprintf("bread_bench_river_%d", time.Now().UnixNano())
	if _, err := admin.ExecContext(b.Context(), "CREATE SCHEMA "+schema); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _, _ = admin.Exec("DROP SCHEMA " + schema + " CASCADE") })
	return riverjobs.Options{Dialect: riverjobs.Postgres, DSN: base, Schema: schema}
}

// riverSQLite is River on a SQLite file of its own.
func riverSQLite(b *testing.B) riverjobs.Options {
	return riverjobs.Options{Dialect: riverjobs.SQLite, DSN: filepath.Join(b.TempDir(), "river.db")}
}

// startBackground starts an engine on the memory store whose one agent
// replays one text delta, with jobs as its queue.
func startBackground(b *testing.B, jobs core.JobQueue) *engine.Instance {
	b.Helper()
	dir := b.TempDir()
	transcript := `{"call":0,"type":"text-delta","delta":"tok "}` + "\n" +
		`{"call":0,"type":"finish","finishReason":"stop","usage":{"inputTokens":1,"outputTokens":1}}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "t.jsonl"), []byte(transcript), 0o600); err != nil {
		b.Fatal(err)
	}
	inst, err := engine.New(engine.Config{
		Store:     memory.New(),
		Jobs:      jobs,
		Providers: replay.Registry(dir, replay.Options{NoDelay: true}),
		Agents:    []*core.Agent{{ID: "a", Model: core.ModelRef{Provider: "replay", Model: "t.jsonl"}}},
		Logger:    slog.New(slog.DiscardHandler),
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := inst.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = inst.Stop(ctx)
	})
	return inst
}

// countingQueue counts the jobs its worker finished without error.
type countingQueue struct {
	core.JobQueue
	mu   sync.Mutex
	done int64
	more chan struct{} // closed and replaced at each job's end
}

func (q *countingQueue) Start(ctx context.Context, w core.JobWorker, s []core.JobSchedule) error {
	return q.JobQueue.Start(ctx, countingWorker{q: q, w: w}, s)
}

func (q *countingQueue) finished() {
	q.mu.Lock()
	q.done++
	if q.more != nil {
		close(q.more)
		q.more = nil
	}
	q.mu.Unlock()
}

// wait waits until n jobs finished, or fails after limit.
func (q *countingQueue) wait(ctx context.Context, n int64, limit time.Duration) error {
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	for {
		q.mu.Lock()
		done := q.done
		if q.more == nil {
			q.more = make(chan struct{})
		}
		more := q.more
		q.mu.Unlock()
		if done >= n {
			return nil
		}
		select {
		case <-more:
		case <-deadline.C:
			return fmt.Errorf("%d of %d background runs finished after %v", done, n, limit)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

type countingWorker struct {
	q *countingQueue
	w core.JobWorker
}

func (w countingWorker) WorkJob(ctx context.Context, j core.Job) error {
	err := w.w.WorkJob(ctx, j)
	if err == nil && j.Kind == core.JobKindRun {
		w.q.finished()
	}
	return err
}
