package nats_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
	bnats "github.com/breadai/bread/transports/nats"
)

// publishBound is how long a Publish may take while NATS is down: the
// configured PublishTimeout plus room for a loaded CI machine. It checks
// that Publish is bounded by the timeout, not by NATS.
const publishBound = 100*time.Millisecond + 2*time.Second

// outageOptions make failures show quickly: a write unacknowledged for
// 500ms is retried.
func outageOptions() bnats.Options {
	return bnats.Options{PublishTimeout: 100 * time.Millisecond, AckTimeout: 500 * time.Millisecond}
}

// TestPublishSurvivesAnOutage stops the server under a publisher: Publish
// stays fast, the frames wait in the queue, and once the server is back
// (with its store, as a restarted server has) the run's subject holds
// every frame once, in order.
func TestPublishSurvivesAnOutage(t *testing.T) {
	n := startPrivateNATS(t)
	tr := newTransport(t, n.URL(), outageOptions())
	run := runID(t)

	publishRange(t, tr, run, 1, 3)
	flush(t, tr)

	n.stop()
	for i := int64(4); i <= 10; i++ {
		began := time.Now()
		if err := tr.Publish(context.Background(), frame(run, i)); err != nil {
			t.Fatalf("Publish during the outage returned %v; an outage must never fail a run", err)
		}
		if d := time.Since(began); d > publishBound {
			t.Fatalf("Publish took %v during the outage", d)
		}
	}
	waitFor(t, 20*time.Second, "a failed write attempt", func() bool { return tr.Stats().Failures > 0 })
	if q := tr.Stats().Queued; q == 0 {
		t.Fatal("the frames of the outage left the queue while NATS was down")
	}

	n.restart()
	publishRange(t, tr, run, 11, 12)
	flush(t, tr)

	sub := collect(t, tr, run, 0)
	sub.waitSeqs(t, 20*time.Second, seqRange(1, 12)...)
	if st := tr.Stats(); st.Dropped != 0 || st.Queued != 0 || st.Written+st.Duplicates < 12 {
		t.Fatalf("stats after recovery: %+v", st)
	}
}

func TestFullQueueDropsOldestWithoutBlocking(t *testing.T) {
	n := startPrivateNATS(t)
	var logs logBuffer
	opts := outageOptions()
	opts.QueueSize, opts.Logger = 5, newLogger(&logs)
	tr := newTransport(t, n.URL(), opts)
	run := runID(t)
	n.stop()

	for i := int64(1); i <= 20; i++ {
		began := time.Now()
		if err := tr.Publish(context.Background(), frame(run, i)); err != nil {
			t.Fatalf("Publish %d: %v", i, err)
		}
		if d := time.Since(began); d > publishBound {
			t.Fatalf("Publish %d took %v with a full queue and NATS down", i, d)
		}
	}
	if st := tr.Stats(); st.Dropped != 15 || st.Queued != 5 {
		t.Fatalf("stats with a full queue: %+v, want 15 dropped and 5 queued", st)
	}
	n.restart()
	flush(t, tr)
	// The newest five survive, in order (a write begun before the drops
	// may also have stored a few of the first frames).
	sub := collect(t, tr, run, 15)
	sub.waitSeqs(t, 20*time.Second, seqRange(16, 20)...)
}

// TestSubscriberSurvivesARestart follows a run across a server restart:
// the subscription is recreated from the last stream sequence it saw and
// yields every frame once, without an error.
func TestSubscriberSurvivesARestart(t *testing.T) {
	n := startPrivateNATS(t)
	tr := newTransport(t, n.URL(), outageOptions())
	run := runID(t)

	sub := collect(t, tr, run, 0)
	publishRange(t, tr, run, 1, 3)
	sub.waitSeqs(t, 10*time.Second, 1, 2, 3)

	n.stop()
	n.restart()

	publishRange(t, tr, run, 4, 6)
	sub.waitSeqs(t, 30*time.Second, 1, 2, 3, 4, 5, 6)
	if errs := sub.errors(); len(errs) > 0 {
		t.Fatalf("the subscription yielded errors across the restart: %v", errs)
	}
}

func TestSubscriberStartedDuringAnOutage(t *testing.T) {
	n := startPrivateNATS(t)
	tr := newTransport(t, n.URL(), outageOptions())
	run := runID(t)
	n.stop()

	sub := collect(t, tr, run, 0)
	publishRange(t, tr, run, 1, 2)
	n.restart()
	sub.waitSeqs(t, 30*time.Second, 1, 2)
}

