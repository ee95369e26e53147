package riverjobs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/riverqueue/river"
)

// fakeInserts stands for River's InsertMany: every call is recorded, and a
// call that hold picks blocks until the test releases it.
type fakeInserts struct {
	mu      sync.Mutex
	calls   [][]string // the keys of each call, in call order
	release chan error
	hold    func(keys []string) bool
	fail    func(keys []string) error // the outcome of calls not held
}

func (f *fakeInserts) insertMany(_ context.Context, ps []river.InsertManyParams) error {
	keys := make([]string, len(ps))
	for i, p := range ps {
		keys[i] = p.Args.(jobArgs).Key
	}
	f.mu.Lock()
	f.calls = append(f.calls, keys)
	f.mu.Unlock()
	if f.hold != nil && f.hold(keys) {
		return <-f.release
	}
	if f.fail != nil {
		return f.fail(keys)
	}
	return nil
}

func (f *fakeInserts) callKeys() [][]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

// holding holds the calls that include key.
func holding(key string) *fakeInserts {
	return &fakeInserts{release: make(chan error), hold: func(keys []string) bool { return slices.Contains(keys, key) }}
}

// enqueue calls insert on its own goroutine; the channel gets its outcome.
func enqueue(in *inserter, key string) <-chan error {
	done := make(chan error, 1)
	go func() {
		done <- in.insert(context.Background(), key, river.InsertManyParams{Args: jobArgs{JobKind: "k", Key: key}})
	}()
	return done
}

func answered(c <-chan error) bool { return len(c) > 0 }

// With two batches in flight, a caller arriving while a batch waits for
// its commit is inserted at once, in a batch of its own, and answered
// first; with one, it waits for the first batch's end.
func TestInsertsInFlight(t *testing.T) {
	for _, inFlight := range []int{1, 2} {
		t.Run(fmt.Sprint(inFlight), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := holding("a")
				in := newInserter(f.insertMany, inFlight)
				defer in.stop()
				a := enqueue(in, "a")
				synctest.Wait() // a's insert started, and is held
				b := enqueue(in, "b")
				synctest.Wait()
				if answered(a) {
					t.Fatal("a answered before its insert ended")
				}
				if got, want := answered(b), inFlight > 1; got != want {
					t.Fatalf("b answered while a's insert is held: %v, want %v (inserts %v)", got, want, f.callKeys())
				}
				f.release <- nil
				if err := <-a; err != nil {
					t.Errorf("a: %v", err)
				}
				if err := <-b; err != nil {
					t.Errorf("b: %v", err)
				}
				if got, want := f.callKeys(), [][]string{{"a"}, {"b"}}; !slices.EqualFunc(got, want, slices.Equal) {
					t.Errorf("inserts %v, want %v", got, want)
				}
			})
		})
	}
}

// The callers queued while every slot is taken share the next insert.
func TestCallersQueuedMeanwhileShareOneInsert(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := holding("a")
		in := newInserter(f.insertMany, 1)
		defer in.stop()
		a := enqueue(in, "a")
		synctest.Wait()
		var rest []<-chan error
		for _, k := range []string{"b", "c", "d"} {
			rest = append(rest, enqueue(in, k))
		}
		synctest.Wait()
		f.release <- nil
		for _, c := range append(rest, a) {
			if err := <-c; err != nil {
				t.Error(err)
			}
		}
		got := f.callKeys()
		if len(got) != 2 || !slices.Equal(got[0], []string{"a"}) {
			t.Fatalf("inserts %v, want [a] then [b c d] in any order", got)
		}
		slices.Sort(got[1])
		if !slices.Equal(got[1], []string{"b", "c", "d"}) {
			t.Errorf("second insert %v, want b, c and d", got[1])
		}
	})
}

// A batch that fails is inserted again a job at a time: each caller gets
// its own job's outcome, none is dropped, and callers of one key share its
// insert.
func TestFailedBatchAnswersEachCaller(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := holding("first")
		bad := errors.New("bad job")
		f.fail = func(keys []string) error {
			switch {
			case len(keys) > 1:
				return errors.New("batch refused")
			case keys[0] == "bad":
				return bad
			}
			return nil
		}
		in := newInserter(f.insertMany, 1)
		defer in.stop()
		first := enqueue(in, "first")
		synctest.Wait() // the slot is taken: the next callers gather into one batch
		keys := []string{"good1", "bad", "good2", "bad", "good1"}
		outcomes := make([]<-chan error, len(keys))
		for i, k := range keys {
			outcomes[i] = enqueue(in, k)
		}
		synctest.Wait()
		f.release <- nil
		if err := <-first; err != nil {
			t.Fatalf("first: %v", err)
		}
		for i, k := range keys {
			err := <-outcomes[i]
			if k == "bad" && !errors.Is(err, bad) || k != "bad" && err != nil {
				t.Errorf("%s: %v", k, err)
			}
		}
		// first; the batch of three keys; then each key alone.
		if got := f.callKeys(); len(got) != 5 || len(got[1]) != 3 {
			t.Errorf("inserts %v, want [first], the three keys, then each alone", got)
		}
	})
}

// stop inserts what is queued before it returns; later inserts fail.
func TestStopInsertsWhatIsQueued(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := holding("a")
		in := newInserter(f.insertMany, 1)
		a := enqueue(in, "a")
		synctest.Wait()
		b := enqueue(in, "b")
		synctest.Wait()
		stopped := make(chan struct{})
		go func() { in.stop(); close(stopped) }()
		synctest.Wait()
		f.release <- nil
		<-stopped
		if err := <-a; err != nil {
			t.Errorf("a: %v", err)
		}
		if err := <-b; err != nil {
			t.Errorf("b, queued before stop: %v", err)
		}
		if err := <-enqueue(in, "c"); err == nil {
			t.Error("insert after stop succeeded")
		}
	})
}
