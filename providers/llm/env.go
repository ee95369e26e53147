package llm

import (
	"net/http"
	"os"
	"strings"
)

// Getenv reads one environment variable; os.Getenv is the default. Tests
// inject a map-backed one so no process state leaks in.
type Getenv func(key string) string

func (g Getenv) get(key string) string {
	if g == nil {
		return os.Getenv(key)
	}
	return g(key)
}

// first returns the first non-empty value among the given variables.
func (g Getenv) first(keys ...string) string {
	for _, k := range keys {
		if v := strings.TrimSpace(g.get(k)); v != "" {
			return v
		}
	}
	return ""
}

// ClientOptions are the settings every HTTP-based provider shares. Zero
// fields fall back to the vendor's environment variables and defaults.
type ClientOptions struct {
	// APIKey overrides the key read from the environment.
	APIKey string
	// BaseURL overrides the vendor's default endpoint.
	BaseURL string
	// HTTPClient sends the requests; nil is a client without timeout (the
	// caller's context bounds each call).
	HTTPClient *http.Client
	// Headers are added to every request.
	Headers map[string]string
	// Getenv reads the environment; nil is os.Getenv.
	Getenv Getenv
}

// merged returns o with zero fields taken from base (the registry-wide
// defaults).
func (o ClientOptions) merged(base ClientOptions) ClientOptions {
	if o.HTTPClient == nil {
		o.HTTPClient = base.HTTPClient
	}
	if o.Getenv == nil {
		o.Getenv = base.Getenv
	}
	if len(base.Headers) > 0 {
		h := make(map[string]string, len(base.Headers)+len(o.Headers))
		for k, v := range base.Headers {
			h[k] = v
		}
		for k, v := range o.Headers {
			h[k] = v
		}
		o.Headers = h
	}
	return o
}

func (o ClientOptions) httpClient() *http.Client {
	if o.HTTPClient != nil {
		return o.HTTPClient
	}
	return &http.Client{}
}
