package chaos

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
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

	mu     sync.Mutex
	counts map[string]int
}

var faultKinds = []string{"SIGKILL+restart", "redis restart", "pg_terminate_backend", "SIGTERM drain+restart", "SIGSTOP beyond lease+SIGCONT"}

func (fz *faults) run(ctx context.Context) {
	for i := 0; ; i++ {
		wait := time.Duration(2000+fz.rng.IntN(3000)) * time.Millisecond
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		kind := faultKinds[fz.rng.IntN(len(faultKinds))]
		if i < len(faultKinds) {
			kind = faultKinds[i]
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
