package llm

import (
	"strings"

	"github.com/breadai/bread/core"
	"github.com/openai/openai-go/v3/option"
)

// structuredMode is how a vendor takes a structured-output request.
type structuredMode int

const (
	// structuredJSONSchema: response_format {type: json_schema}; the zero
	// value, so a vendor that names no mode gets it.
	structuredJSONSchema structuredMode = iota
	// structuredJSONObject: response_format {type: json_object}, with the
	// schema described in the system prompt.
	structuredJSONObject
)

// openAIVendor is one vendor that speaks the Chat Completions API: its
// default endpoint, where its key and endpoint come from, and the few
// places it departs from OpenAI.
type openAIVendor struct {
	name        string
	baseURL     string
	keyEnv      []string
	baseURLEnv  []string
	keyOptional bool
	// maxCompletionTokens sends max_completion_tokens (OpenAI's current
	// name) instead of max_tokens.
	maxCompletionTokens bool
	structured          structuredMode
	// streamUsage sends stream_options.include_usage.
	streamUsage bool
	// topK forwards ModelSettings.TopK as top_k.
	topK bool
	// normalizeBase rewrites a user-supplied base URL (Ollama's host).
	normalizeBase func(string) string
}

// openAIVendors are the Chat Completions vendors, by registry name.
var openAIVendors = map[string]*openAIVendor{
	"openai":     {name: "openai", baseURL: "https://api.openai.com/v1", keyEnv: []string{"OPENAI_API_KEY"}, baseURLEnv: []string{"OPENAI_BASE_URL"}, maxCompletionTokens: true, streamUsage: true},
	"mistral":    {name: "mistral", baseURL: "https://api.mistral.ai/v1", keyEnv: []string{"MISTRAL_API_KEY"}, baseURLEnv: []string{"MISTRAL_BASE_URL"}},
	"groq":       {name: "groq", baseURL: "https://api.groq.com/openai/v1", keyEnv: []string{"GROQ_API_KEY"}, baseURLEnv: []string{"GROQ_BASE_URL"}, streamUsage: true},
	"xai":        {name: "xai", baseURL: "https://api.x.ai/v1", keyEnv: []string{"XAI_API_KEY"}, baseURLEnv: []string{"XAI_BASE_URL"}, streamUsage: true},
	"deepseek":   {name: "deepseek", baseURL: "https://api.deepseek.com/v1", keyEnv: []string{"DEEPSEEK_API_KEY"}, baseURLEnv: []string{"DEEPSEEK_BASE_URL"}, structured: structuredJSONObject, streamUsage: true},
	"togetherai": {name: "togetherai", baseURL: "https://api.together.xyz/v1", keyEnv: []string{"TOGETHER_AI_API_KEY", "TOGETHER_API_KEY"}, baseURLEnv: []string{"TOGETHER_AI_BASE_URL"}, streamUsage: true, topK: true},
	"fireworks":  {name: "fireworks", baseURL: "https://api.fireworks.ai/inference/v1", keyEnv: []string{"FIREWORKS_API_KEY"}, baseURLEnv: []string{"FIREWORKS_BASE_URL"}, streamUsage: true, topK: true},
	"deepinfra":  {name: "deepinfra", baseURL: "https://api.deepinfra.com/v1/openai", keyEnv: []string{"DEEPINFRA_API_KEY"}, baseURLEnv: []string{"DEEPINFRA_BASE_URL"}, streamUsage: true, topK: true},
	"cerebras":   {name: "cerebras", baseURL: "https://api.cerebras.ai/v1", keyEnv: []string{"CEREBRAS_API_KEY"}, baseURLEnv: []string{"CEREBRAS_BASE_URL"}, streamUsage: true},
	"perplexity": {name: "perplexity", baseURL: "https://api.perplexity.ai", keyEnv: []string{"PERPLEXITY_API_KEY"}, baseURLEnv: []string{"PERPLEXITY_BASE_URL"}},
	"baseten":    {name: "baseten", baseURL: "https://inference.baseten.co/v1", keyEnv: []string{"BASETEN_API_KEY"}, baseURLEnv: []string{"BASETEN_BASE_URL"}, streamUsage: true},
	"ollama":     {name: "ollama", baseURL: "http://127.0.0.1:11434/v1", keyEnv: []string{"OLLAMA_API_KEY"}, baseURLEnv: []string{"OLLAMA_BASE_URL"}, keyOptional: true, streamUsage: true, normalizeBase: ollamaBase},
	"openrouter": {name: "openrouter", baseURL: "https://openrouter.ai/api/v1", keyEnv: []string{"OPENROUTER_API_KEY"}, baseURLEnv: []string{"OPENROUTER_BASE_URL"}, streamUsage: true, topK: true},
	"lmstudio":   {name: "lmstudio", baseURL: "http://127.0.0.1:1234/v1", keyEnv: []string{"LMSTUDIO_API_KEY"}, baseURLEnv: []string{"LMSTUDIO_BASE_URL"}, keyOptional: true, streamUsage: true},
	// openai-compatible has no default endpoint: BaseURL or
	// OPENAI_COMPATIBLE_BASE_URL must name one.
	"openai-compatible": {name: "openai-compatible", keyEnv: []string{"OPENAI_COMPATIBLE_API_KEY"}, baseURLEnv: []string{"OPENAI_COMPATIBLE_BASE_URL"}, keyOptional: true, streamUsage: true},
}

