package jobtest

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/breadai/bread/core"
)

// Harness is how the suite gets queues from an adapter.
type Harness struct {
	// New returns a new, unstarted queue on an empty backend of its own
	// test t. With Shared, every queue New returns for the same t shares
	// that test's backend (the replicas of one deployment); without it the
	// suite calls New once per test. Closing what New opened is the
	// harness's job, through t.Cleanup; the suite stops every queue New
	// returned, started or not.
	New func(t *testing.T) core.JobQueue
	// Shared says queues New returns for one test share a backend, and
	// turns on the cases across replicas.
	Shared bool
	// Wait bounds each wait for a job to be handed out (0: 15s).
	Wait time.Duration
	// Quiet is how long the suite watches for a job handed out a second
	// time, or after it should have stopped, before it calls the outcome
	// final (0: 2s). It should exceed the adapter's poll interval and
	// retry backoff.
	Quiet time.Duration
	// Bubble runs each case in a testing/synctest bubble, for a queue
	// whose goroutines and timers all live in the process (no network, no
	// database): its retry backoffs, poll intervals and the Quiet windows
	// pass in fake time, at once, and a leaked goroutine fails the case
	// (synctest.Test waits for every goroutine of the bubble to end).
	Bubble bool
}

// Run runs every case against queues made by h.New.
func Run(t *testing.T, h Harness) {
	if h.New == nil {
		t.Fatal("jobtest: Harness.New is nil")
	}
	if h.Wait <= 0 {
		h.Wait = 15 * time.Second
	}
	if h.Quiet <= 0 {
		h.Quiet = 2 * time.Second
	}
	s := &suite{h: h}
	cases := []struct {
		name string
		fn   func(*testing.T)
	}{
		{"WorkedOnce", s.workedOnce},
		{"RetriesUntilMaxAttempts", s.retriesUntilMaxAttempts},
		{"SnoozeKeepsTheAttempt", s.snoozeKeepsTheAttempt},
		{"DuplicateKeyIsOneJob", s.duplicateKeyIsOneJob},
		{"CancelQueued", s.cancelQueued},
		{"CancelRunningOrUnknown", s.cancelRunningOrUnknown},
		{"StopWaitsForRunningJob", s.stopWaitsForRunningJob},
		{"StopCancelsAtDeadline", s.stopCancelsAtDeadline},
		{"ScheduleTicks", s.scheduleTicks},
		{"StartRefusesBadArguments", s.startRefusesBadArguments},
	}
	if h.Shared {
		cases = append(cases, []struct {
			name string
			fn   func(*testing.T)
		}{
			{"SharedEachJobOnce", s.sharedEachJobOnce},
			{"SharedScheduleOncePerTick", s.sharedScheduleOncePerTick},
			{"SharedStoppedJobHandedOutAgain", s.sharedStoppedJobHandedOutAgain},
			{"SharedDuplicateKeyIsOneJob", s.sharedDuplicateKeyIsOneJob},
			{"SharedJobOutlivesItsQueue", s.sharedJobOutlivesItsQueue},
		}...)
	} else {
		t.Log("jobtest: Harness.Shared is false; the cases across replicas are skipped")
	}
	for _, c := range cases {
		if h.Bubble {
			t.Run(c.name, func(t *testing.T) { synctest.Test(t, c.fn) })
			continue
		}
		t.Run(c.name, c.fn)
	}
}

type suite struct {
	h Harness

	mu      sync.Mutex
	checked map[*testing.T]bool // tests whose goroutine check is armed
}
