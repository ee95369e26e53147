package catalog

import (
	"slices"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/providers/llm"
)

// Family is the wire API a provider speaks.
type Family string

// The API families of the built-in providers.
const (
	FamilyOpenAI    Family = "openai-chat-completions"
	FamilyAnthropic Family = "anthropic-messages"
	FamilyGemini    Family = "gemini"
	FamilyBedrock   Family = "bedrock-converse"
	FamilyCohere    Family = "cohere-v2-chat"
)

// Info describes one provider.
type Info struct {
	// Name is the registry key a ModelRef names.
	Name        string
	DisplayName string
	Family      Family
	// EnvVars are the variables the provider reads; Required are those it
	// cannot work without (one of them, where several are alternatives,
	// is listed first).
	EnvVars  []string
	Required []string
	// DefaultBaseURL is the endpoint used when none is configured; empty
	// where it depends on other settings (region, project, resource).
	DefaultBaseURL string
	DocsURL        string
}

// Providers returns the metadata of every built-in provider, in registry
// order. The slice is a fresh copy.
func Providers() []Info {
	out := make([]Info, 0, len(llm.Names))
	for _, name := range llm.Names {
		out = append(out, info(name))
	}
	return out
}

// Lookup returns one provider's metadata.
func Lookup(name string) (Info, bool) {
	if !slices.Contains(llm.Names, name) {
		return Info{}, false
	}
	return info(name), true
}

// Registry returns the providers as a core.ProviderRegistry, configured by
// opts (see llm.Options).
func Registry(opts llm.Options) core.ProviderRegistry { return llm.Registry(opts) }

type fixed struct {
	display, docs string
	family        Family
	env, required []string
	base          string
}

// The providers whose settings are not the plain key-and-endpoint pair of
// the OpenAI-speaking vendors.
var special = map[string]fixed{
	"anthropic": {"Anthropic", "https://docs.anthropic.com/en/api/messages", FamilyAnthropic,
		[]string{"ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"}, []string{"ANTHROPIC_API_KEY"}, "https://api.anthropic.com"},
	"google": {"Google Gemini API", "https://ai.google.dev/gemini-api/docs", FamilyGemini,
		[]string{"GOOGLE_GENERATIVE_AI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENERATIVE_AI_BASE_URL"}, []string{"GOOGLE_GENERATIVE_AI_API_KEY"}, "https://generativelanguage.googleapis.com"},
	"google-vertex": {"Google Vertex AI", "https://cloud.google.com/vertex-ai/generative-ai/docs", FamilyGemini,
		[]string{"GOOGLE_VERTEX_PROJECT", "GOOGLE_VERTEX_LOCATION", "GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_VERTEX_API_KEY", "GOOGLE_VERTEX_BASE_URL"}, []string{"GOOGLE_VERTEX_PROJECT"}, ""},
	"azure": {"Azure OpenAI", "https://learn.microsoft.com/azure/ai-foundry/openai/reference", FamilyOpenAI,
		[]string{"AZURE_API_KEY", "AZURE_RESOURCE_NAME", "AZURE_BASE_URL", "AZURE_API_VERSION"}, []string{"AZURE_API_KEY", "AZURE_RESOURCE_NAME"}, ""},
	"amazon-bedrock": {"Amazon Bedrock", "https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html", FamilyBedrock,
		[]string{"AWS_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK", "AWS_BEDROCK_BASE_URL"}, []string{"AWS_REGION"}, ""},
	"cohere": {"Cohere", "https://docs.cohere.com/reference/chat-stream", FamilyCohere,
		[]string{"COHERE_API_KEY", "COHERE_BASE_URL"}, []string{"COHERE_API_KEY"}, "https://api.cohere.com"},
}

var compatible = map[string][2]string{ // display name, docs
	"openai":            {"OpenAI", "https://platform.openai.com/docs/api-reference/chat"},
	"mistral":           {"Mistral AI", "https://docs.mistral.ai/api/"},
	"groq":              {"Groq", "https://console.groq.com/docs/openai"},
	"xai":               {"xAI Grok", "https://docs.x.ai/docs/api-reference"},
	"deepseek":          {"DeepSeek", "https://api-docs.deepseek.com/"},
	"togetherai":        {"Together AI", "https://docs.together.ai/docs/openai-api-compatibility"},
	"fireworks":         {"Fireworks AI", "https://docs.fireworks.ai/api-reference/post-chatcompletions"},
	"deepinfra":         {"DeepInfra", "https://deepinfra.com/docs/openai_api"},
	"cerebras":          {"Cerebras", "https://inference-docs.cerebras.ai/api-reference/chat-completions"},
	"perplexity":        {"Perplexity", "https://docs.perplexity.ai/api-reference/chat-completions-post"},
	"baseten":           {"Baseten", "https://docs.baseten.co/development/model-apis/overview"},
	"ollama":            {"Ollama", "https://github.com/ollama/ollama/blob/main/docs/openai.md"},
	"openrouter":        {"OpenRouter", "https://openrouter.ai/docs/api-reference/overview"},
	"lmstudio":          {"LM Studio", "https://lmstudio.ai/docs/app/api/endpoints/openai"},
	"openai-compatible": {"OpenAI-compatible (any endpoint)", "https://platform.openai.com/docs/api-reference/chat"},
}

func info(name string) Info {
	if f, ok := special[name]; ok {
		return Info{Name: name, DisplayName: f.display, Family: f.family, EnvVars: slices.Clone(f.env), Required: slices.Clone(f.required), DefaultBaseURL: f.base, DocsURL: f.docs}
	}
	d, _ := llm.CompatibleDefaults(name)
	c := compatible[name]
	in := Info{Name: name, DisplayName: c[0], DocsURL: c[1], Family: FamilyOpenAI, DefaultBaseURL: d.BaseURL}
	in.EnvVars = append(slices.Clone(d.KeyEnv), d.BaseURLEnv...)
	if !d.KeyOptional {
		in.Required = []string{d.KeyEnv[0]}
	}
	if d.BaseURL == "" {
		in.Required = append(in.Required, d.BaseURLEnv...)
	}
	return in
}
