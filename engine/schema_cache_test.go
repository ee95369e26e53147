package engine

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
)

func TestSchemaCacheCompilesEachTextOnce(t *testing.T) {
	var c schemaCache
	raw := json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)
	first, err := c.compile("tool t inputSchema", raw)
	if err != nil || first == nil {
		t.Fatalf("compile = %v, %v", first, err)
	}
	again, err := c.compile("tool u inputSchema", append(json.RawMessage(nil), raw...))
	if err != nil || again != first {
		t.Fatalf("the same text compiled again: %p, %p, %v", first, again, err)
	}
	if err := again.validate("arguments", map[string]any{"n": "x"}); err == nil {
		t.Fatal("the shared schema no longer validates")
	}
	if cs, err := c.compile("none", nil); cs != nil || err != nil {
		t.Fatalf("no schema = %v, %v; want nil, nil", cs, err)
	}
	bad := json.RawMessage(`{"type":"nonsense"}`)
	for range 2 {
		if _, err := c.compile("tool bad inputSchema", bad); core.AsBreadError(err, "").Code != core.CodeInvalidConfig {
			t.Fatalf("a broken schema = %v, want INVALID_CONFIG every time", err)
		}
	}
	if _, cached := c.m[string(bad)]; cached {
		t.Fatal("a broken schema was cached")
	}
}

// Runs compiling the same schemas at once, some of them broken, each get a
// usable schema or the error, and the cache ends up holding the good ones.
func TestSchemaCacheUnderConcurrentRuns(t *testing.T) {
	var c schemaCache
	good := json.RawMessage(`{"type":"object","required":["n"]}`)
	bad := json.RawMessage(`{"type":"nonsense"}`)
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			cs, err := c.compile("tool", good)
			if err != nil || cs.validate("arguments", map[string]any{}) == nil {
				t.Errorf("run %d: good schema %v, %v", i, cs, err)
			}
			if _, err := c.compile("tool", bad); err == nil {
				t.Errorf("run %d: a broken schema compiled", i)
			}
		})
	}
	wg.Wait()
	if _, ok := c.m[string(good)]; !ok || len(c.m) != 1 {
		t.Fatalf("cache holds %d schemas, want the good one alone", len(c.m))
	}
}

func TestSchemaCacheStartsOverPastItsBound(t *testing.T) {
	var c schemaCache
	for i := range maxCachedSchemas + 1 {
		if _, err := c.compile("s", json.RawMessage(`{"maxLength":`+strconv.Itoa(i)+`}`)); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(c.m); n != 1 {
		t.Fatalf("after %d schemas the cache holds %d, want it started over with the last", maxCachedSchemas+1, n)
	}
}

// An agent's task, knowledge and document tools are built once and shared
// by its runs.
func TestStaticToolsAreBuiltOnce(t *testing.T) {
	in, err := New(Config{Store: memory.New(), Agents: []*core.Agent{{
		ID: "a", Model: core.ModelRef{Provider: "none", Model: "m"},
		Knowledge: &core.KnowledgeConfig{}, Documents: &core.DocumentConfig{},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := in.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Stop(context.Background()) })
	rt := in.agents["a"]
	// The first runs of an agent may start at once.
	var wg sync.WaitGroup
	built := make([]*core.Tool, 8)
	for i := range built {
		wg.Go(func() {
			if ts, err := rt.staticTools(in); err == nil && len(ts) > 0 {
				built[i] = ts[0].tool
			}
		})
	}
	wg.Wait()
	for i, tool := range built {
		if tool == nil || tool != built[0] {
			t.Fatalf("concurrent first run %d got its own tools (%p, want %p)", i, tool, built[0])
		}
	}
	first, err := rt.staticTools(in)
	if err != nil || len(first) != 7 {
		t.Fatalf("static tools = %d, %v; want the 3 knowledge and 4 document tools", len(first), err)
	}
	again, _ := rt.staticTools(in)
	if &again[0] != &first[0] || again[0].tool != first[0].tool {
		t.Fatal("the static tools were built again")
	}
}
