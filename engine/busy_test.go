package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
)

// busyModel answers "echo: <input>", except that an input starting with
// "hold" streams "partial" and then waits until release is closed (then
// answers) or its call is cancelled. started receives the input of every
// call as it begins.
type busyModel struct {
	release chan struct{}
	started chan string
}

func newBusyModel() *busyModel {
	return &busyModel{release: make(chan struct{}), started: make(chan string, 16)}
}

func (m *busyModel) Stream(ctx context.Context, req core.ModelRequest) iter.Seq2[core.ModelEvent, error] {
	last := req.Messages[len(req.Messages)-1]
	input := ""
	for _, p := range last.Parts {
		input += p.Text
	}
	m.started <- input
	return func(yield func(core.ModelEvent, error) bool) {
		if strings.HasPrefix(input, "hold") {
			if !yield(core.ModelEvent{Type: core.EventTextDelta, Delta: "partial "}, nil) {
				return
			}
			select {
			case <-ctx.Done():
				yield(core.ModelEvent{}, ctx.Err())
				return
			case <-m.release:
			}
		}
		if yield(core.ModelEvent{Type: core.EventTextDelta, Delta: "echo: " + input}, nil) {
			yield(modeltest.Finish(core.FinishStop), nil)
		}
	}
}

type busyBed struct {
	in    *engine.Instance
	store *memory.Store
	model *busyModel
}

func newBusyBed(t *testing.T, policy core.ConcurrencyPolicy) *busyBed {
	t.Helper()
	m := newBusyModel()
	store := memory.New()
	agent := &core.Agent{ID: "chat", Model: mockModel(), Concurrency: policy}
	in, err := engine.New(engine.Config{Store: store, Agents: []*core.Agent{agent},
		Providers: core.ProviderRegistry{"mock": func(string) (core.LanguageModel, error) { return m, nil }}})
	if err != nil {
		t.Fatalf("engine.New: %v", err)
	}
	if err := in.Start(t.Context()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = in.Stop(context.Background()) })
	return &busyBed{in: in, store: store, model: m}
}

type runResult struct {
	crumbs []core.Crumb
	err    error
}

// start runs input on session s in the background.
func (b *busyBed) start(ctx context.Context, s, input string) <-chan runResult {
	done := make(chan runResult, 1)
	go func() {
		cs, err := collect(b.in.Run(ctx, "chat", input, core.RunOptions{Session: core.SessionOptions{ID: s}}))
		done <- runResult{cs, err}
	}()
	return done
}

// waitStarted waits until the model is called with input.
func (b *busyBed) waitStarted(t *testing.T, input string) {
	t.Helper()
	select {
	case got := <-b.model.started:
		if got != input {
			t.Fatalf("the model was called with %q, want %q", got, input)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the model was never called with %q", input)
	}
}

// notStarted checks, inside a synctest bubble, that the model is not
// called once every goroutine has done what it can.
func (b *busyBed) notStarted(t *testing.T) {
	t.Helper()
	synctest.Wait()
	select {
	case got := <-b.model.started:
		t.Fatalf("the model was called with %q while the session was held", got)
	default:
	}
}

func (b *busyBed) texts(t *testing.T, session string) []string {
	t.Helper()
	msgs, err := b.store.GetMessages(t.Context(), session)
	if err != nil {
		t.Fatalf("GetMessages: %v", err)
	}
	var out []string
	for _, sm := range msgs {
		var m core.Message
		if err := json.Unmarshal(sm.Content, &m); err != nil {
			t.Fatalf("message content: %v", err)
		}
		text := ""
		for _, p := range m.Parts {
			text += p.Text
		}
		out = append(out, string(m.Role)+":"+text)
	}
	return out
}

func waitRun(t *testing.T, ch <-chan runResult) runResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("a run never ended")
		return runResult{}
	}
}

