package project

import (
	"cmp"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"time"

	"github.com/breadai/bread/core"
)

// Config is bread.yaml.
type Config struct {
	// Entrypoints are the agents served over HTTP; empty serves all.
	Entrypoints []string
	Store       *Component
	// Bus is the replica bus (`bus: redis`); nil is the in-process one.
	Bus *Component
	// Streams configures the HTTP streaming routes.
	Streams StreamsConfig
	// Listeners watch every crumb of a serving instance (`listeners:
	// [stdout]`).
	Listeners []*Component
	// Transport is the older spelling of bus, streams and listeners
	// (`transport: httpchunked`, `{type: httpsse, bus: ...}`, `redis`,
	// `stdout`), kept as it was written; the CLI maps it.
	Transport   *Component
	BlobStore   *Component
	Credentials *Component
	// Providers maps provider names (as agents' model.provider refer to
	// them) to provider components; `providers: [openai]` is shorthand for
	// {openai: {type: openai}}.
	Providers    map[string]*Component
	Plugins      []*Component
	Decisions    map[string]*Component
	RemoteAgents map[string]*Component
	Pipelines    map[string][]core.PipelineStep
	Server       ServerConfig
	// ErrorHandling is the default retry policy for agent runs.
	ErrorHandling     core.ErrorHandling
	MaxConcurrentRuns int
	// SessionConcurrency is the busy-session policy of agents that set
	// none (bread.yaml concurrency.session).
	SessionConcurrency core.ConcurrencyPolicy
	// RunLease is how long a run's lease lasts unless its instance renews
	// it (`runs: {lease: 15s}`); 0 is the engine's default.
	RunLease time.Duration
	// MaxDelegationDepth is how deep supervisors' delegations and loops'
	// iterations may nest (`delegation: {maxDepth: 8}`); 0 when bread.yaml
	// does not say, which is the engine's default (8) and makes a
	// delegation cycle between agents a build and start error rather than
	// a warning.
	MaxDelegationDepth int
	// Webhooks configure the signed webhooks of background runs
	// (`webhooks: {secret: ${BREAD_WEBHOOK_SECRET}}`).
	Webhooks WebhooksConfig
	// Workers configures the durable job queue of background runs and
	// schedules (`workers: {concurrency: 10}`); nil when bread.yaml has no
	// workers section.
	Workers *WorkersConfig
	// Schedules are agent runs on a timetable (`schedules:`).
	Schedules []ScheduleConfig
}

// WorkersConfig is bread.yaml's workers section: how this replica works the
// job queue (jobs/river on the project's SQL store).
type WorkersConfig struct {
	// Concurrency is how many jobs this replica works at once; 0 is the
	// queue's default.
	Concurrency int
	// Queue names the queue in the database; projects that share a
	// database use different names. Empty is "bread".
	Queue string
	// PollInterval is how often an idle replica looks for new jobs; 0 is
	// the queue's default.
	PollInterval time.Duration
	// RescueAfter is how long a job may run before the queue hands it out
	// again as stuck; 0 is the queue's default.
	RescueAfter time.Duration
	// Database, when set, is the database the queue lives in
	// (`database: {type: postgres | sqlite, ...}`) instead of the store's:
	// for a store River cannot share (mysql, memory, a Go extension's).
	Database *Component
}

// ScheduleConfig is one entry of bread.yaml's schedules: exactly one of
// Cron and Every is set.
type ScheduleConfig struct {
	Name     string
	Cron     string
	Every    time.Duration
	TimeZone string
	Agent    string
	Input    any
	// Session is a session id every tick continues; empty is a new
	// session per tick.
	Session string
	Webhook string
	// RunAs, when set, is the identity the schedule's runs are started as
	// (`runAs: {strategy, subject, issuer}`): a server.auth strategy's
	// name, the subject it authenticates, and the "iss" claim for a
	// strategy that sets one.
	RunAs *RunAsConfig
}

// RunAsConfig names an identity as the server's auth would authenticate
// it: its strategy's name, its subject and its issuer.
type RunAsConfig struct {
	Strategy string
	Subject  string
	Issuer   string
}