// ollamaBase accepts what people put in OLLAMA_BASE_URL (the host, its
// /api path, or the /v1 path) and returns the OpenAI-compatible /v1 root.
func ollamaBase(u string) string {
	u = strings.TrimRight(u, "/")
	u = strings.TrimSuffix(u, "/api")
	if !strings.HasSuffix(u, "/v1") {
		u += "/v1"
	}
	return u
}

// NewOpenAI returns the factory for OpenAI's models. The key comes from
// OPENAI_API_KEY and the endpoint from OPENAI_BASE_URL unless opts set them.
func NewOpenAI(opts OpenAIOptions) core.ProviderFactory {
	return NewOpenAICompatible("openai", opts)
}

// NewOpenAICompatible returns the factory for a vendor that speaks the
// OpenAI Chat Completions API. vendor is one of mistral, groq, xai,
// deepseek, togetherai, fireworks, deepinfra, cerebras, perplexity,
// baseten, ollama, openrouter, lmstudio, openai-compatible (any endpoint:
// set BaseURL or OPENAI_COMPATIBLE_BASE_URL) or openai.
func NewOpenAICompatible(vendor string, opts OpenAIOptions) core.ProviderFactory {
	return perModel(func(modelID string) (core.LanguageModel, error) {
		v, ok := openAIVendors[vendor]
		if !ok {
			return nil, configError(core.CodeUnknownProvider, vendor, "not an OpenAI-compatible vendor")
		}
		return openAIFactory(v, opts, modelID)
	})
}

func openAIFactory(v *openAIVendor, opts OpenAIOptions, modelID string) (core.LanguageModel, error) {
	if strings.TrimSpace(modelID) == "" {
		return nil, configError(core.CodeInvalidConfig, v.name, "a model id is required")
	}
	key := opts.APIKey
	if key == "" {
		key = opts.Getenv.first(v.keyEnv...)
	}
	if key == "" && !v.keyOptional {
		return nil, configError(core.CodeProviderAuth, v.name, "no API key: set %s or the APIKey option", strings.Join(v.keyEnv, " or "))
	}
	base := opts.BaseURL
	if base == "" {
		if base = opts.Getenv.first(v.baseURLEnv...); base != "" && v.normalizeBase != nil {
			base = v.normalizeBase(base)
		}
	}
	if base == "" {
		base = v.baseURL
	}
	if base == "" {
		return nil, configError(core.CodeInvalidConfig, v.name, "no endpoint: set %s or the BaseURL option", strings.Join(v.baseURLEnv, " or "))
	}
	reqOpts := []option.RequestOption{
		option.WithBaseURL(base),
		option.WithHTTPClient(opts.httpClient()),
		option.WithMaxRetries(0),
	}
	if key != "" {
		reqOpts = append(reqOpts, option.WithAPIKey(key))
	}
	if v.name == "openai" {
		if opts.Organization != "" {
			reqOpts = append(reqOpts, option.WithOrganization(opts.Organization))
		}
		if opts.Project != "" {
			reqOpts = append(reqOpts, option.WithProject(opts.Project))
		}
	}
	for k, val := range opts.Headers {
		reqOpts = append(reqOpts, option.WithHeader(k, val))
	}
	return newOpenAIModel(v, modelID, key, opts.StrictJSONSchema, reqOpts), nil
}
