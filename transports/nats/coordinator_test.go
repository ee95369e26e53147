package nats_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
	bnats "github.com/breadai/bread/transports/nats"
)

// replica is an Instance with a Coordinator, as one process of a
// deployment.
type replica struct {
	in    *engine.Instance
	coord *bnats.Coordinator
}

func newReplica(t *testing.T, url, bucket string, ttl time.Duration, log *slog.Logger, turns ...modeltest.Turn) replica {
	t.Helper()
	coord, err := bnats.NewCoordinator(bnats.CoordinatorOptions{URL: url, Bucket: bucket, LeaseTTL: ttl, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	model := modeltest.New(turns...)
	in, err := engine.New(engine.Config{
		Store: memory.New(), Providers: model.Registry("m"), Plugins: []core.BreadPlugin{coord},
		Agents: []*core.Agent{{ID: "a", Model: core.ModelRef{Provider: "m", Model: "x"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := in.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Stop(context.Background()) })
	return replica{in: in, coord: coord}
}

func TestCoordinatorLeasesAndCancelAcrossReplicas(t *testing.T) {
	url := sharedNATSURL(t)
	bucket := testNames(t, url).bucket
	reached := make(chan struct{})
	logs := &logBuffer{}
	a := newReplica(t, url, bucket, 2*time.Second, newLogger(logs), modeltest.Block(reached, "working"))
	b := newReplica(t, url, bucket, 2*time.Second, nil)

	var runID, sessionID string
	var runErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		for c, err := range a.in.Run(context.Background(), "a", "go", core.RunOptions{}) {
			if s, ok := c.(*core.AgentRunStart); ok {
				runID, sessionID = s.RunID, s.SessionID
			}
			runErr = err
		}
	}()
	<-reached
	ctx := context.Background()
	if alive, err := b.coord.Alive(ctx, runID); err != nil || !alive {
		t.Fatalf("replica B sees A's run alive: %v %v", alive, err)
	}
	if holder, _ := b.coord.Holder(ctx, runID); holder != a.coord.ReplicaID() {
		t.Fatalf("holder %q, want %q", holder, a.coord.ReplicaID())
	}
	found, err := b.coord.Cancel(ctx, runID)
	if err != nil || !found {
		t.Fatalf("cancel from B: %v %v", found, err)
	}
	<-done
	var be *core.BreadError
	if !errors.As(runErr, &be) || be.Code != core.CodeRunCancelled {
		t.Fatalf("A's run ended with %v", runErr)
	}
	want := "run_id=" + runID + " session_id=" + sessionID + " agent_id=a"
	if sessionID == "" || !strings.Contains(logs.String(), "cancelled a run on request from another replica\" "+want) {
		t.Fatalf("A's log has no cancel line with %q:\n%s", want, logs.String())
	}
	waitFor(t, 10*time.Second, "the lease is released when the run ends", func() bool {
		alive, _ := b.coord.Alive(ctx, runID)
		return !alive
	})
	if found, _ := b.coord.Cancel(ctx, "no-such-run"); found {
		t.Error("cancelling an unknown run finds nothing")
	}
}

// TestLeaseOfADeadReplicaExpires writes a lease the way a replica does
// just before it is killed, and never renews it: it expires within the
// bucket's TTL.
func TestLeaseOfADeadReplicaExpires(t *testing.T) {
	url := sharedNATSURL(t)
	bucket := testNames(t, url).bucket
	live := newReplica(t, url, bucket, time.Second, nil)

	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx := context.Background()
	kv, err := js.KeyValue(ctx, bucket+"_leases")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.PutString(ctx, "r1", "dead-replica"); err != nil {
		t.Fatal(err)
	}
	if holder, _ := live.coord.Holder(ctx, "r1"); holder != "dead-replica" {
		t.Fatalf("the lease is held at first; holder %q", holder)
	}
	waitFor(t, 10*time.Second, "the unrenewed lease expires", func() bool {
		alive, err := live.coord.Alive(ctx, "r1")
		return err == nil && !alive
	})
}

func TestLeasesAreRenewed(t *testing.T) {
	url := sharedNATSURL(t)
	bucket := testNames(t, url).bucket
	r := newReplica(t, url, bucket, 600*time.Millisecond, nil)
	release := r.coord.HoldLease(context.Background(), "long.run") // not a plain token: hex-encoded
	time.Sleep(2 * time.Second)                                    // three TTLs: only renewal keeps it
	if alive, _ := r.coord.Alive(context.Background(), "long.run"); !alive {
		t.Fatal("a held lease is renewed")
	}
	release()
	if alive, _ := r.coord.Alive(context.Background(), "long.run"); alive {
		t.Fatal("a released lease is gone at once")
	}
}

func TestCoordinatorBadOptions(t *testing.T) {
	for _, o := range []bnats.CoordinatorOptions{
		{URL: "http://x"},
		{URL: "nats://127.0.0.1:4222", Bucket: "a.b"},
		{URL: ""},
	} {
		_, err := bnats.NewCoordinator(o)
		var be *core.BreadError
		if !errors.As(err, &be) || be.Code != core.CodeInvalidConfig {
			t.Errorf("%+v: got %v, want INVALID_CONFIG", o, err)
		}
	}
}