// WebhooksConfig is bread.yaml's webhooks section; the CLI passes it to
// engine.Config.Webhooks.
type WebhooksConfig struct {
	// Secret signs every delivery; without it or SecretCredential, runs
	// that ask for a webhook are refused.
	Secret string
	// SecretCredential names the signing secret in the credentials
	// component (env, vault), read at every delivery.
	SecretCredential string
	// AllowHosts narrows the hosts a webhook may name; empty allows any.
	AllowHosts []string
	// AllowPrivateNetworks lets webhooks reach loopback, private and
	// link-local addresses.
	AllowPrivateNetworks bool
	// MaxAttempts bounds the deliveries of one record; 0 is the default.
	MaxAttempts int
	// Backoff is the wait after the first failed attempt, doubled after
	// each; 0 is the default.
	Backoff time.Duration
}

// StreamsConfig is bread.yaml's streams section: the streaming routes every
// server serves in both formats.
type StreamsConfig struct {
	// Heartbeat is the streams' keep-alive interval; 0 is the default.
	Heartbeat time.Duration
	// Format is the stream format of a request whose Accept names neither
	// format: "ndjson", "sse", or "" (NDJSON unless transport: says httpsse).
	Format string
}

// ServerConfig is bread.yaml's server section.
type ServerConfig struct {
	Port         int
	Host         string
	MaxBodyBytes int64
	// Auth are the auth strategy components, tried in order: `auth:` takes
	// a list, or one component (the older single form).
	Auth []*Component
	// Public are the route actions served without auth and past the Host
	// guard (probes: health.live, health.ready; scrapers: metrics.read).
	Public []string
	// DrainTimeout bounds a graceful drain on SIGTERM; 0 is the default.
	DrainTimeout time.Duration
	// AccessLog logs one line per request (never bodies or credentials).
	AccessLog bool
	// Console serves the web console at "/" under bread start
	// (`server.console: true`); bread dev always serves it.
	Console bool
	// StreamTokens configure the signed stream tokens served with auth.
	StreamTokens StreamTokensConfig
	// Ownership configures the run-ownership policy served with auth.
	Ownership OwnershipConfig
	// CORSOrigins are the browser origins allowed to call the server
	// (`server.cors.origins`); CORSMaxAge caches preflights.
	CORSOrigins []string
	CORSMaxAge  time.Duration
	// AllowCrossOrigin turns the server's cross-origin guard off
	// (`server.allowCrossOrigin: true`): see server.Options.AllowCrossOrigin.
	AllowCrossOrigin bool
	// Timeouts are `server.timeouts`; 0 is the server's default.
	Timeouts TimeoutsConfig
	// MaxConnections caps the connections served at once
	// (`server.maxConnections`); 0 is the server's default.
	MaxConnections int
}

// TimeoutsConfig is bread.yaml's server.timeouts.
type TimeoutsConfig struct {
	// ReadHeader bounds reading a request's headers.
	ReadHeader time.Duration
	// Idle closes a keep-alive connection idle this long.
	Idle time.Duration
	// BodyRead bounds reading a request body of unknown length.
	BodyRead time.Duration
}

// StreamTokensConfig is bread.yaml's server.streamTokens.
type StreamTokensConfig struct {
	// Key signs the tokens (HMAC-SHA256, at least 32 bytes); empty
	// generates one per process.
	Key string
	// TTL is how long a token lasts; 0 is the default (5m).
	TTL time.Duration
}

// OwnershipConfig is bread.yaml's server.ownership.
type OwnershipConfig struct {
	// ResumeOff lets any caller granted run.resume resume any checkpoint
	// (`resume: false`); by default only the run's starter and admins may.
	ResumeOff bool
	// SessionsOff turns the store's session ownership rule off
	// (`sessions: false`): any caller may run on, read or delete any
	// session it names, as in the seed; by default only the session's
	// creator and admins may.
	SessionsOff bool
}

// Component is a named adapter in bread.yaml: `store: sqlite`, or
// `store: {type: sqlite, path: ./bread.db}`. The CLI maps Type to a
// constructor and passes Options through.
type Component struct {
	Type    string
	Options map[string]any
	// File and Line locate the component, for errors about it.
	File string
	Line int
}

// Errorf returns an error located at the component.
func (c *Component) Errorf(code, format string, args ...any) *Error {
	return &Error{File: c.File, Line: c.Line, Err: core.Errorf(code, format, args...)}
}

