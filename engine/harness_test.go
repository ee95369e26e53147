package engine_test

import (
	"context"
	"encoding/json"
	"iter"
	"slices"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
)

// testbed is an Instance on the memory store and a scripted model registered
// as provider "mock".
type testbed struct {
	in    *engine.Instance
	store *memory.Store
	model *modeltest.Model
}

func newTestbed(t *testing.T, model *modeltest.Model, agents []*core.Agent, mutate ...func(*engine.Config)) *testbed {
	t.Helper()
	store := memory.New()
	cfg := engine.Config{Store: store, Agents: agents, Providers: model.Registry("mock")}
	for _, m := range mutate {
		m(&cfg)
	}
	in, err := engine.New(cfg)
	if err != nil {
		t.Fatalf("engine.New: %v", err)
	}
	if err := in.Start(context.Background()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = in.Stop(context.Background()) })
	return &testbed{in: in, store: store, model: model}
}

func mockModel() core.ModelRef { return core.ModelRef{Provider: "mock", Model: "m"} }

func textAgent(id string) *core.Agent {
	return &core.Agent{ID: id, Model: mockModel(), Prompt: "You are " + id + "."}
}

// collect drains a stream, returning its crumbs and the error paired with
// the last one.
func collect(seq iter.Seq2[core.Crumb, error]) ([]core.Crumb, error) {
	var out []core.Crumb
	var last error
	for c, err := range seq {
		if c != nil {
			out = append(out, c)
		}
		if err != nil {
			last = err
		}
	}
	return out, last
}

func (tb *testbed) run(t *testing.T, agentID string, input any, opts core.RunOptions) ([]core.Crumb, error) {
	t.Helper()
	return collect(tb.in.Run(context.Background(), agentID, input, opts))
}

func types(cs []core.Crumb) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.CrumbType()
	}
	return out
}

func find[T core.Crumb](cs []core.Crumb) []T {
	var out []T
	for _, c := range cs {
		if v, ok := c.(T); ok {
			out = append(out, v)
		}
	}
	return out
}

func last[T core.Crumb](t *testing.T, cs []core.Crumb) T {
	t.Helper()
	all := find[T](cs)
	if len(all) == 0 {
		var zero T
		t.Fatalf("no %T in %v", zero, types(cs))
	}
	return all[len(all)-1]
}

func wantTypes(t *testing.T, cs []core.Crumb, want ...string) {
	t.Helper()
	if got := types(cs); !slices.Equal(got, want) {
		t.Fatalf("crumbs %v\nwant   %v", got, want)
	}
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	var be *core.BreadError
	if err == nil || !asBread(err, &be) || be.Code != code {
		t.Fatalf("error %v, want code %s", err, code)
	}
}

func asBread(err error, target **core.BreadError) bool {
	be, ok := err.(*core.BreadError)
	if ok {
		*target = be
	}
	return ok
}

func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// messages returns a session's persisted messages in the runner's form.
func (tb *testbed) messages(t *testing.T, sessionID string) []core.Message {
	t.Helper()
	stored, err := tb.store.GetMessages(context.Background(), sessionID)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]core.Message, len(stored))
	for i, m := range stored {
		if err := json.Unmarshal(m.Content, &out[i]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

type iterSeq2 = iter.Seq2[core.ModelEvent, error]