// TestARunCompletesAcrossARestart restarts the server in the middle of a
// run served by replica A while replica B tails it through its own
// connection: the run completes, and B's tail resumes and reaches
// agent:run:end with every crumb the run yielded, in order.
func TestARunCompletesAcrossARestart(t *testing.T) {
	n := startPrivateNATS(t)
	names := testNames(t, n.URL())
	opts := outageOptions()
	opts.Stream, opts.SubjectPrefix = names.stream, names.prefix
	opts.URL = n.URL()
	replicaA, err := bnats.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	replicaB := newTransport(t, n.URL(), opts)

	halfway, resume := make(chan struct{}), make(chan struct{})
	turn := modeltest.Text("Bread ", "is ", "baked ", "again.")
	turn.Pace = func(ctx context.Context, i int) error {
		if i == 2 {
			close(halfway)
			select {
			case <-resume:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	}
	in := newInstance(t, replicaA, turn) // Stop closes replicaA

	type result struct {
		crumbs []seen
		err    error
	}
	done := make(chan result, 1)
	runIDs := make(chan string, 1)
	go func() {
		var r result
		for c, err := range in.Run(context.Background(), "baker", "Tell me about bread.", core.RunOptions{}) {
			if err != nil {
				r.err = err
				break
			}
			if len(r.crumbs) == 0 {
				runIDs <- c.Base().RunID
			}
			r.crumbs = append(r.crumbs, seen{c.CrumbType(), c.Base().Seq})
		}
		done <- r
	}()
	run := <-runIDs
	tail := collect(t, replicaB, run, 0)
	<-halfway
	waitFor(t, 10*time.Second, "the tail to follow the run live", func() bool { return tail.last() == core.TypeTextDelta })

	n.stop()
	n.restart()
	close(resume)

	r := <-done
	if r.err != nil {
		t.Fatalf("the run failed across the restart: %v", r.err)
	}
	waitFor(t, 30*time.Second, "the tail to reach agent:run:end", func() bool { return tail.last() == core.TypeAgentRunEnd })
	tail.mu.Lock()
	var remote []seen
	for _, f := range tail.frames {
		remote = append(remote, seen{f.Crumb.CrumbType(), f.Seq})
	}
	tail.mu.Unlock()
	if !slices.Equal(r.crumbs, remote) {
		t.Fatalf("the tail saw\n %v\nthe run yielded\n %v", remote, r.crumbs)
	}
	if errs := tail.errors(); len(errs) > 0 {
		t.Fatalf("the tail yielded errors: %v", errs)
	}
}

// TestRunsGoOnWhileNATSIsDown runs an agent while its NATS is down: the
// run completes and persists as if nothing happened, and its frames reach
// the stream once NATS is back.
func TestRunsGoOnWhileNATSIsDown(t *testing.T) {
	n := startPrivateNATS(t)
	opts := outageOptions()
	opts.URL = n.URL()
	tr, err := bnats.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	in := newInstance(t, tr, modeltest.Text("Bread ", "is ", "baked."))
	n.stop()

	out, err := in.RunSync(context.Background(), "baker", "Tell me about bread.", core.RunOptions{})
	if err != nil {
		t.Fatalf("a run during a NATS outage failed: %v", err)
	}
	if out.Output != "Bread is baked." {
		t.Fatalf("output %v", out.Output)
	}
	entries, err := in.Storage().GetCrumbs(context.Background(), out.RunID, 0, 100)
	if err != nil || len(entries) == 0 {
		t.Fatalf("the run was not persisted: %d entries, %v", len(entries), err)
	}

	n.restart()
	flush(t, tr)
	sub := collect(t, tr, out.RunID, 0)
	waitFor(t, 20*time.Second, "the queued frames to reach the stream", func() bool { return sub.last() == core.TypeAgentRunEnd })
}

type seen struct {
	typ string
	seq int64
}

// newInstance runs a scripted agent with tr as its bus; Stop closes tr.
func newInstance(t *testing.T, tr core.BreadBus, turns ...modeltest.Turn) *engine.Instance {
	t.Helper()
	model := modeltest.New(turns...)
	in, err := engine.New(engine.Config{
		Store:     memory.New(),
		Bus:       tr,
		Providers: model.Registry("scripted"),
		Agents: []*core.Agent{{
			ID:     "baker",
			Model:  core.ModelRef{Provider: "scripted", Model: "demo"},
			Prompt: "You bake.",
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := in.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Stop(context.Background()) })
	return in
}