// String returns the option as a string ("" when absent or not a string).
func (c *Component) String(key string) string {
	s, _ := c.Options[key].(string)
	return s
}

// Int returns the option as an int (0 when absent).
func (c *Component) Int(key string) int {
	switch v := c.Options[key].(type) {
	case int:
		return v
	case int64:
		return int(v)
	case uint64:
		return int(v)
	case float64:
		return int(v)
	}
	return 0
}

// Bool returns the option as a bool.
func (c *Component) Bool(key string) bool {
	b, _ := c.Options[key].(bool)
	return b
}

// rawComponent is a component as YAML gives it: a bare string or a map with
// a type.
type rawComponent struct {
	value any
}

func (r *rawComponent) UnmarshalYAML(unmarshal func(any) error) error {
	return unmarshal(&r.value)
}

func (f *yamlFile) component(path string, r *rawComponent, defaultType string) (*Component, error) {
	if r == nil || r.value == nil {
		return nil, nil
	}
	c := &Component{File: f.rel, Line: f.line(path), Options: map[string]any{}}
	switch v := normalize(r.value).(type) {
	case string:
		c.Type = v
	case map[string]any:
		for k, val := range v {
			c.Options[k] = val
		}
		if t, ok := c.Options["type"]; ok {
			s, isString := t.(string)
			if !isString {
				return nil, f.errorf(path+".type", "type must be a string")
			}
			c.Type = s
			delete(c.Options, "type")
		}
	default:
		return nil, f.errorf(path, "expected a name or a map with a type, got %T", v)
	}
	if c.Type == "" {
		c.Type = defaultType
	}
	if c.Type == "" {
		return nil, f.errorf(path, "missing type")
	}
	return c, nil
}

type configFile struct {
	Entrypoints   []string                  `yaml:"entrypoints"`
	Store         *rawComponent             `yaml:"store"`
	Bus           *rawComponent             `yaml:"bus"`
	Streams       streamsFile               `yaml:"streams"`
	Listeners     []*rawComponent           `yaml:"listeners"`
	Transport     *rawComponent             `yaml:"transport"`
	Blobs         *rawComponent             `yaml:"blobs"`
	Credentials   *rawComponent             `yaml:"credentials"`
	Providers     any                       `yaml:"providers"`
	Plugins       []*rawComponent           `yaml:"plugins"`
	Decisions     map[string]*rawComponent  `yaml:"decisions"`
	RemoteAgents  map[string]*rawComponent  `yaml:"remoteAgents"`
	Pipelines     map[string][]pipelineStep `yaml:"pipelines"`
	Server        serverFile                `yaml:"server"`
	ErrorHandling errorHandlingFile         `yaml:"errorHandling"`
	Concurrency   struct {
		Max     int    `yaml:"max"`
		Session string `yaml:"session"`
	} `yaml:"concurrency"`
	Runs struct {
		Lease string `yaml:"lease"`
	} `yaml:"runs"`
	Delegation struct {
		MaxDepth *int `yaml:"maxDepth"`
	} `yaml:"delegation"`
	Workers   *workersFile `yaml:"workers"`
	Schedules []struct {
		Name     string `yaml:"name"`
		Cron     string `yaml:"cron"`
		Every    string `yaml:"every"`
		TimeZone string `yaml:"timeZone"`
		Agent    string `yaml:"agent"`
		Input    any    `yaml:"input"`
		Session  string `yaml:"session"`
		Webhook  string `yaml:"webhook"`
		RunAs    *struct {
			Strategy string `yaml:"strategy"`
			Subject  string `yaml:"subject"`
			Issuer   string `yaml:"issuer"`
		} `yaml:"runAs"`
	} `yaml:"schedules"`
	Webhooks struct {
		Secret               string   `yaml:"secret"`
		SecretCredential     string   `yaml:"secretCredential"`
		AllowHosts           []string `yaml:"allowHosts"`
		AllowPrivateNetworks bool     `yaml:"allowPrivateNetworks"`
		MaxAttempts          int      `yaml:"maxAttempts"`
		Backoff              string   `yaml:"backoff"`
	} `yaml:"webhooks"`
}

type streamsFile struct {
	Heartbeat string `yaml:"heartbeat"`
	Format    string `yaml:"format"`
}

