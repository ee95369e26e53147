//go:build linux

package bench_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// BenchmarkPostgresServer drives short runs on PostgreSQL (16 clients, as
// BenchmarkShortRun/postgres, bread alone) and reports what they cost the
// database server, read from the server itself: pg-cpu-µs/run, the CPU of
// the store's backends (their /proc/<pid>/schedstat, so the server must run
// on this machine; 0 when it does not); bench-cpu-µs/run, this process's
// (server and clients, getrusage); wal-bytes/run (pg_current_wal_lsn
// before and after, the whole cluster's: other databases' writes count
// too); commits/run (pg_stat_database.xact_commit of this database, every
// session's). -v logs what the store's backends were doing, sampled from
// pg_stat_activity every 10 ms: running (no wait event), waiting for the
// client (ClientRead: the bench's side), or waiting on the WAL (WALWrite,
// WALSync) or a lock.
func BenchmarkPostgresServer(b *testing.B) {
	base := os.Getenv("BREAD_TEST_POSTGRES_URL")
	if base == "" {
		b.Skip("BREAD_TEST_POSTGRES_URL is not set")
	}
	store, app := postgresStoreNamed(b)
	bread := startBread(b, store, 1)
	if err := driveErr(bread.target, 4*clients, clients); err != nil { // the pool's connections open
		b.Fatal(err)
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = admin.Close() })
	ctx := b.Context()

	before := readPGServer(b, admin, app)
	var ru0 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	sampleCtx, stopSampling := context.WithCancel(ctx)
	waits := map[string]int{}
	var sampled sync.WaitGroup
	sampled.Go(func() { sampleWaits(sampleCtx, admin, app, waits) })
	b.ResetTimer()
	start := time.Now()
	if err := driveErr(bread.target, b.N, clients); err != nil {
		b.Fatal(err)
	}
	d := time.Since(start)
	b.StopTimer()
	stopSampling()
	sampled.Wait()
	var ru1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	after := readPGServer(b, admin, app)

	n := float64(b.N)
	var cpu time.Duration
	for pid, t := range after.cpu {
		cpu += t - before.cpu[pid]
	}
	benchCPU := time.Duration(syscall.TimevalToNsec(ru1.Utime) + syscall.TimevalToNsec(ru1.Stime) -
		syscall.TimevalToNsec(ru0.Utime) - syscall.TimevalToNsec(ru0.Stime))
	b.ReportMetric(n/d.Seconds(), "bread-runs/s")
	b.ReportMetric(cpu.Seconds()*1e6/n, "pg-cpu-µs/run")
	b.ReportMetric(benchCPU.Seconds()*1e6/n, "bench-cpu-µs/run")
	b.ReportMetric(float64(after.wal-before.wal)/n, "wal-bytes/run")
	b.ReportMetric(float64(after.commits-before.commits)/n, "commits/run")
	b.Logf("%d backends; WAL: %d records, %d syncs, %d writes over the cluster (pg_stat_wal); wait events of the store's backends (share of %d samples):\n%s",
		len(after.cpu), after.walRecords-before.walRecords, after.walSyncs-before.walSyncs, after.walWrites-before.walWrites, total(waits), shares(waits))
}

// pgServer is what the server says about itself at one moment.
type pgServer struct {
	cpu                             map[int]time.Duration // by backend pid
	wal                             int64                 // pg_current_wal_lsn, in bytes
	commits                         int64                 // this database's
	walRecords, walSyncs, walWrites int64                 // pg_stat_wal
}

func readPGServer(b *testing.B, db *sql.DB, app string) pgServer {
	b.Helper()
	ctx := b.Context()
	st := pgServer{cpu: map[int]time.Duration{}}
	rows, err := db.QueryContext(ctx, "SELECT pid FROM pg_stat_activity WHERE application_name = $1", app)
	if err != nil {
		b.Fatal(err)
	}
	for rows.Next() {
		var pid int
		if err := rows.Scan(&pid); err != nil {
			b.Fatal(err)
		}
		st.cpu[pid] = schedCPU(pid)
	}
	if err := rows.Close(); err != nil {
		b.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "SELECT pg_stat_clear_snapshot()"); err != nil {
		b.Fatal(err)
	}
	err = db.QueryRowContext(ctx, `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint,
  (SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()),
  wal_records, wal_sync, wal_write FROM pg_stat_wal`).Scan(&st.wal, &st.commits, &st.walRecords, &st.walSyncs, &st.walWrites)
	if err != nil {
		b.Fatal(err)
	}
	return st
}

// schedCPU is the CPU time process pid has run, from /proc/<pid>/schedstat
// (nanoseconds), or 0 when it cannot be read (another machine's server).
func schedCPU(pid int) time.Duration {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/schedstat")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(raw))
	if len(f) == 0 {
		return 0
	}
	ns, _ := strconv.ParseInt(f[0], 10, 64)
	return time.Duration(ns)
}

// sampleWaits tallies, every 10 ms until ctx ends, the state and wait event
// of each backend named app.
func sampleWaits(ctx context.Context, db *sql.DB, app string, into map[string]int) {
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		rows, err := db.QueryContext(ctx, `SELECT state, COALESCE(wait_event_type || ':' || wait_event, 'running'), left(regexp_replace(query, '\s+', ' ', 'g'), 40)
FROM pg_stat_activity WHERE application_name = $1`, app)
		if err != nil {
			return
		}
		for rows.Next() {
			var state, wait, q string
			if rows.Scan(&state, &wait, &q) != nil {
				break
			}
			k := state + " " + wait
			if state == "active" {
				k += " [" + q + "]"
			}
			into[k]++
		}
		_ = rows.Close()
	}
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func shares(m map[string]int) string {
	type kv struct {
		k string
		n int
	}
	var all []kv
	for k, n := range m {
		all = append(all, kv{k, n})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].n > all[j].n })
	n := total(m)
	var s strings.Builder
	for _, e := range all {
		fmt.Fprintf(&s, "  %5.1f%%  %s\n", 100*float64(e.n)/float64(n), e.k)
	}
	return s.String()
}
