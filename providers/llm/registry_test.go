package llm

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/breadai/bread/core"
)

func TestRegistryHasTheTwentyOneProvidersAndReadsEnvLazily(t *testing.T) {
	var reads atomic.Int64
	reg := Registry(Options{ClientOptions: ClientOptions{Getenv: func(string) string { reads.Add(1); return "" }}})
	if len(reg) != 21 || !slices.Equal(reg.Names(), slices.Sorted(slices.Values(Names))) {
		t.Fatalf("registry %v, want %v", reg.Names(), Names)
	}
	if reads.Load() != 0 {
		t.Fatalf("Registry read the environment %d times before any factory ran", reads.Load())
	}
	// A missing key is a clear PROVIDER_AUTH naming the variable.
	_, err := reg["groq"]("llama-3.3-70b-versatile")
	if be := wantCode(t, err, core.CodeProviderAuth); !strings.Contains(be.Message, "GROQ_API_KEY") {
		t.Errorf("message %q", be.Message)
	}
	if _, err := reg["openai-compatible"]("m"); err == nil {
		t.Error("openai-compatible without an endpoint must fail")
	}
	if _, err := reg["openai"](""); err == nil {
		t.Error("an empty model id must fail")
	}
}

// cannedTransport answers every request with a replayed stream and records
// the URL, so default endpoints are checked with no network.
type cannedTransport struct {
	body []byte
	last *http.Request
}

func (c *cannedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.last = r
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		_ = r.Body.Close()
	}
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: io.NopCloser(bytes.NewReader(c.body)), Request: r}, nil
}

func TestOpenAICompatibleVendorsUseTheirKeyAndEndpoint(t *testing.T) {
	for _, tc := range []struct {
		vendor, keyEnv, baseEnv, defaultURL string
	}{
		{"openai", "OPENAI_API_KEY", "OPENAI_BASE_URL", "https://api.openai.com/v1/chat/completions"},
		{"mistral", "MISTRAL_API_KEY", "MISTRAL_BASE_URL", "https://api.mistral.ai/v1/chat/completions"},
		{"groq", "GROQ_API_KEY", "GROQ_BASE_URL", "https://api.groq.com/openai/v1/chat/completions"},
		{"xai", "XAI_API_KEY", "XAI_BASE_URL", "https://api.x.ai/v1/chat/completions"},
		{"deepseek", "DEEPSEEK_API_KEY", "DEEPSEEK_BASE_URL", "https://api.deepseek.com/v1/chat/completions"},
		{"togetherai", "TOGETHER_AI_API_KEY", "TOGETHER_AI_BASE_URL", "https://api.together.xyz/v1/chat/completions"},
		{"fireworks", "FIREWORKS_API_KEY", "FIREWORKS_BASE_URL", "https://api.fireworks.ai/inference/v1/chat/completions"},
		{"deepinfra", "DEEPINFRA_API_KEY", "DEEPINFRA_BASE_URL", "https://api.deepinfra.com/v1/openai/chat/completions"},
		{"cerebras", "CEREBRAS_API_KEY", "CEREBRAS_BASE_URL", "https://api.cerebras.ai/v1/chat/completions"},
		{"perplexity", "PERPLEXITY_API_KEY", "PERPLEXITY_BASE_URL", "https://api.perplexity.ai/chat/completions"},
		{"baseten", "BASETEN_API_KEY", "BASETEN_BASE_URL", "https://inference.baseten.co/v1/chat/completions"},
		{"ollama", "OLLAMA_API_KEY", "OLLAMA_BASE_URL", "http://127.0.0.1:11434/v1/chat/completions"},
		{"openrouter", "OPENROUTER_API_KEY", "OPENROUTER_BASE_URL", "https://openrouter.ai/api/v1/chat/completions"},
		{"lmstudio", "LMSTUDIO_API_KEY", "LMSTUDIO_BASE_URL", "http://127.0.0.1:1234/v1/chat/completions"},
		{"openai-compatible", "OPENAI_COMPATIBLE_API_KEY", "OPENAI_COMPATIBLE_BASE_URL", ""},
	} {
		t.Run(tc.vendor, func(t *testing.T) {
			text := fixture(t, "openai/text.sse")
			// The vendor's env vars pick the key and endpoint.
			fv := newFakeVendor(t, sse(text), false)
			base := fv.URL + "/v1"
			if tc.vendor == "ollama" {
				base = fv.URL // OLLAMA_BASE_URL is the host; /v1 is added
			}
			reg := Registry(Options{ClientOptions: ClientOptions{HTTPClient: fv.client, Getenv: env(map[string]string{tc.keyEnv: "key-" + tc.vendor, tc.baseEnv: base})}})
			m, err := reg[tc.vendor]("some-model")
			if err != nil {
				t.Fatal(err)
			}
			evs, err := collect(t, m.Stream(context.Background(), core.ModelRequest{}))
			if err != nil {
				t.Fatal(err)
			}
			checkContract(t, evs)
			r := fv.last(t)
			if r.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer key-"+tc.vendor {
				t.Errorf("request %s auth %q", r.Path, r.Header.Get("Authorization"))
			}
			if tc.defaultURL == "" {
				return
			}
			// Without a base-URL variable the vendor's own endpoint is used.
			ct := &cannedTransport{body: text}
			reg = Registry(Options{ClientOptions: ClientOptions{HTTPClient: &http.Client{Transport: ct}, Getenv: env(map[string]string{tc.keyEnv: "k"})}})
			m, err = reg[tc.vendor]("some-model")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := collect(t, m.Stream(context.Background(), core.ModelRequest{})); err != nil {
				t.Fatal(err)
			}
			if got := ct.last.URL.String(); got != tc.defaultURL {
				t.Errorf("default URL %s, want %s", got, tc.defaultURL)
			}
		})
	}
}

