package redis_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
	bredis "github.com/breadai/bread/transports/redis"
)

// newInstance runs a scripted agent with tr as its transport.
func newInstance(t *testing.T, tr core.BreadBus) *engine.Instance {
	t.Helper()
	model := modeltest.New(modeltest.Text("Bread ", "is ", "baked."))
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
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := in.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Stop(context.Background()) })
	return in
}

type seen struct {
	typ string
	seq int64
}

// TestARunIsTailedFromAnotherReplica runs an agent on one transport and
// tails it through a second one with its own connections, as a second
// replica would: it sees every crumb the run's own stream yielded, in order.
func TestARunIsTailedFromAnotherReplica(t *testing.T) {
	url := sharedRedisURL(t)
	prefix := testPrefix(t, url)
	replicaA, err := bredis.New(bredis.Options{URL: url, KeyPrefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	replicaB := newTransport(t, url, bredis.Options{KeyPrefix: prefix})
	in := newInstance(t, replicaA) // Stop closes replicaA

	var local []seen
	var sub *collector
	for c, err := range in.Run(context.Background(), "baker", "Tell me about bread.", core.RunOptions{}) {
		if err != nil {
			t.Fatalf("run: %v", err)
		}
		b := c.Base()
		local = append(local, seen{c.CrumbType(), b.Seq})
		if sub == nil {
			sub = collect(t, replicaB, b.RunID, 0) // a late tail: replay, then live
		}
	}
	if last := local[len(local)-1]; last.typ != core.TypeAgentRunEnd {
		t.Fatalf("the run ended with %s", last.typ)
	}
	waitFor(t, 10*time.Second, "the tail to reach agent:run:end", func() bool {
		sub.mu.Lock()
		defer sub.mu.Unlock()
		n := len(sub.frames)
		return n > 0 && sub.frames[n-1].Crumb.CrumbType() == core.TypeAgentRunEnd
	})
	sub.mu.Lock()
	var remote []seen
	for _, f := range sub.frames {
		remote = append(remote, seen{f.Crumb.CrumbType(), f.Seq})
	}
	sub.mu.Unlock()
	if !slices.Equal(local, remote) {
		t.Fatalf("the other replica saw\n %v\nthe run yielded\n %v", remote, local)
	}
}

// TestRunsGoOnWhileRedisIsDown runs an agent while its Redis is down: the
// run completes and persists as if nothing happened, and its frames reach
// Redis once it is back.
func TestRunsGoOnWhileRedisIsDown(t *testing.T) {
	r := startPrivateRedis(t)
	tr, err := bredis.New(bredis.Options{URL: r.URL(), KeyPrefix: "bread:run:"})
	if err != nil {
		t.Fatal(err)
	}
	in := newInstance(t, tr)
	r.stop()

	out, err := in.RunSync(context.Background(), "baker", "Tell me about bread.", core.RunOptions{})
	if err != nil {
		t.Fatalf("a run during a Redis outage failed: %v", err)
	}
	if out.Output != "Bread is baked." {
		t.Fatalf("output %v", out.Output)
	}
	entries, err := in.Storage().GetCrumbs(context.Background(), out.RunID, 0, 100)
	if err != nil || len(entries) == 0 {
		t.Fatalf("the run was not persisted: %d entries, %v", len(entries), err)
	}

	r.restart()
	flush(t, tr)
	sub := collect(t, tr, out.RunID, 0)
	waitFor(t, 10*time.Second, "the queued frames to reach Redis", func() bool {
		sub.mu.Lock()
		defer sub.mu.Unlock()
		n := len(sub.frames)
		return n > 0 && sub.frames[n-1].Crumb.CrumbType() == core.TypeAgentRunEnd
	})
}
