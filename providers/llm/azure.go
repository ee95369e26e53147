package llm

import (
	"strings"

	"github.com/breadai/bread/core"
	"github.com/openai/openai-go/v3/azure"
	"github.com/openai/openai-go/v3/option"
)

// AzureOptions configure Azure OpenAI (provider "azure"). The model id is the
// deployment name. The key comes from AZURE_API_KEY, the resource from
// AZURE_RESOURCE_NAME (endpoint https://<resource>.openai.azure.com) or
// BaseURL / AZURE_BASE_URL, and the API version from AZURE_API_VERSION.
type AzureOptions struct {
	ClientOptions
	ResourceName string
	// APIVersion defaults to 2024-10-21, the current GA data-plane version.
	APIVersion       string
	StrictJSONSchema bool
}

const azureDefaultAPIVersion = "2024-10-21"

var azureVendor = &openAIVendor{name: "azure", maxCompletionTokens: true, streamUsage: true}

// NewAzure returns the factory for Azure OpenAI deployments.
func NewAzure(opts AzureOptions) core.ProviderFactory {
	return perModel(func(deployment string) (core.LanguageModel, error) {
		const name = "azure"
		if strings.TrimSpace(deployment) == "" {
			return nil, configError(core.CodeInvalidConfig, name, "a deployment name is required")
		}
		key := opts.APIKey
		if key == "" {
			key = opts.Getenv.first("AZURE_API_KEY", "AZURE_OPENAI_API_KEY")
		}
		if key == "" {
			return nil, configError(core.CodeProviderAuth, name, "no API key: set AZURE_API_KEY or the APIKey option")
		}
		endpoint := opts.BaseURL
		if endpoint == "" {
			endpoint = opts.Getenv.first("AZURE_BASE_URL", "AZURE_OPENAI_ENDPOINT")
		}
		if endpoint == "" {
			res := opts.ResourceName
			if res == "" {
				res = opts.Getenv.first("AZURE_RESOURCE_NAME")
			}
			if res == "" {
				return nil, configError(core.CodeInvalidConfig, name, "no endpoint: set AZURE_RESOURCE_NAME, AZURE_BASE_URL or the ResourceName option")
			}
			endpoint = "https://" + res + ".openai.azure.com"
		}
		version := opts.APIVersion
		if version == "" {
			version = opts.Getenv.first("AZURE_API_VERSION")
		}
		if version == "" {
			version = azureDefaultAPIVersion
		}
		// azure.WithEndpoint rewrites chat/completions to
		// /openai/deployments/<model>/chat/completions?api-version=...
		reqOpts := []option.RequestOption{
			azure.WithEndpoint(endpoint, version),
			azure.WithAPIKey(key),
			option.WithHTTPClient(opts.httpClient()),
			option.WithMaxRetries(0),
		}
		for k, v := range opts.Headers {
			reqOpts = append(reqOpts, option.WithHeader(k, v))
		}
		return newOpenAIModel(azureVendor, deployment, key, opts.StrictJSONSchema, reqOpts), nil
	})
}
