package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProviderAddKeepsTheProvidersInUse: with no providers section, adding
// one writes it together with the built-in providers the agents use (a
// providers section registers only what it lists), says which it kept, and
// the project still builds. With a section already there, add only appends.
func TestProviderAddKeepsTheProvidersInUse(t *testing.T) {
	const schemas = "inputSchema: {type: string}\noutputSchema: {type: string}\n"
	dir := project(t, map[string]string{
		"bread.yaml":              "store: {type: sqlite, path: ./bread.db}\n",
		"agents/one/agent.yaml":   "model: {provider: replay, model: t/one.jsonl}\n" + schemas,
		"agents/two/agent.yaml":   "model: {provider: replay, model: t/one.jsonl}\n" + schemas,
		"agents/three/agent.yaml": "model: {provider: anthropic, model: claude-sonnet-4-5}\n" + schemas,
		"t/one.jsonl":             transcript("Hello."),
	})
	if r := runBinary(t, dir, "build"); r.code != 0 {
		t.Fatalf("the project builds before: %+v", r)
	}
	r := runBinary(t, dir, "provider", "add", "openai")
	if r.code != 0 || !strings.Contains(r.stdout, "added openai") || !strings.Contains(r.stdout, "kept ") {
		t.Fatalf("provider add openai: %+v", r)
	}
	kept := r.stdout[strings.Index(r.stdout, "kept "):]
	kept = kept[:strings.Index(kept, "\n")]
	for _, p := range []string{"replay", "anthropic"} {
		if !strings.Contains(kept, p) {
			t.Errorf("add does not say it kept %s: %q", p, kept)
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, "bread.yaml"))
	providers := ""
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "providers:") {
			providers = l
		}
	}
	for _, p := range []string{"replay", "anthropic", "openai"} {
		if !strings.Contains(providers, p) {
			t.Errorf("bread.yaml's providers lack %s:\n%s", p, b)
		}
	}
	if strings.Count(providers, "replay") != 1 {
		t.Errorf("replay listed more than once: %q", providers)
	}
	if r := runBinary(t, dir, "build"); r.code != 0 {
		t.Errorf("the project no longer builds after provider add: %+v\n%s", r, b)
	}

	// The section is there now: adding another appends it and keeps nothing.
	r = runBinary(t, dir, "provider", "add", "mistral")
	if r.code != 0 || strings.Contains(r.stdout, "kept ") {
		t.Fatalf("provider add mistral: %+v", r)
	}
	after, _ := os.ReadFile(filepath.Join(dir, "bread.yaml"))
	if want := strings.TrimSuffix(providers, "]") + ", mistral]"; !strings.Contains(string(after), want) {
		t.Errorf("bread.yaml after a second add, want %q:\n%s", want, after)
	}
}