type serverFile struct {
	Port         int           `yaml:"port"`
	Host         string        `yaml:"host"`
	MaxBodyBytes int64         `yaml:"maxBodyBytes"`
	Auth         *rawComponent `yaml:"auth"`
	Public       []string      `yaml:"public"`
	DrainTimeout string        `yaml:"drainTimeout"`
	AccessLog    bool          `yaml:"accessLog"`
	Console      bool          `yaml:"console"`
	StreamTokens struct {
		Key string `yaml:"key"`
		TTL string `yaml:"ttl"`
	} `yaml:"streamTokens"`
	Ownership struct {
		Resume   *bool `yaml:"resume"`
		Sessions *bool `yaml:"sessions"`
	} `yaml:"ownership"`
	CORS struct {
		Origins []string `yaml:"origins"`
		MaxAge  string   `yaml:"maxAge"`
	} `yaml:"cors"`
	AllowCrossOrigin bool `yaml:"allowCrossOrigin"`
	MaxConnections   int  `yaml:"maxConnections"`
	Timeouts         struct {
		ReadHeader string `yaml:"readHeader"`
		Idle       string `yaml:"idle"`
		BodyRead   string `yaml:"bodyRead"`
	} `yaml:"timeouts"`
}

type errorHandlingFile struct {
	Retry *struct {
		Attempts          int     `yaml:"attempts"`
		BackoffMs         int     `yaml:"backoffMs"`
		BackoffMultiplier float64 `yaml:"backoffMultiplier"`
	} `yaml:"retry"`
}

func (e errorHandlingFile) core() core.ErrorHandling {
	if e.Retry == nil {
		return core.ErrorHandling{}
	}
	return core.ErrorHandling{Retry: &core.RetryPolicy{Attempts: e.Retry.Attempts, BackoffMs: e.Retry.BackoffMs, BackoffMultiplier: e.Retry.BackoffMultiplier}}
}

type pipelineStep struct {
	Type    string            `yaml:"type"`
	AgentID string            `yaml:"agentId"`
	Skill   string            `yaml:"skill"`
	Steps   []pipelineStep    `yaml:"steps"`
	Decider string            `yaml:"decider"`
	Prompt  string            `yaml:"prompt"`
	Routes  map[string]string `yaml:"routes"`
}

func (s pipelineStep) core() core.PipelineStep {
	out := core.PipelineStep{Type: core.StepType(s.Type), AgentID: s.AgentID, Skill: s.Skill, Decider: s.Decider, Prompt: s.Prompt, Routes: s.Routes}
	if out.Type == "" {
		out.Type = core.StepAgent
	}
	for _, sub := range s.Steps {
		out.Steps = append(out.Steps, sub.core())
	}
	return out
}

