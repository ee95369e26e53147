package chaos

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestChaos is the harness (make chaos): CHAOS_DURATION of load and
// faults, a settle, then the checker. CHAOS_SEED fixes the randomness
// (load and faults; the processes' timing is not seeded).
func TestChaos(t *testing.T) {
	raw := os.Getenv("CHAOS_DURATION")
	if raw == "" {
		t.Skip("the chaos harness runs with CHAOS_DURATION set (make chaos CHAOS_DURATION=90s)")
	}
	dur, err := time.ParseDuration(raw)
	if err != nil || dur <= 0 {
		t.Fatalf("CHAOS_DURATION %q is not a positive duration such as 90s", raw)
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("CHAOS_SEED"); s != "" {
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("CHAOS_SEED %q is not an unsigned integer", s)
		}
	}
	kinds, err := parseFaults(os.Getenv("CHAOS_FAULTS"))
	if err != nil {
		t.Fatal(err)
	}
	pg := os.Getenv("BREAD_TEST_POSTGRES_URL")
	if pg == "" {
		t.Fatal("the chaos harness needs BREAD_TEST_POSTGRES_URL (it creates a database of its own there)")
	}
	fmt.Printf("chaos: duration %s, seed %d, faults %s\n", dur, seed, strings.Join(kinds, ", "))

	logPath := filepath.Join(os.TempDir(), fmt.Sprintf("chaos-%d-%d.log", seed, os.Getpid()))
	logs, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logs.Close()
	fmt.Printf("chaos: replica and redis logs in %s\n", logPath)

	bin := buildBread(t)
	redis := startRedis(t, logs)
	dbURL, dbName, admin := privateDB(t, pg)
	db, err := sql.Open("pgx", dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	booted := time.Now()
	c := newCluster(t, bin, project(t), []string{"DB_URL=" + dbURL, "REDIS_URL=" + redis.url()}, logs, 3)

	// The replicas' descriptors and threads once warm, to compare with
	// the survivors' at the end.
	time.Sleep(3 * time.Second)
	type usage struct{ pid, fds, threads int }
	before := map[int]usage{}
	for _, r := range c.reps {
		p := r.pid()
		before[r.idx] = usage{p, fds(p), threads(p)}
	}

	tr := newTracker()
	settle, stopSettle := context.WithCancel(context.Background())
	defer stopSettle()
	l := &load{c: c, tr: tr, seed: seed, settle: settle}
	from := time.Now()
	ctx, stop := context.WithTimeout(context.Background(), dur)
	defer stop()
	fz := &faults{c: c, redis: redis, admin: admin, dbName: dbName, rng: rand.New(rand.NewPCG(seed, 99)), kinds: kinds, counts: map[string]int{},
		logf: func(format string, args ...any) { fmt.Fprintf(logs, "chaos: "+format+"\n", args...) }}
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Add(1)
		go func() { defer wg.Done(); l.worker(ctx, i) }()
	}
	wg.Add(1)
	go func() { defer wg.Done(); fz.run(ctx) }()
	wg.Wait()
	to := time.Now()

	// Settle: every replica up again, the bot's answers through, no run
	// left running or queued.
	for _, r := range c.reps {
		r.signal(syscall.SIGCONT)
		r.mu.Lock()
		r.paused = false
		r.mu.Unlock()
		if !r.up() {
			if err := c.start(r); err != nil {
				t.Fatal(err)
			}
		}
	}
	bots := make(chan struct{})
	go func() { l.bots.Wait(); close(bots) }()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		var live int
		_ = db.QueryRow("SELECT count(*) FROM bread_runs WHERE status IN ('running', 'queued')").Scan(&live)
		botsDone := false
		select {
		case <-bots:
			botsDone = true
		default:
		}
		if live == 0 && botsDone {
			break
		}
		if time.Now().After(deadline) {
			fmt.Printf("chaos: not settled after 3 minutes: %d runs running or queued, bots done %v\n", live, botsDone)
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	time.Sleep(heartbeat + lease) // the last tails see their ends
	stopSettle()
	l.wg.Wait()
	<-bots

	// The harness's own idle keep-alive connections are descriptors of
	// the replicas too: closed before the replicas are measured.
	client.CloseIdleConnections()
	time.Sleep(time.Second)
	s, err := readStore(db)
	if err != nil {
		t.Fatal(err)
	}
	usageV := verdict{name: "no descriptor or thread growth on surviving replicas"}
	for _, r := range c.reps {
		b := before[r.idx]
		if r.pid() != b.pid {
			continue
		}
		f, th := fds(b.pid), threads(b.pid)
		usageV.detail += fmt.Sprintf(" [replica %d: fds %d→%d, threads %d→%d]", r.idx, b.fds, f, b.threads, th)
		if f > b.fds+32 || th > b.threads+16 {
			usageV.fail("replica %d: fds %d→%d, threads %d→%d", r.idx, b.fds, f, b.threads, th)
		}
	}

	fmt.Printf("chaos: faults injected:")
	injected := make([]string, 0, len(fz.counts))
	for k := range fz.counts {
		injected = append(injected, k)
	}
	sort.Strings(injected)
	for _, k := range injected {
		fmt.Printf(" %s=%d", k, fz.counts[k])
	}
	fmt.Printf("\nchaos: run records by outcome: %s\n", s.outcomes())
	fmt.Printf("chaos: client outcomes: %v\n", tr.outcomes)
	verdicts := []verdict{
		s.checkRuns(s.settleTicks(booted, to)), s.checkLogs(), s.checkOnLost(), s.checkApplied(), s.checkAnswered(tr),
		s.checkTails(tr), s.checkSessions(), usageV, s.checkTicks(booted, from, to),
	}
	for _, v := range verdicts {
		fmt.Println("chaos: " + v.String())
		if len(v.bad) > 0 {
			t.Fail()
		}
	}
	for _, k := range []string{"SIGKILL+restart", "redis restart", "pg_terminate_backend"} {
		if fz.counts[k] == 0 && slices.Contains(kinds, k) {
			t.Errorf("no %s was injected: run longer", k)
		}
	}
}
