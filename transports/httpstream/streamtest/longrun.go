package streamtest

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"

	"github.com/breadai/bread/core/modeltest"
)

// LongRun is the scenario of a reconnect test: a model turn of many
// distinct text deltas, paced so that the run stays at most Lead deltas
// ahead of what its client has read. A client that drops its connection at
// seeded points (Cuts) then reconnects while the run goes on, in the middle
// of a delta window, behind or at the head of the live frames, without a
// test that sleeps.
type LongRun struct {
	// Deltas are the turn's deltas, all distinct; Text is their
	// concatenation, the run's whole output.
	Deltas []string
	Text   string
	// Lead is how many deltas the run may be ahead of the client.
	Lead int

	mu      sync.Mutex
	seen    int           // deltas through the latest one the client saw
	changed chan struct{} // closed and replaced when seen grows
}

const digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// NewLongRun returns a run of n (at most 238,328) distinct deltas paced
// lead deltas ahead of its client. Each delta is 3 bytes (i in base 62), so
// one 4 KiB log window holds 1,366 of them, more than the thousand frames
// an older replay buffer kept.
func NewLongRun(n, lead int) *LongRun {
	l := &LongRun{Lead: lead, changed: make(chan struct{})}
	text := make([]byte, 0, n*3)
	for i := range n {
		d := string([]byte{digits[i/62/62%62], digits[i/62%62], digits[i%62]})
		l.Deltas = append(l.Deltas, d)
		text = append(text, d...)
	}
	l.Text = string(text)
	return l
}

// Turn is the model's turn: the deltas, then a stop. The event of delta i
// waits until the client has seen delta i-Lead.
func (l *LongRun) Turn() modeltest.Turn {
	t := modeltest.Text(l.Deltas...)
	t.Pace = func(ctx context.Context, i int) error {
		if i < l.Lead || i >= len(l.Deltas) {
			return nil
		}
		for {
			l.mu.Lock()
			seen, changed := l.seen, l.changed
			l.mu.Unlock()
			if seen > i-l.Lead {
				return nil
			}
			select {
			case <-changed:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	return t
}

// Saw records a text delta the client received: a delta of the run, or
// several at once (an aggregated log entry), or the end of one (a repeat
// trimmed away). Its last three bytes name the latest delta the client
// has seen, whatever it missed before: a client that loses text fails its
// test instead of stalling the run.
func (l *LongRun) Saw(text string) {
	if len(text) < 3 {
		return
	}
	n := 0
	for _, c := range []byte(text[len(text)-3:]) {
		n = n*62 + strings.IndexByte(digits, c)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if n+1 > l.seen {
		l.seen = n + 1
		close(l.changed)
		l.changed = make(chan struct{})
	}
}

// Cuts returns count distinct points in [1, n), ascending, drawn from seed:
// where a client drops its connection (after so many deltas, or bytes).
func Cuts(seed uint64, n, count int) []int {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	seen := map[int]bool{}
	var out []int
	for len(out) < count && len(out) < n-1 {
		if k := 1 + rng.IntN(n-1); !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}