// loadConfig reads bread.yaml.
func (l *loader) loadConfig(path string) (Config, error) {
	var raw configFile
	f, err := l.readYAML(path, &raw)
	if err != nil {
		return Config{}, err
	}
	cfg := Config{
		Entrypoints: raw.Entrypoints,
		Server: ServerConfig{Port: raw.Server.Port, Host: raw.Server.Host, MaxBodyBytes: raw.Server.MaxBodyBytes,
			Public: raw.Server.Public, AccessLog: raw.Server.AccessLog, Console: raw.Server.Console, AllowCrossOrigin: raw.Server.AllowCrossOrigin,
			MaxConnections: raw.Server.MaxConnections},
		ErrorHandling:      raw.ErrorHandling.core(),
		MaxConcurrentRuns:  raw.Concurrency.Max,
		SessionConcurrency: core.ConcurrencyPolicy(raw.Concurrency.Session),
		Providers:          map[string]*Component{},
		Decisions:          map[string]*Component{},
		RemoteAgents:       map[string]*Component{},
		Pipelines:          map[string][]core.PipelineStep{},
	}
	if !cfg.SessionConcurrency.Valid() {
		return Config{}, f.errorf("$.concurrency.session", "concurrency.session %q is not reject, enqueue, interrupt or rollback", raw.Concurrency.Session)
	}
	for _, c := range []struct {
		path string
		raw  *rawComponent
		dst  **Component
		def  string
	}{
		{"$.store", raw.Store, &cfg.Store, ""},
		{"$.bus", raw.Bus, &cfg.Bus, ""},
		{"$.transport", raw.Transport, &cfg.Transport, ""},
		{"$.blobs", raw.Blobs, &cfg.BlobStore, "fs"},
		{"$.credentials", raw.Credentials, &cfg.Credentials, ""},
	} {
		if *c.dst, err = f.component(c.path, c.raw, c.def); err != nil {
			return cfg, err
		}
	}
	if cfg.Server.Auth, err = authComponents(f, raw.Server.Auth); err != nil {
		return cfg, err
	}
	if err := l.providers(f, raw.Providers, cfg.Providers); err != nil {
		return cfg, err
	}
	if p := raw.Server.Port; p < 0 || p > 65535 {
		return cfg, f.errorf("$.server.port", "port %d is not a TCP port (1-65535; leave it out for 3000)", p)
	}
	if raw.Server.MaxConnections < 0 {
		return cfg, f.errorf("$.server.maxConnections", "maxConnections %d is negative (leave it out for the server's default)", raw.Server.MaxConnections)
	}
	if raw.Server.MaxBodyBytes < 0 {
		return cfg, f.errorf("$.server.maxBodyBytes", "maxBodyBytes %d is negative (leave it out for 1 MiB)", raw.Server.MaxBodyBytes)
	}
	cfg.Server.CORSOrigins = raw.Server.CORS.Origins
	for i, o := range raw.Server.CORS.Origins {
		if u, err := url.Parse(o); o != "*" && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.Fragment != "") {
			return cfg, f.errorf(fmt.Sprintf("$.server.cors.origins[%d]", i), "origin %q is not \"*\" or a scheme and host such as https://app.example.com (no path)", o)
		}
	}
	if m := raw.Server.CORS.MaxAge; m != "" {
		d, err := time.ParseDuration(m)
		if err != nil || d <= 0 {
			return cfg, f.errorf("$.server.cors.maxAge", "maxAge %q is not a positive duration such as 10m", m)
		}
		cfg.Server.CORSMaxAge = d
	}
	if l := raw.Runs.Lease; l != "" {
		d, err := time.ParseDuration(l)
		if err != nil || d < 100*time.Millisecond {
			return cfg, f.errorf("$.runs.lease", "lease %q is not a duration of at least 100ms such as 15s", l)
		}
		cfg.RunLease = d
	}
	if d := raw.Delegation.MaxDepth; d != nil {
		if *d < 1 || *d > 100 {
			return cfg, f.errorf("$.delegation.maxDepth", "delegation.maxDepth %d is not a whole number from 1 to 100", *d)
		}
		cfg.MaxDelegationDepth = *d
	}
	wh := raw.Webhooks
	if wh.Secret != "" && wh.SecretCredential != "" {
		return cfg, f.errorf("$.webhooks.secretCredential", "webhooks takes secret or secretCredential, not both")
	}
	cfg.Webhooks = WebhooksConfig{Secret: wh.Secret, SecretCredential: wh.SecretCredential, AllowHosts: wh.AllowHosts, AllowPrivateNetworks: wh.AllowPrivateNetworks, MaxAttempts: wh.MaxAttempts}
	if wh.MaxAttempts < 0 || wh.MaxAttempts > 20 {
		return cfg, f.errorf("$.webhooks.maxAttempts", "maxAttempts %d is not between 1 and 20 (leave it out for 5)", wh.MaxAttempts)
	}
	if b := wh.Backoff; b != "" {
		d, err := time.ParseDuration(b)
		if err != nil || d <= 0 {
			return cfg, f.errorf("$.webhooks.backoff", "backoff %q is not a positive duration such as 1s", b)
		}
		cfg.Webhooks.Backoff = d
	}
	if cfg.Workers, err = workersConfig(f, raw.Workers); err != nil {
		return cfg, err
	}
	for i, s := range raw.Schedules {
		at := fmt.Sprintf("$.schedules[%d]", i)
		sc := ScheduleConfig{Name: s.Name, Cron: s.Cron, TimeZone: s.TimeZone, Agent: s.Agent, Input: normalize(s.Input), Session: s.Session, Webhook: s.Webhook}
		switch {
		case s.Name == "":
			return cfg, f.errorf(at, "a schedule needs a name")
		case s.Agent == "":
			return cfg, f.errorf(at, "schedule %q names no agent", s.Name)
		case (s.Cron == "") == (s.Every == ""):
			return cfg, f.errorf(at, "schedule %q needs exactly one of cron (such as \"0 3 * * *\") and every (such as 1h)", s.Name)
		case s.Every != "":
			d, err := time.ParseDuration(s.Every)
			if err != nil || d < time.Second {
				return cfg, f.errorf(at+".every", "every %q is not a duration of at least 1s such as 15m", s.Every)
			}
			sc.Every = d
		}
		if ra := s.RunAs; ra != nil {
			if ra.Subject == "" || ra.Strategy == "" {
				return cfg, f.errorf(at+".runAs", "schedule %q: runAs needs a strategy (a server.auth strategy's name) and a subject", s.Name)
			}
			if !slices.ContainsFunc(cfg.Server.Auth, func(c *Component) bool { return cmp.Or(c.String("name"), c.Type) == ra.Strategy }) {
				return cfg, f.errorf(at+".runAs.strategy", "schedule %q: runAs strategy %q names no server.auth strategy", s.Name, ra.Strategy)
			}
			sc.RunAs = &RunAsConfig{Strategy: ra.Strategy, Subject: ra.Subject, Issuer: ra.Issuer}
		}
		cfg.Schedules = append(cfg.Schedules, sc)
	}
	for _, t := range []struct {
		key, value string
		dst        *time.Duration
	}{
		{"readHeader", raw.Server.Timeouts.ReadHeader, &cfg.Server.Timeouts.ReadHeader},
		{"idle", raw.Server.Timeouts.Idle, &cfg.Server.Timeouts.Idle},
		{"bodyRead", raw.Server.Timeouts.BodyRead, &cfg.Server.Timeouts.BodyRead},
	} {
		if t.value == "" {
			continue
		}
		d, err := time.ParseDuration(t.value)
		if err != nil || d <= 0 {
			return cfg, f.errorf("$.server.timeouts."+t.key, "timeouts.%s %q is not a positive duration such as 30s", t.key, t.value)
		}
		*t.dst = d
	}
	if d := raw.Server.DrainTimeout; d != "" {
		v, err := time.ParseDuration(d)
		if err != nil || v <= 0 {
			return cfg, f.errorf("$.server.drainTimeout", "drainTimeout %q is not a positive duration such as 30s", d)
		}
		cfg.Server.DrainTimeout = v
	}
	cfg.Server.StreamTokens.Key = raw.Server.StreamTokens.Key
	if d := raw.Server.StreamTokens.TTL; d != "" {
		v, err := time.ParseDuration(d)
		if err != nil || v <= 0 {
			return cfg, f.errorf("$.server.streamTokens.ttl", "ttl %q is not a positive duration such as 5m", d)
		}
		cfg.Server.StreamTokens.TTL = v
	}
	if r := raw.Server.Ownership.Resume; r != nil && !*r {
		cfg.Server.Ownership.ResumeOff = true
	}
	if r := raw.Server.Ownership.Sessions; r != nil && !*r {
		cfg.Server.Ownership.SessionsOff = true
	}
	if h := raw.Streams.Heartbeat; h != "" {
		d, err := time.ParseDuration(h)
		if err != nil || d <= 0 {
			return cfg, f.errorf("$.streams.heartbeat", "heartbeat %q is not a positive duration such as 15s", h)
		}
		cfg.Streams.Heartbeat = d
	}
	switch raw.Streams.Format {
	case "", "ndjson", "sse":
		cfg.Streams.Format = raw.Streams.Format
	default:
		return cfg, f.errorf("$.streams.format", "format %q is not a stream format; known: ndjson, sse", raw.Streams.Format)
	}
	for i, lc := range raw.Listeners {
		c, err := f.component(fmt.Sprintf("$.listeners[%d]", i), lc, "")
		if err != nil {
			return cfg, err
		}
		cfg.Listeners = append(cfg.Listeners, c)
	}
	for i, p := range raw.Plugins {
		c, err := f.component(fmt.Sprintf("$.plugins[%d]", i), p, "")
		if err != nil {
			return cfg, err
		}
		cfg.Plugins = append(cfg.Plugins, c)
	}
	for _, name := range slices.Sorted(maps.Keys(raw.Decisions)) {
		if cfg.Decisions[name], err = f.component("$.decisions."+name, raw.Decisions[name], ""); err != nil {
			return cfg, err
		}
	}
	for _, id := range slices.Sorted(maps.Keys(raw.RemoteAgents)) {
		if cfg.RemoteAgents[id], err = f.component("$.remoteAgents."+id, raw.RemoteAgents[id], "httpchunked"); err != nil {
			return cfg, err
		}
	}
	for id, steps := range raw.Pipelines {
		if err := core.ValidateID("pipeline", id); err != nil {
			return cfg, f.errAt("$.pipelines."+id, err)
		}
		for _, s := range steps {
			cfg.Pipelines[id] = append(cfg.Pipelines[id], s.core())
		}
	}
	l.configFile = f
	return cfg, nil
}

