package llm

import (
	"sync"

	"github.com/breadai/bread/core"
)

// perModel wraps a provider factory so each model id is built once and the
// model, with its SDK client, HTTP connections and credential chain (and
// the chain's token cache: Vertex's OAuth token, Bedrock's instance
// credentials), serves every later call. The engine resolves the model on
// every model call, so without this every run paid for a new client. A
// failed build is not kept: fixing the environment fixes the next call.
func perModel(build core.ProviderFactory) core.ProviderFactory {
	var mu sync.Mutex
	built := map[string]core.LanguageModel{}
	return func(modelID string) (core.LanguageModel, error) {
		mu.Lock()
		m, ok := built[modelID]
		mu.Unlock()
		if ok {
			return m, nil
		}
		m, err := build(modelID)
		if err != nil {
			return nil, err
		}
		mu.Lock()
		defer mu.Unlock()
		if first, ok := built[modelID]; ok {
			return first, nil // a concurrent first call won: share its client
		}
		built[modelID] = m
		return m, nil
	}
}
