package jobtest

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

// armLeakCheck records the goroutine count now and, at the end of the test
// (after every cleanup registered later: stopping the queues, closing the
// harness's backend), waits for the count to settle back to it. A queue's
// goroutines belong to it and end with Stop.
func (s *suite) armLeakCheck(t *testing.T) {
	t.Helper()
	if s.h.Bubble || s.armed(t) {
		return // in a bubble, synctest.Test itself waits for every goroutine
	}
	base := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(10 * time.Second)
		n := runtime.NumGoroutine()
		for n > base && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
			n = runtime.NumGoroutine()
		}
		if n > base {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			dump := string(buf)
			if len(dump) > 20000 {
				dump = dump[:20000] + "\n..."
			}
			t.Errorf("goroutines: %d after the queues stopped, %d before the test; leaked:\n%s", n, base, strings.TrimSpace(dump))
		}
	})
}

// armed marks t as checked; newQueue arms the check once per test.
func (s *suite) armed(t *testing.T) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.checked[t] {
		return true
	}
	if s.checked == nil {
		s.checked = map[*testing.T]bool{}
	}
	s.checked[t] = true
	return false
}
