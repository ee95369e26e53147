package riverjobs_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/jobs/river"
)

// Enqueue calls made at once share inserts: every job is inserted once,
// a key enqueued by several callers at once included, and each caller
// returns only once its job can be fetched.
func TestConcurrentEnqueuesInsertEachKeyOnce(t *testing.T) {
	q := openQueue(t, fastOptions(riverjobs.Options{Dialect: riverjobs.SQLite, DB: sqliteDB(t, tempPath(t))}))
	const keys, callersPerKey = 40, 3
	var mu sync.Mutex
	worked := map[string]int{}
	all := make(chan struct{})
	w := workerFunc(func(_ context.Context, j core.Job) error {
		mu.Lock()
		defer mu.Unlock()
		worked[j.Key]++
		if len(worked) == keys {
			select {
			case <-all:
			default:
				close(all)
			}
		}
		return nil
	})
	var wg sync.WaitGroup
	for k := range keys {
		for range callersPerKey {
			wg.Go(func() {
				if err := q.Enqueue(t.Context(), core.Job{Kind: "k", Key: fmt.Sprintf("key-%d", k)}); err != nil {
					t.Errorf("Enqueue: %v", err)
				}
			})
		}
	}
	wg.Wait()
	if err := q.Start(t.Context(), w, nil); err != nil {
		t.Fatalf("Start: %v", err)
	}
	select {
	case <-all:
	case <-time.After(30 * time.Second):
		t.Fatalf("worked %d of %d keys", len(worked), keys)
	}
	time.Sleep(500 * time.Millisecond) // room for a duplicate to show
	mu.Lock()
	defer mu.Unlock()
	for k, n := range worked {
		if n != 1 {
			t.Errorf("%s worked %d times", k, n)
		}
	}
}