func endCode(r runResult) string {
	if len(r.crumbs) == 0 {
		return "no crumbs"
	}
	if ae, ok := r.crumbs[len(r.crumbs)-1].(*core.AgentError); ok {
		return ae.Error.Code
	}
	return r.crumbs[len(r.crumbs)-1].CrumbType()
}

func sameStrings(t *testing.T, what string, want, got []string) {
	t.Helper()
	if strings.Join(want, "|") != strings.Join(got, "|") {
		t.Fatalf("%s:\n want %q\n  got %q", what, want, got)
	}
}

func TestBusySessionBadPolicyFailsTheBoot(t *testing.T) {
	_, err := engine.New(engine.Config{Store: memory.New(), Agents: []*core.Agent{{ID: "a", Model: mockModel(), Concurrency: "queue"}}})
	if !errors.Is(err, &core.BreadError{Code: core.CodeInvalidConfig}) {
		t.Fatalf("concurrency queue: want INVALID_CONFIG, got %v", err)
	}
	_, err = engine.New(engine.Config{Store: memory.New(), SessionConcurrency: "nope", Agents: []*core.Agent{{ID: "a", Model: mockModel()}}})
	if !errors.Is(err, &core.BreadError{Code: core.CodeInvalidConfig}) {
		t.Fatalf("default concurrency nope: want INVALID_CONFIG, got %v", err)
	}
	// Rollback removes messages: a store that cannot is refused at boot.
	_, err = engine.New(engine.Config{Store: noDeleteStore{memory.New()}, Agents: []*core.Agent{{ID: "a", Model: mockModel(), Concurrency: core.ConcurrencyRollback}}})
	if !errors.Is(err, &core.BreadError{Code: core.CodeInvalidConfig}) {
		t.Fatalf("rollback without core.MessageDeleter: want INVALID_CONFIG, got %v", err)
	}
}

// noDeleteStore hides every capability of the memory store but the port.
type noDeleteStore struct{ core.BreadStore }

func TestBusySessionReject(t *testing.T) {
	for _, policy := range []core.ConcurrencyPolicy{"", core.ConcurrencyReject} {
		t.Run("policy "+string(policy), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := newBusyBed(t, policy)
				first := b.start(t.Context(), "s1", "hold A")
				b.waitStarted(t, "hold A")

				second := waitRun(t, b.start(t.Context(), "s1", "B"))
				if !errors.Is(second.err, core.ErrSessionBusy) {
					t.Fatalf("second run on a busy session: want SESSION_BUSY, got %v", second.err)
				}
				if len(second.crumbs) != 1 || second.crumbs[0].Base().RunID != "" {
					t.Fatalf("a refused run never starts: want one agent:error without a run id, got %v", types(second.crumbs))
				}
				// Another session is not busy.
				other := waitRun(t, b.start(t.Context(), "s2", "C"))
				b.waitStarted(t, "C")
				if other.err != nil {
					t.Fatalf("a run on another session: %v", other.err)
				}
				close(b.model.release)
				if r := waitRun(t, first); r.err != nil {
					t.Fatalf("the first run: %v", r.err)
				}
				sameStrings(t, "session s1", []string{"user:hold A", "assistant:partial echo: hold A"}, b.texts(t, "s1"))
				// The session is free again.
				if r := waitRun(t, b.start(t.Context(), "s1", "D")); r.err != nil {
					t.Fatalf("a run after the first ended: %v", r.err)
				}
			})
		})
	}
}

func TestBusySessionEnqueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBusyBed(t, core.ConcurrencyEnqueue)
		first := b.start(t.Context(), "s1", "hold A")
		b.waitStarted(t, "hold A")
		second := b.start(t.Context(), "s1", "B")
		b.notStarted(t)

		// A queued run whose caller leaves gives its place up.
		ctx, cancel := context.WithCancel(t.Context())
		leaver := b.start(ctx, "s1", "gone")
		synctest.Wait() // it waits in the queue
		cancel()
		if r := waitRun(t, leaver); r.err == nil {
			t.Fatal("a queued run whose caller left: want an error")
		}
		third := b.start(t.Context(), "s1", "C")
		b.notStarted(t)

		close(b.model.release)
		for i, ch := range []<-chan runResult{first, second, third} {
			if r := waitRun(t, ch); r.err != nil {
				t.Fatalf("run %d: %v", i, r.err)
			}
		}
		sameStrings(t, "session s1: each run whole, in arrival order", []string{
			"user:hold A", "assistant:partial echo: hold A",
			"user:B", "assistant:echo: B",
			"user:C", "assistant:echo: C",
		}, b.texts(t, "s1"))
	})
}

