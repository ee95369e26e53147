package jobtest

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/breadai/bread/core"
)

// call is one WorkJob call seen by a recorder.
type call struct {
	job   core.Job
	queue int // which recorder (replica) worked it
	at    time.Time
}

// log is every WorkJob call of a case, across its queues.
type log struct {
	mu      sync.Mutex
	calls   []call
	changed chan struct{}
}

func newLog() *log { return &log{changed: make(chan struct{}, 1)} }

func (l *log) add(c call) {
	l.mu.Lock()
	l.calls = append(l.calls, c)
	l.mu.Unlock()
	select {
	case l.changed <- struct{}{}:
	default:
	}
}

func (l *log) snapshot() []call {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]call(nil), l.calls...)
}

// of returns the calls for key, in order.
func (l *log) of(key string) []call {
	var out []call
	for _, c := range l.snapshot() {
		if c.job.Key == key {
			out = append(out, c)
		}
	}
	return out
}

// counts is how many times each key was worked.
func (l *log) counts() map[string]int {
	m := map[string]int{}
	for _, c := range l.snapshot() {
		m[c.job.Key]++
	}
	return m
}

// waitFor waits until cond holds over the calls, failing the test after
// d.
func (l *log) waitFor(t *testing.T, d time.Duration, what string, cond func([]call) bool) []call {
	t.Helper()
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		calls := l.snapshot()
		if cond(calls) {
			return calls
		}
		select {
		case <-l.changed:
		case <-time.After(50 * time.Millisecond):
		case <-deadline.C:
			t.Fatalf("after %v, still waiting for %s; calls: %s", d, what, describe(l.snapshot()))
			return nil
		}
	}
}

// waitCount waits until key was worked n times.
func (l *log) waitCount(t *testing.T, d time.Duration, key string, n int) []call {
	t.Helper()
	l.waitFor(t, d, fmt.Sprintf("%d call(s) of %q", n, key), func(cs []call) bool {
		k := 0
		for _, c := range cs {
			if c.job.Key == key {
				k++
			}
		}
		return k >= n
	})
	return l.of(key)
}

func describe(calls []call) string {
	if len(calls) > 40 {
		return fmt.Sprintf("%d calls (first 40: %s ...)", len(calls), describe(calls[:40]))
	}
	parts := make([]string, 0, len(calls))
	for _, c := range calls {
		parts = append(parts, fmt.Sprintf("%s#%d@q%d", c.job.Key, c.job.Attempt, c.queue))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// worker records every call in a log, then does what handle says (nil:
// complete the job).
type worker struct {
	log    *log
	queue  int
	handle func(ctx context.Context, j core.Job) error
}

func (w *worker) WorkJob(ctx context.Context, j core.Job) error {
	w.log.add(call{job: j, queue: w.queue, at: time.Now()})
	if w.handle == nil {
		return nil
	}
	return w.handle(ctx, j)
}

// jsonEqual compares two JSON documents semantically: a queue may store
// payloads in a normalised form (PostgreSQL jsonb reorders keys).
func jsonEqual(a, b json.RawMessage) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b) || string(a) == "null" || string(b) == "null"
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xs, _ := json.Marshal(x)
	ys, _ := json.Marshal(y)
	return string(xs) == string(ys)
}

func sortedKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
