package core

import (
	"maps"
	"slices"
	"strings"
)

// ModelRef names the model an agent or task runs on.
type ModelRef struct {
	Provider string        `json:"provider"`
	Model    string        `json:"model"`
	Settings ModelSettings `json:"settings,omitempty"`
	// ProviderOptions are passed to the provider as ModelRequest.ProviderOptions.
	ProviderOptions map[string]any `json:"providerOptions,omitempty"`
}

// String returns "provider:model".
func (r ModelRef) String() string { return r.Provider + ":" + r.Model }

// ProviderFactory returns the model with the given id.
type ProviderFactory func(modelID string) (LanguageModel, error)

// ProviderRegistry maps provider names, as ModelRef.Provider refers to them,
// to factories. core has no providers of its own; providers/llm has 21.
type ProviderRegistry map[string]ProviderFactory

// Names returns the registered provider names, sorted.
func (r ProviderRegistry) Names() []string { return slices.Sorted(maps.Keys(r)) }

// ResolveModel finds ref's provider in the first registry that has it (pass
// the most specific first: an agent's own before the global one) and builds
// the model. An unknown provider is UNKNOWN_PROVIDER naming every registered
// one.
func ResolveModel(ref ModelRef, registries ...ProviderRegistry) (LanguageModel, error) {
	for _, reg := range registries {
		if f, ok := reg[ref.Provider]; ok && f != nil {
			m, err := f(ref.Model)
			if err != nil {
				return nil, AsBreadError(err, CodeProviderError)
			}
			return m, nil
		}
	}
	known := map[string]bool{}
	for _, reg := range registries {
		for name := range reg {
			known[name] = true
		}
	}
	names := slices.Sorted(maps.Keys(known))
	msg := "unknown model provider " + quoteTruncated(ref.Provider) + ": "
	if len(names) == 0 {
		msg += "no providers are registered; set Config.Providers (providers/llm has the built-in set) or the agent's own providers"
	} else {
		msg += "registered: " + strings.Join(names, ", ")
	}
	return nil, &BreadError{Code: CodeUnknownProvider, Message: msg, Context: map[string]any{"provider": ref.Provider, "registered": names}}
}