func TestOllamaAndLMStudioNeedNoKey(t *testing.T) {
	ct := &cannedTransport{body: fixture(t, "openai/text.sse")}
	reg := Registry(Options{ClientOptions: ClientOptions{HTTPClient: &http.Client{Transport: ct}, Getenv: env(map[string]string{"OPENAI_API_KEY": "must-not-leak"})}})
	for _, name := range []string{"ollama", "lmstudio"} {
		m, err := reg[name]("llama3")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := collect(t, m.Stream(context.Background(), core.ModelRequest{})); err != nil {
			t.Fatal(err)
		}
		if a := ct.last.Header.Get("Authorization"); a != "" {
			t.Errorf("%s sent Authorization %q", name, a)
		}
	}
}

func TestAzureDeploymentURL(t *testing.T) {
	fv := newFakeVendor(t, sse(fixture(t, "openai/text.sse")), true)
	reg := Registry(Options{ClientOptions: ClientOptions{HTTPClient: fv.client, Getenv: env(map[string]string{"AZURE_API_KEY": testKey, "AZURE_BASE_URL": fv.URL, "AZURE_API_VERSION": "2025-01-01-preview"})}})
	m, err := reg["azure"]("my-gpt4o-deployment")
	if err != nil {
		t.Fatal(err)
	}
	evs, err := collect(t, m.Stream(context.Background(), core.ModelRequest{}))
	if err != nil {
		t.Fatal(err)
	}
	checkContract(t, evs)
	r := fv.last(t)
	if r.Path != "/openai/deployments/my-gpt4o-deployment/chat/completions" || r.Query != "api-version=2025-01-01-preview" {
		t.Errorf("request %s?%s", r.Path, r.Query)
	}
	if r.Header.Get("Api-Key") != testKey || r.Header.Get("Authorization") != "" {
		t.Errorf("auth headers %v", r.Header)
	}
	if _, err := NewAzure(AzureOptions{ClientOptions: ClientOptions{APIKey: "k", Getenv: env(nil)}})("d"); err == nil {
		t.Error("no resource must fail")
	}
}