func TestBusySessionInterrupt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBusyBed(t, core.ConcurrencyInterrupt)
		if r := waitRun(t, b.start(t.Context(), "s1", "before")); r.err != nil {
			t.Fatalf("the earlier run: %v", r.err)
		}
		b.waitStarted(t, "before")
		first := b.start(t.Context(), "s1", "hold A")
		b.waitStarted(t, "hold A")
		second := b.start(t.Context(), "s1", "B")
		r1 := waitRun(t, first)
		if !errors.Is(r1.err, core.ErrRunCancelled) || endCode(r1) != core.CodeRunCancelled {
			t.Fatalf("the interrupted run: want RUN_CANCELLED, got %v (%s)", r1.err, endCode(r1))
		}
		b.waitStarted(t, "B")
		if r := waitRun(t, second); r.err != nil {
			t.Fatalf("the interrupting run: %v", r.err)
		}
		sameStrings(t, "session s1: the interrupted run's turn is closed, then the new one", []string{
			"user:before", "assistant:echo: before",
			"user:hold A", "assistant:[interrupted: RUN_CANCELLED]",
			"user:B", "assistant:echo: B",
		}, b.texts(t, "s1"))
	})
}

func TestBusySessionRollback(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBusyBed(t, core.ConcurrencyRollback)
		if r := waitRun(t, b.start(t.Context(), "s1", "before")); r.err != nil {
			t.Fatalf("the earlier run: %v", r.err)
		}
		b.waitStarted(t, "before")
		first := b.start(t.Context(), "s1", "hold A")
		b.waitStarted(t, "hold A")
		second := b.start(t.Context(), "s1", "B")
		r1 := waitRun(t, first)
		if !errors.Is(r1.err, core.ErrRunCancelled) {
			t.Fatalf("the rolled-back run: want RUN_CANCELLED, got %v", r1.err)
		}
		b.waitStarted(t, "B")
		r2 := waitRun(t, second)
		if r2.err != nil {
			t.Fatalf("the new run: %v", r2.err)
		}
		sameStrings(t, "session s1: the cancelled run left nothing behind", []string{
			"user:before", "assistant:echo: before",
			"user:B", "assistant:echo: B",
		}, b.texts(t, "s1"))
		// The new run's model saw the session without the rolled-back turn.
		msgs := len(b.texts(t, "s1"))
		if msgs != 4 {
			t.Fatalf("want 4 messages, got %d", msgs)
		}
	})
}

// TestBusySessionConcurrentRejects starts many runs on one session at once:
// exactly one holds it, the others are refused, and the session holds one
// whole turn.
func TestBusySessionConcurrentRejects(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBusyBed(t, core.ConcurrencyReject)
		first := b.start(t.Context(), "s1", "hold A")
		b.waitStarted(t, "hold A")
		var wg sync.WaitGroup
		var mu sync.Mutex
		busy := 0
		for range 20 {
			wg.Go(func() {
				r := waitRun(t, b.start(t.Context(), "s1", "x"))
				if errors.Is(r.err, core.ErrSessionBusy) {
					mu.Lock()
					busy++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		close(b.model.release)
		waitRun(t, first)
		if busy != 20 {
			t.Fatalf("want 20 SESSION_BUSY, got %d", busy)
		}
		sameStrings(t, "session s1", []string{"user:hold A", "assistant:partial echo: hold A"}, b.texts(t, "s1"))
	})
}
