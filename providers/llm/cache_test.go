package llm

import (
	"sync"
	"testing"

	"github.com/breadai/bread/core"
)

func TestFactoriesBuildEachModelOnce(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	reg := Registry(Options{ClientOptions: ClientOptions{Getenv: getenv}})

	// No key yet: refused, and the refusal is not kept.
	if _, err := reg["anthropic"]("claude-x"); err == nil {
		t.Fatal("anthropic without a key was built")
	}
	env["ANTHROPIC_API_KEY"] = "k"
	first, err := reg["anthropic"]("claude-x")
	if err != nil {
		t.Fatalf("after the key was set: %v", err)
	}

	var wg sync.WaitGroup
	got := make([]core.LanguageModel, 16)
	for i := range got {
		wg.Go(func() {
			m, err := reg["anthropic"]("claude-x")
			if err != nil {
				t.Error(err)
			}
			got[i] = m
		})
	}
	wg.Wait()
	for i, m := range got {
		if m != first {
			t.Fatalf("call %d built a second client for the same model", i)
		}
	}
	other, err := reg["anthropic"]("claude-y")
	if err != nil || other == first {
		t.Errorf("another model id gets its own model: %v, same=%v", err, other == first)
	}
	env["OPENAI_API_KEY"] = "k"
	a, _ := reg["openai"]("gpt-x")
	b, _ := reg["openai"]("gpt-x")
	if a == nil || a != b {
		t.Error("an OpenAI-compatible vendor builds each model once too")
	}
}

// BenchmarkModelPerCall is what the engine pays to resolve a model on each
// model call: building the OpenAI client anew against reusing it.
func BenchmarkModelPerCall(b *testing.B) {
	opts := OpenAIOptions{ClientOptions: ClientOptions{APIKey: "k"}}
	build := func(id string) (core.LanguageModel, error) { return openAIFactory(openAIVendors["openai"], opts, id) }
	for _, bb := range []struct {
		name    string
		factory core.ProviderFactory
	}{{"built-every-call", build}, {"built-once", perModel(build)}} {
		b.Run(bb.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bb.factory("gpt-x"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
