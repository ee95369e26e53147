package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/breadai/bread/cli/project"
	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/blobfs"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/extensions/auth/apikey"
	"github.com/breadai/bread/extensions/credentials/vault"
	"github.com/breadai/bread/protocols/mcpserver"
	"github.com/breadai/bread/providers/decisions"
	"github.com/breadai/bread/providers/llm"
	"github.com/breadai/bread/providers/replay"
	"github.com/breadai/bread/stores/mysql"
	"github.com/breadai/bread/stores/postgres"
	"github.com/breadai/bread/stores/s3"
	"github.com/breadai/bread/stores/sqlite"
	"github.com/breadai/bread/transports/httpchunked"
	"github.com/breadai/bread/transports/httpsse"
)

// decode copies a component's options into v, refusing unknown keys so a
// typo in bread.yaml is an error at its line.
func decode(c *project.Component, v any) error {
	raw, err := json.Marshal(c.Options)
	if err != nil {
		return c.Errorf(core.CodeInvalidConfig, "%s options: %v", c.Type, err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return c.Errorf(core.CodeInvalidConfig, "%s options: %v", c.Type, err)
	}
	return nil
}

// unknown is the error for a type nobody registered: it lists the known ones.
func unknown(c *project.Component, what string, known []string) error {
	slices.Sort(known)
	return c.Errorf(core.CodeInvalidConfig, "unknown %s %q; known: %s", what, c.Type, strings.Join(known, ", "))
}

// duration reads "30s"-style strings.
type duration time.Duration

func (d *duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	*d = duration(v)
	return err
}

// projectPath resolves a path relative to the project.
func projectPath(p *project.Project, path string) string {
	if path == "" || filepath.IsAbs(path) || path == ":memory:" {
		return path
	}
	return filepath.Join(p.Dir, path)
}

func (a *app) builtinStores() map[string]StoreFactory {
	return map[string]StoreFactory{
		"memory": func(_ context.Context, c *project.Component, _ *project.Project) (core.BreadStore, error) {
			var o struct {
				RetainRuns     int `json:"retainRuns"`
				RetainSessions int `json:"retainSessions"`
			}
			if err := decode(c, &o); err != nil {
				return nil, err
			}
			return memory.NewWithOptions(memory.Options{RetainRuns: o.RetainRuns, RetainSessions: o.RetainSessions}), nil
		},
		"sqlite": func(_ context.Context, c *project.Component, p *project.Project) (core.BreadStore, error) {
			o, err := sqliteOptions(c, p)
			if err != nil {
				return nil, err
			}
			return sqlite.New(o)
		},
		"postgres": func(_ context.Context, c *project.Component, _ *project.Project) (core.BreadStore, error) {
			o, err := a.postgresOptions(c)
			if err != nil {
				return nil, err
			}
			return postgres.New(o)
		},
		"mysql": func(_ context.Context, c *project.Component, _ *project.Project) (core.BreadStore, error) {
			var o struct {
				URL          string `json:"url"`
				MaxOpenConns int    `json:"maxOpenConns"`
			}
			if err := decode(c, &o); err != nil {
				return nil, err
			}
			if o.URL == "" {
				o.URL = a.getenv("DATABASE_URL") // as for postgres
			}
			return mysql.New(mysql.Options{URL: o.URL, MaxOpenConns: o.MaxOpenConns})
		},
	}
}

// sqliteOptions reads a sqlite store component: the store and the job
// queue (jobsDatabase) open the same file from it.
func sqliteOptions(c *project.Component, p *project.Project) (sqlite.Options, error) {
	var o struct {
		Path        string   `json:"path"`
		BusyTimeout duration `json:"busyTimeout"`
	}
	if err := decode(c, &o); err != nil {
		return sqlite.Options{}, err
	}
	if o.Path == "" {
		o.Path = "bread.db"
	}
	return sqlite.Options{Path: projectPath(p, o.Path), BusyTimeout: time.Duration(o.BusyTimeout)}, nil
}

// postgresOptions reads a postgres store component: the store and the job
// queue (jobsDatabase) connect to the same database from it.
func (a *app) postgresOptions(c *project.Component) (postgres.Options, error) {
	var o struct {
		URL          string `json:"url"`
		MaxOpenConns int    `json:"maxOpenConns"`
	}
	if err := decode(c, &o); err != nil {
		return postgres.Options{}, err
	}
	if o.URL == "" {
		// The store's own fallback reads the process environment; read
		// DATABASE_URL through Options.LookupEnv instead so an embedding
		// program's environment wins.
		o.URL = a.getenv("DATABASE_URL")
	}
	return postgres.Options{URL: o.URL, MaxOpenConns: o.MaxOpenConns}, nil
}

// providerTypes are the built-in provider types: the 21 of providers/llm,
// and replay.
func providerTypes() []string {
	return append(slices.Clone(llm.Names), "replay", mcpserver.SamplingProvider)
}

// provider builds one provider factory from its component.
func (a *app) provider(c *project.Component) (core.ProviderFactory, error) {
	var o struct {
		APIKey  string            `json:"apiKey"`
		BaseURL string            `json:"baseURL"`
		Headers map[string]string `json:"headers"`
		Dir     string            `json:"dir"`
		Mode    string            `json:"mode"`
	}
	if err := decode(c, &o); err != nil {
		return nil, err
	}
	client := llm.ClientOptions{APIKey: o.APIKey, BaseURL: o.BaseURL, Headers: o.Headers, Getenv: a.getenv}
	switch c.Type {
	case mcpserver.SamplingProvider:
		// The host's model, asked through the MCP call the run serves.
		return mcpserver.Sampling(), nil
	case "replay":
		dir := a.project.Dir
		if o.Dir != "" {
			dir = projectPath(a.project, o.Dir)
		}
		switch replay.Mode(o.Mode) {
		case "", replay.Sequence, replay.Conversation:
		default:
			return nil, c.Errorf(core.CodeInvalidConfig, "replay mode %q is not sequence or conversation", o.Mode)
		}
		return replay.Registry(dir, replay.Options{Mode: replay.Mode(o.Mode)})["replay"], nil
	case "openai":
		return llm.NewOpenAI(llm.OpenAIOptions{ClientOptions: client}), nil
	case "anthropic":
		return llm.NewAnthropic(llm.AnthropicOptions{ClientOptions: client}), nil
	case "google":
		return llm.NewGoogle(llm.GoogleOptions{ClientOptions: client}), nil
	case "google-vertex":
		return llm.NewVertex(llm.VertexOptions{ClientOptions: client}), nil
	case "azure":
		return llm.NewAzure(llm.AzureOptions{ClientOptions: client}), nil
	case "amazon-bedrock":
		return llm.NewBedrock(llm.BedrockOptions{ClientOptions: client}), nil
	case "cohere":
		return llm.NewCohere(llm.CohereOptions{ClientOptions: client}), nil
	}
	if slices.Contains(llm.CompatibleVendors(), c.Type) {
		return llm.NewOpenAICompatible(c.Type, llm.OpenAIOptions{ClientOptions: client}), nil
	}
	return nil, unknown(c, "provider type", providerTypes())
}

func (a *app) getenv(k string) string {
	v, _ := a.lookup(k)
	return v
}

// providers builds the project's provider registry. Without a providers
// section, every built-in provider is available under its own name.
func (a *app) providers() (core.ProviderRegistry, error) {
	reg := core.ProviderRegistry{}
	comps := a.project.Config.Providers
	if len(comps) == 0 {
		comps = map[string]*project.Component{}
		for _, name := range providerTypes() {
			comps[name] = &project.Component{Type: name, Options: map[string]any{}, File: "bread.yaml"}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(comps)) {
		f, err := a.provider(comps[name])
		if err != nil {
			return nil, err
		}
		reg[name] = f
	}
	maps.Copy(reg, a.opts.Providers)
	if a.recorder != nil {
		reg = a.recorder.WrapRegistry(reg)
	}
	return reg, nil
}

// blobStore builds bread.yaml's blobs: (default fs under .bread/blobs),
// wrapped so runs file blobs by session and name them by the server's
// route (see runBlobs).
func (a *app) blobStore(c *project.Component) (core.BlobStore, error) {
	if c == nil {
		bs, err := blobfs.New(blobfs.Options{Dir: filepath.Join(a.project.Dir, ".bread", "blobs")})
		if err != nil {
			return nil, err
		}
		return &runBlobs{inner: core.NewBlobs(bs), serverURLs: true}, nil
	}
	urls := func(v string) (bool, error) {
		switch v {
		case "", "server":
			return true, nil
		case "store":
			return false, nil
		}
		return false, c.Errorf(core.CodeInvalidConfig, "blobs urls %q is not server or store", v)
	}
	switch c.Type {
	case "fs":
		var o struct {
			Dir      string `json:"dir"`
			MaxBytes int64  `json:"maxBytes"`
			URLs     string `json:"urls"`
		}
		if err := decode(c, &o); err != nil {
			return nil, err
		}
		served, err := urls(o.URLs)
		if err != nil {
			return nil, err
		}
		if o.Dir == "" {
			o.Dir = ".bread/blobs"
		}
		bs, err := blobfs.New(blobfs.Options{Dir: projectPath(a.project, o.Dir), MaxBytes: o.MaxBytes})
		if err != nil {
			return nil, located(c, err)
		}
		return &runBlobs{inner: core.NewBlobs(bs), serverURLs: served}, nil
	case "s3":
		var o struct {
			Bucket          string   `json:"bucket"`
			Region          string   `json:"region"`
			Endpoint        string   `json:"endpoint"`
			PathStyle       bool     `json:"pathStyle"`
			AccessKeyID     string   `json:"accessKeyId"`
			SecretAccessKey string   `json:"secretAccessKey"`
			SessionToken    string   `json:"sessionToken"`
			Profile         string   `json:"profile"`
			KeyPrefix       string   `json:"keyPrefix"`
			PartSize        int64    `json:"partSize"`
			MaxBytes        int64    `json:"maxBytes"`
			PresignExpiry   duration `json:"presignExpiry"`
			CreateBucket    bool     `json:"createBucket"`
			URLs            string   `json:"urls"`
		}
		if err := decode(c, &o); err != nil {
			return nil, err
		}
		served, err := urls(o.URLs)
		if err != nil {
			return nil, err
		}
		bs, err := s3.New(context.Background(), s3.Options{
			Bucket: o.Bucket, Region: o.Region, Endpoint: o.Endpoint, PathStyle: o.PathStyle,
			AccessKeyID: o.AccessKeyID, SecretAccessKey: o.SecretAccessKey, SessionToken: o.SessionToken, Profile: o.Profile,
			KeyPrefix: o.KeyPrefix, PartSize: o.PartSize, MaxBytes: o.MaxBytes, PresignExpiry: time.Duration(o.PresignExpiry),
			CreateBucket: o.CreateBucket,
		})
		if err != nil {
			return nil, located(c, err)
		}
		return &runBlobs{inner: core.NewBlobs(bs), serverURLs: served}, nil
	}
	return nil, unknown(c, "blob store", []string{"fs", "s3"})
}

func (a *app) credentials(c *project.Component) (core.CredentialProvider, error) {
	if c == nil {
		return nil, nil
	}
	switch c.Type {
	case "env":
		return core.EnvCredentials(), decode(c, &struct{}{})
	case "vault":
		var o struct {
			Address   string `json:"address"`
			Token     string `json:"token"`
			Mount     string `json:"mount"`
			Namespace string `json:"namespace"`
		}
		if err := decode(c, &o); err != nil {
			return nil, err
		}
		p, err := vault.New(vault.Options{Address: o.Address, Token: o.Token, Mount: o.Mount, Namespace: o.Namespace})
		if err != nil {
			return nil, err // not a typed nil inside the interface
		}
		return p, nil
	}
	return nil, unknown(c, "credential provider", []string{"env", "vault"})
}

func (a *app) decider(c *project.Component, providers core.ProviderRegistry) (core.Decider, error) {
	switch c.Type {
	case "model":
		var o struct {
			Provider string `json:"provider"`
			Model    string `json:"model"`
			System   string `json:"system"`
		}
		if err := decode(c, &o); err != nil {
			return nil, err
		}
		m, err := core.ResolveModel(core.ModelRef{Provider: o.Provider, Model: o.Model}, providers)
		if err != nil {
			return nil, &project.Error{File: c.File, Line: c.Line, Err: err}
		}
		return decisions.NewModelDecider(m, decisions.ModelOptions{System: o.System}), nil
	case "http":
		var o struct {
			URL     string            `json:"url"`
			Timeout duration          `json:"timeout"`
			Headers map[string]string `json:"headers"`
		}
		if err := decode(c, &o); err != nil {
			return nil, err
		}
		return decisions.NewHTTPDecider(o.URL, decisions.HTTPOptions{Timeout: time.Duration(o.Timeout), Headers: o.Headers}), nil
	}
	return nil, unknown(c, "decider type", []string{"model", "http"})
}

func (a *app) remoteAgent(c *project.Component) (core.RemoteAgent, error) {
	var o struct {
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers"`
		APIKey  string            `json:"apiKey"`
		OAuth2  *oauth2Signer     `json:"oauth2"`
	}
	if err := decode(c, &o); err != nil {
		return nil, err
	}
	h := http.Header{}
	for k, v := range o.Headers {
		h.Set(k, v)
	}
	var signer core.BreadSigner
	if o.APIKey != "" && o.OAuth2 != nil {
		return nil, c.Errorf(core.CodeInvalidConfig, "a remote agent takes apiKey or oauth2, not both")
	}
	if o.OAuth2 != nil {
		s, err := o.OAuth2.signer(c)
		if err != nil {
			return nil, err
		}
		signer = s
	}
	if o.APIKey != "" {
		s, err := apikey.Signer(apikey.Options{Keys: []string{o.APIKey}, Scheme: "Bearer"})
		if err != nil {
			return nil, err
		}
		signer = s
	}
	switch c.Type {
	case "httpchunked":
		return httpchunked.RemoteAgent(httpchunked.RemoteOptions{URL: o.URL, Headers: h, Signer: signer, HTTPClient: a.remoteHTTPClient()}), nil
	case "httpsse":
		return httpsse.RemoteAgent(httpsse.RemoteOptions{URL: o.URL, Headers: h, Signer: signer, HTTPClient: a.remoteHTTPClient()}), nil
	case "a2a":
		return a.a2aRemoteAgent(c, o.URL, h, signer)
	}
	return nil, unknown(c, "remote agent transport", []string{"a2a", "httpchunked", "httpsse"})
}
