package core_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/breadai/bread/core"
)

// fakeQueue records what reaches the adapter.
type fakeQueue struct {
	starts, enqueues, cancels, stops, closes atomic.Int64
	refuseStart                              bool
}

func (q *fakeQueue) Start(context.Context, core.JobWorker, []core.JobSchedule) error {
	q.starts.Add(1)
	if q.refuseStart {
		return errors.New("refused")
	}
	return nil
}
func (q *fakeQueue) Enqueue(context.Context, core.Job) error { q.enqueues.Add(1); return nil }
func (q *fakeQueue) CancelJob(context.Context, string) (*core.Job, error) {
	q.cancels.Add(1)
	return nil, nil
}
func (q *fakeQueue) Stop(context.Context) error { q.stops.Add(1); return nil }
func (q *fakeQueue) Close() error               { q.closes.Add(1); return nil }

type noWork struct{}

func (noWork) WorkJob(context.Context, core.Job) error { return nil }

// TestQueueChecksStart: the arguments an adapter would otherwise check
// never reach it.
func TestQueueChecksStart(t *testing.T) {
	every := core.Every(time.Hour)
	for _, c := range []struct {
		name      string
		w         core.JobWorker
		schedules []core.JobSchedule
	}{
		{"nil worker", nil, nil},
		{"unnamed schedule", noWork{}, []core.JobSchedule{{Schedule: every}}},
		{"schedule without a Schedule", noWork{}, []core.JobSchedule{{Name: "nightly"}}},
		{"two schedules of one name", noWork{}, []core.JobSchedule{{Name: "n", Schedule: every}, {Name: "n", Schedule: every}}},
	} {
		f := &fakeQueue{}
		err := core.NewQueue(f).Start(t.Context(), c.w, c.schedules)
		if be := core.AsBreadError(err, ""); be.Code != core.CodeInvalidConfig || f.starts.Load() != 0 {
			t.Errorf("Start with %s = %v, the adapter started %d times; want INVALID_CONFIG and none", c.name, err, f.starts.Load())
		}
	}
}

func TestQueueLifecycle(t *testing.T) {
	ctx := t.Context()
	f := &fakeQueue{refuseStart: true}
	q := core.NewQueue(f)
	if err := q.Start(ctx, noWork{}, nil); err == nil {
		t.Fatal("the adapter's refusal was lost")
	}
	f.refuseStart = false
	if err := q.Start(ctx, noWork{}, nil); err != nil {
		t.Fatalf("Start after a refused Start: %v", err)
	}
	if err := q.Start(ctx, noWork{}, nil); core.AsBreadError(err, "").Code != core.CodeInvalidConfig {
		t.Errorf("a second Start = %v, want INVALID_CONFIG", err)
	}
	for _, j := range []core.Job{{Kind: core.JobKindRun}, {Key: "k"}} {
		if err := q.Enqueue(ctx, j); !errors.Is(err, core.ErrValidation) {
			t.Errorf("Enqueue(%+v) = %v, want VALIDATION_ERROR", j, err)
		}
	}
	if err := q.Enqueue(ctx, core.Job{Kind: core.JobKindRun, Key: "k"}); err != nil || f.enqueues.Load() != 1 {
		t.Errorf("Enqueue = %v, the adapter saw %d", err, f.enqueues.Load())
	}
	if err := q.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := q.Stop(ctx); err != nil || f.stops.Load() != 1 || f.closes.Load() != 1 {
		t.Errorf("a second Stop = %v; the adapter stopped %d and closed %d times, want once each", err, f.stops.Load(), f.closes.Load())
	}
	if err := q.Enqueue(ctx, core.Job{Kind: core.JobKindRun, Key: "k2"}); !errors.Is(err, core.ErrQueueClosed) {
		t.Errorf("Enqueue after Stop = %v, want QUEUE_CLOSED", err)
	}
	if _, err := q.CancelJob(ctx, "k"); !errors.Is(err, core.ErrQueueClosed) {
		t.Errorf("CancelJob after Stop = %v, want QUEUE_CLOSED", err)
	}
	if err := q.Start(ctx, noWork{}, nil); !errors.Is(err, core.ErrQueueClosed) {
		t.Errorf("Start after Stop = %v, want QUEUE_CLOSED", err)
	}
	if core.NewQueue(q) != q || core.NewQueue(nil) != nil {
		t.Error("NewQueue of a *Queue built another, or of nil is not nil")
	}
	var inner *fakeQueue
	if !q.As(&inner) || inner != f {
		t.Error("Queue.As did not reach the adapter")
	}
}
