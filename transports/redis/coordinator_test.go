package redis_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
	"github.com/breadai/bread/transports/redis"
)

// replica is an Instance with a Coordinator, as one process of a
// deployment.
type replica struct {
	in    *engine.Instance
	coord *redis.Coordinator
}

func newReplica(t *testing.T, url, prefix string, ttl time.Duration, turns ...modeltest.Turn) replica {
	t.Helper()
	return newLoggedReplica(t, url, prefix, ttl, nil, turns...)
}

// newLoggedReplica is newReplica whose coordinator logs to log.
func newLoggedReplica(t *testing.T, url, prefix string, ttl time.Duration, log *slog.Logger, turns ...modeltest.Turn) replica {
	t.Helper()
	coord, err := redis.NewCoordinator(redis.CoordinatorOptions{URL: url, KeyPrefix: prefix, LeaseTTL: ttl, Logger: log})
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

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestCoordinatorLeasesAndCancelAcrossReplicas(t *testing.T) {
	url := sharedRedisURL(t)
	prefix := testPrefix(t, url)
	reached := make(chan struct{})
	logs := &logBuffer{}
	a := newLoggedReplica(t, url, prefix, 2*time.Second, newLogger(logs), modeltest.Block(reached, "working"))
	b := newReplica(t, url, prefix, 2*time.Second)

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
	// A's line about the cancel names the run the way the engine's lines
	// do: its session and agent come from the run's record.
	want := "run_id=" + runID + " session_id=" + sessionID + " agent_id=a"
	if sessionID == "" || !strings.Contains(logs.String(), "cancelled a run on request from another replica\" "+want) {
		t.Fatalf("A's log has no cancel line with %q:\n%s", want, logs.String())
	}
	eventually(t, "the lease is released when the run ends", func() bool {
		alive, _ := b.coord.Alive(ctx, runID)
		return !alive
	})
	if found, _ := b.coord.Cancel(ctx, "no-such-run"); found {
		t.Error("cancelling an unknown run finds nothing")
	}
}

func TestLeaseOfADeadReplicaExpires(t *testing.T) {
	url := sharedRedisURL(t)
	prefix := testPrefix(t, url)
	// A coordinator that was never started renews nothing: it holds a lease
	// the way a replica does just before it is killed.
	dead, err := redis.NewCoordinator(redis.CoordinatorOptions{URL: url, KeyPrefix: prefix, LeaseTTL: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer dead.Close(context.Background())
	_ = dead.HoldLease(context.Background(), "r1")
	live := newReplica(t, url, prefix, time.Second)
	if alive, _ := live.coord.Alive(context.Background(), "r1"); !alive {
		t.Fatal("the lease is held at first")
	}
	eventually(t, "the unrenewed lease expires", func() bool {
		alive, _ := live.coord.Alive(context.Background(), "r1")
		return !alive
	})
}

func TestLeasesAreRenewed(t *testing.T) {
	url := sharedRedisURL(t)
	prefix := testPrefix(t, url)
	r := newReplica(t, url, prefix, 300*time.Millisecond)
	release := r.coord.HoldLease(context.Background(), "long-run")
	time.Sleep(time.Second) // three TTLs: only renewal keeps it
	if alive, _ := r.coord.Alive(context.Background(), "long-run"); !alive {
		t.Fatal("a held lease is renewed")
	}
	release()
	if alive, _ := r.coord.Alive(context.Background(), "long-run"); alive {
		t.Fatal("a released lease is gone at once")
	}
}

func TestCoordinatorBadURL(t *testing.T) {
	if _, err := redis.NewCoordinator(redis.CoordinatorOptions{URL: "http://x"}); err == nil {
		t.Fatal("want an error")
	}
}
