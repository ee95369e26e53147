package chaos

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"syscall"
	"time"
)

// faults injects one fault at a time, on a schedule (every kind once, in
// order, first) and then at random, and restarts what it stopped.
type faults struct {
	c      *cluster
	redis  *redisProc
	admin  *sql.DB
	dbName string
	rng    *rand.Rand
	logf   func(format string, args ...any)

	kinds []string // the fault kinds injected (CHAOS_FAULTS)

	mu     sync.Mutex
	counts map[string]int
}

var faultKinds = []string{"SIGKILL+restart", "redis restart", "pg_terminate_backend", "SIGTERM drain+restart", "SIGSTOP beyond lease+SIGCONT"}

// faultNames are CHAOS_FAULTS' short names of the fault kinds.
var faultNames = map[string]string{
	"sigkill": "SIGKILL+restart", "redis": "redis restart", "pg": "pg_terminate_backend",
	"sigterm": "SIGTERM drain+restart", "sigstop": "SIGSTOP beyond lease+SIGCONT",
}

// parseFaults reads CHAOS_FAULTS: a comma-separated list of short names
// (sigkill, redis, pg, sigterm, sigstop), or a list of those to leave out
// when each is prefixed with "-" ("-sigstop"); empty is every kind.
func parseFaults(raw string) ([]string, error) {
	if strings.TrimSpace(raw) == "" {
		return faultKinds, nil
	}
	keep := map[string]bool{}
	drop := map[string]bool{}
	for _, f := range strings.Split(raw, ",") {
		f = strings.TrimSpace(f)
		name, out := strings.CutPrefix(f, "-")
		kind, ok := faultNames[name]
		if !ok {
			return nil, fmt.Errorf("CHAOS_FAULTS: unknown fault %q (sigkill, redis, pg, sigterm, sigstop)", f)
		}
		if out {
			drop[kind] = true
		} else {
			keep[kind] = true
		}
	}
	if len(keep) > 0 && len(drop) > 0 {
		return nil, fmt.Errorf("CHAOS_FAULTS %q mixes kinds to keep and kinds to leave out", raw)
	}
	var kinds []string
	for _, k := range faultKinds {
		if (len(keep) > 0 && keep[k]) || (len(drop) > 0 && !drop[k]) {
			kinds = append(kinds, k)
		}
	}
	if len(kinds) == 0 {
		return nil, fmt.Errorf("CHAOS_FAULTS %q leaves no fault", raw)
	}
	return kinds, nil
}

func (fz *faults) run(ctx context.Context) {
	for i := 0; ; i++ {
		wait := time.Duration(2000+fz.rng.IntN(3000)) * time.Millisecond
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		kind := fz.kinds[fz.rng.IntN(len(fz.kinds))]
		if i < len(fz.kinds) {
			kind = fz.kinds[i]
		}
		if err := fz.inject(kind); err != nil {
			fz.logf("fault %s failed: %v", kind, err)
			continue
		}
		fz.mu.Lock()
		fz.counts[kind]++
		fz.mu.Unlock()
	}
}

// victim is a replica that is up, while another one is up too.
func (fz *faults) victim() *replica {
	var up []*replica
	for _, r := range fz.c.reps {
		if r.up() {
			up = append(up, r)
		}
	}
	if len(up) < 2 {
		return nil
	}
	return up[fz.rng.IntN(len(up))]
}

func (fz *faults) inject(kind string) error {
	switch kind {
	case "redis restart":
		fz.logf("fault: redis restart")
		return fz.redis.restart()
	case "pg_terminate_backend":
		var n int
		err := fz.admin.QueryRow("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", fz.dbName).Scan(&n)
		fz.logf("fault: pg_terminate_backend of %d connections", n)
		if err == nil && n == 0 {
			return fmt.Errorf("no connection to terminate")
		}
		return err
	}
	r := fz.victim()
	if r == nil {
		return fmt.Errorf("fewer than two replicas up")
	}
	fz.logf("fault: %s of replica %d (pid %d)", kind, r.idx, r.pid())
	switch kind {
	case "SIGKILL+restart":
		r.kill()
		time.Sleep(time.Duration(fz.rng.IntN(1000)) * time.Millisecond)
	case "SIGTERM drain+restart":
		r.signal(syscall.SIGTERM)
		r.mu.Lock()
		done := r.done
		r.mu.Unlock()
		select {
		case <-done:
		case <-time.After(40 * time.Second):
			r.kill()
			return fmt.Errorf("replica %d did not drain within 40s", r.idx)
		}
	case "SIGSTOP beyond lease+SIGCONT":
		r.mu.Lock()
		r.paused = true
		r.mu.Unlock()
		r.signal(syscall.SIGSTOP)
		time.Sleep(2*lease + time.Duration(fz.rng.IntN(1000))*time.Millisecond)
		r.signal(syscall.SIGCONT)
		r.mu.Lock()
		r.paused = false
		r.mu.Unlock()
		return nil
	}
	r.mu.Lock()
	r.restarts++
	r.mu.Unlock()
	return fz.c.start(r)
}