// authComponents reads `server.auth:` as a list of components or a single
// one.
func authComponents(f *yamlFile, raw *rawComponent) ([]*Component, error) {
	if raw == nil || raw.value == nil {
		return nil, nil
	}
	list, ok := raw.value.([]any)
	if !ok {
		c, err := f.component("$.server.auth", raw, "")
		if err != nil {
			return nil, err
		}
		return []*Component{c}, nil
	}
	if len(list) == 0 {
		return nil, f.errorf("$.server.auth", "auth is an empty list: remove it, or name at least one strategy")
	}
	out := make([]*Component, 0, len(list))
	for i, e := range list {
		path := fmt.Sprintf("$.server.auth[%d]", i)
		if e == nil {
			return nil, f.errorf(path, "an empty auth strategy")
		}
		c, err := f.component(path, &rawComponent{value: e}, "")
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// providers reads `providers:` as a list of names or a map of name →
// component (whose type defaults to the name).
func (l *loader) providers(f *yamlFile, raw any, out map[string]*Component) error {
	switch v := normalize(raw).(type) {
	case nil:
	case []any:
		for i, e := range v {
			name, ok := e.(string)
			if !ok {
				return f.errorf(fmt.Sprintf("$.providers[%d]", i), "a provider list holds names")
			}
			out[name] = &Component{Type: name, Options: map[string]any{}, File: f.rel, Line: f.line(fmt.Sprintf("$.providers[%d]", i))}
		}
	case map[string]any:
		for name, e := range v {
			c, err := f.component("$.providers."+name, &rawComponent{value: e}, name)
			if err != nil {
				return err
			}
			if c == nil {
				c = &Component{Type: name, Options: map[string]any{}, File: f.rel, Line: f.line("$.providers." + name)}
			}
			out[name] = c
		}
	default:
		return f.errorf("$.providers", "providers is a list of names or a map of name to options")
	}
	return nil
}

type workersFile struct {
	Concurrency  int           `yaml:"concurrency"`
	Queue        string        `yaml:"queue"`
	PollInterval string        `yaml:"pollInterval"`
	RescueAfter  string        `yaml:"rescueAfter"`
	Database     *rawComponent `yaml:"database"`
}

// workersConfig reads bread.yaml's workers section.
func workersConfig(f *yamlFile, raw *workersFile) (*WorkersConfig, error) {
	if raw == nil {
		return nil, nil
	}
	w := &WorkersConfig{Concurrency: raw.Concurrency, Queue: raw.Queue}
	db, err := f.component("$.workers.database", raw.Database, "")
	if err != nil {
		return nil, err
	}
	w.Database = db
	if raw.Concurrency < 0 || raw.Concurrency > 10_000 {
		return nil, f.errorf("$.workers.concurrency", "concurrency %d is not between 1 and 10000 (leave it out for the default)", raw.Concurrency)
	}
	if raw.Queue != "" && !core.ValidID(raw.Queue) {
		return nil, f.errorf("$.workers.queue", "queue %q is not a name of letters, digits, '_', '-' or '.'", raw.Queue)
	}
	for _, d := range []struct {
		key, value string
		min        time.Duration
		dst        *time.Duration
	}{
		{"pollInterval", raw.PollInterval, 10 * time.Millisecond, &w.PollInterval},
		{"rescueAfter", raw.RescueAfter, time.Second, &w.RescueAfter},
	} {
		if d.value == "" {
			continue
		}
		v, err := time.ParseDuration(d.value)
		if err != nil || v < d.min {
			return nil, f.errorf("$.workers."+d.key, "%s %q is not a duration of at least %s", d.key, d.value, d.min)
		}
		*d.dst = v
	}
	return w, nil
}
