package catalog

import (
	"slices"
	"strings"
	"testing"

	"github.com/breadai/bread/providers/llm"
)

func TestEveryRegistryEntryHasMetadataAndViceVersa(t *testing.T) {
	reg := Registry(llm.Options{})
	infos := Providers()
	if len(infos) != 21 || len(reg) != 21 {
		t.Fatalf("%d infos, %d registry entries; want 21", len(infos), len(reg))
	}
	seen := map[string]bool{}
	for _, in := range infos {
		if _, ok := reg[in.Name]; !ok {
			t.Errorf("%s has metadata but no factory", in.Name)
		}
		if seen[in.Name] {
			t.Errorf("%s listed twice", in.Name)
		}
		seen[in.Name] = true
		if in.DisplayName == "" || in.Family == "" || !strings.HasPrefix(in.DocsURL, "https://") || len(in.EnvVars) == 0 {
			t.Errorf("incomplete metadata %+v", in)
		}
		for _, r := range in.Required {
			if !slices.Contains(in.EnvVars, r) {
				t.Errorf("%s requires %s but does not list it", in.Name, r)
			}
		}
	}
	for name := range reg {
		if !seen[name] {
			t.Errorf("%s is registered without metadata", name)
		}
	}
}

func TestLookup(t *testing.T) {
	in, ok := Lookup("groq")
	if !ok || in.DefaultBaseURL != "https://api.groq.com/openai/v1" || in.Required[0] != "GROQ_API_KEY" || in.Family != FamilyOpenAI {
		t.Errorf("groq %+v", in)
	}
	if in, _ := Lookup("ollama"); len(in.Required) != 0 {
		t.Errorf("ollama needs nothing: %+v", in)
	}
	if in, _ := Lookup("openai-compatible"); !slices.Contains(in.Required, "OPENAI_COMPATIBLE_BASE_URL") {
		t.Errorf("openai-compatible needs an endpoint: %+v", in)
	}
	if _, ok := Lookup("nope"); ok {
		t.Error("unknown provider found")
	}
	// Callers get copies.
	a := Providers()
	a[0].EnvVars[0] = "CHANGED"
	if Providers()[0].EnvVars[0] == "CHANGED" {
		t.Error("Providers shares its slices")
	}
}
