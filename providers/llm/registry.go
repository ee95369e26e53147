package llm

import (
	"slices"

	"github.com/breadai/bread/core"
)

// Options configure every provider of the registry. Defaults set here
// (HTTPClient, Headers, Getenv) apply to every provider whose own options
// leave them zero.
type Options struct {
	ClientOptions

	OpenAI    OpenAIOptions
	Anthropic AnthropicOptions
	Google    GoogleOptions
	Vertex    VertexOptions
	Azure     AzureOptions
	Bedrock   BedrockOptions
	Cohere    CohereOptions
	// Compatible holds options for the OpenAI-speaking vendors by registry
	// name: mistral, groq, xai, deepseek, togetherai, fireworks, deepinfra,
	// cerebras, perplexity, baseten, ollama, openrouter, lmstudio,
	// openai-compatible.
	Compatible map[string]OpenAIOptions
}

// Names are the registry's provider names, in the order the catalog lists
// them.
var Names = []string{
	"openai", "anthropic", "google", "google-vertex", "azure", "amazon-bedrock",
	"mistral", "groq", "cohere", "xai", "deepseek", "togetherai", "fireworks",
	"deepinfra", "cerebras", "perplexity", "baseten", "ollama", "openrouter",
	"lmstudio", "openai-compatible",
}

// Registry returns the 21 providers as a core.ProviderRegistry. Nothing is
// read from the environment until a factory is called.
func Registry(opts Options) core.ProviderRegistry {
	base := opts.ClientOptions
	reg := core.ProviderRegistry{}
	o := opts.OpenAI
	o.ClientOptions = o.ClientOptions.merged(base)
	reg["openai"] = NewOpenAI(o)

	a := opts.Anthropic
	a.ClientOptions = a.ClientOptions.merged(base)
	reg["anthropic"] = NewAnthropic(a)

	g := opts.Google
	g.ClientOptions = g.ClientOptions.merged(base)
	reg["google"] = NewGoogle(g)

	v := opts.Vertex
	v.ClientOptions = v.ClientOptions.merged(base)
	reg["google-vertex"] = NewVertex(v)

	az := opts.Azure
	az.ClientOptions = az.ClientOptions.merged(base)
	reg["azure"] = NewAzure(az)

	b := opts.Bedrock
	b.ClientOptions = b.ClientOptions.merged(base)
	reg["amazon-bedrock"] = NewBedrock(b)

	c := opts.Cohere
	c.ClientOptions = c.ClientOptions.merged(base)
	reg["cohere"] = NewCohere(c)

	for name := range openAIVendors {
		if name == "openai" {
			continue
		}
		vo := opts.Compatible[name]
		vo.ClientOptions = vo.ClientOptions.merged(base)
		reg[name] = NewOpenAICompatible(name, vo)
	}
	return reg
}

// CompatibleVendors returns the registry names served by the shared OpenAI
// Chat Completions adapter, sorted.
func CompatibleVendors() []string {
	var out []string
	for name := range openAIVendors {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// VendorDefaults describes where an OpenAI-speaking vendor's key and
// endpoint come from, for the catalog.
type VendorDefaults struct {
	BaseURL     string
	KeyEnv      []string
	BaseURLEnv  []string
	KeyOptional bool
}

// CompatibleDefaults returns the defaults of an OpenAI-speaking vendor.
func CompatibleDefaults(name string) (VendorDefaults, bool) {
	v, ok := openAIVendors[name]
	if !ok {
		return VendorDefaults{}, false
	}
	return VendorDefaults{BaseURL: v.baseURL, KeyEnv: slices.Clone(v.keyEnv), BaseURLEnv: slices.Clone(v.baseURLEnv), KeyOptional: v.keyOptional}, true
}
