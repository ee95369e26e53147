package mcpclient

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/breadai/bread/core"
)

// PluginName is the plugin's name: the key of an agent's configuration
// (Agent.Plugins["mcp_client"]) and the sub-id of its tools' permission
// selectors (plugin:mcp_client/<server>__<tool>).
const PluginName = "mcp_client"

// The transports a Server may use.
const (
	TransportStdio = "stdio"
	TransportHTTP  = "http"
)

// Options configure the plugin. Every field is optional.
type Options struct {
	// Servers are connected at Init and shared by every agent that names
	// them.
	Servers []Server
	// Credentials resolves CredentialHeaders, CredentialEnv and Auth. Nil
	// uses the runtime's provider when it exposes one (engine.Instance
	// does: engine.Config.Credentials), else the process environment.
	Credentials core.CredentialProvider
	// ConnectTimeout bounds one connection attempt, including listing the
	// tools (default 10 s). Init waits for the first attempt of every server
	// and never longer than this.
	ConnectTimeout time.Duration
	// Backoff is the first delay before reconnecting a server that failed
	// or dropped (default 250 ms); it doubles per failure up to MaxBackoff
	// (default 30 s).
	Backoff    time.Duration
	MaxBackoff time.Duration
	// Providers resolves an agent's model to answer a server's sampling,
	// after the agent's own registry. Nil uses the runtime's when it
	// exposes one (engine.Instance does: engine.Config.Providers).
	Providers core.ProviderRegistry
	// ElicitationTimeout bounds how long a server's question (elicitation)
	// stays open while its run waits for a human (default 1 h). After it
	// the question is cancelled at the server; a later answer calls the
	// tool again, and the server asks again.
	ElicitationTimeout time.Duration
}

// Server is one MCP server.
type Server struct {
	// Name prefixes the server's tools (<name>__<tool>); lowercase
	// snake_case.
	Name string `json:"name"`
	// Transport is "stdio" or "http"; empty means http when URL is set,
	// stdio otherwise.
	Transport string `json:"transport,omitempty"`

	// Command, Args, Env and Dir start a stdio server. The child gets a
	// minimal environment (PATH, HOME, USER, LANG, TMPDIR, ...), then Env,
	// then CredentialEnv (variable → credential name, read from the
	// credential provider at every start), so bread's own secrets never
	// leak into it by accident.
	Command       string            `json:"command,omitempty"`
	Args          []string          `json:"args,omitempty"`
	Env           map[string]string `json:"env,omitempty"`
	CredentialEnv map[string]string `json:"credentialEnv,omitempty"`
	Dir           string            `json:"dir,omitempty"`

	// URL is a Streamable HTTP endpoint. Every request carries Headers
	// (static values), CredentialHeaders (header → credential name, read on
	// every request so a rotated secret applies at once), Auth, then Signer.
	URL               string            `json:"url,omitempty"`
	Headers           map[string]string `json:"headers,omitempty"`
	CredentialHeaders map[string]string `json:"credentialHeaders,omitempty"`
	Auth              *CredentialAuth   `json:"auth,omitempty"`
	Signer            core.BreadSigner  `json:"-"`

	// ProtocolVersion pins the revision to ask for; empty asks for the
	// newest the SDK speaks and falls back as the server answers.
	ProtocolVersion string `json:"protocolVersion,omitempty"`

	// Elicitation declares the elicitation capability (form mode): a
	// question the server asks during a tool call suspends the bread run
	// with a human:required carrying the server's schema and message, and
	// the answer given through bread's resume goes back to the server.
	// Off by default: the server's questions are then refused by the SDK.
	Elicitation bool `json:"elicitation,omitempty"`

	// Resources and Prompts expose the server's resources (tools
	// <name>__resources_list and <name>__resources_read) and prompts
	// (<name>__prompts_list and <name>__prompts_get) to agents, when the
	// server declares them. Off by default.
	Resources bool `json:"resources,omitempty"`
	Prompts   bool `json:"prompts,omitempty"`

	// NewTransport, when set, replaces Transport: each connection attempt
	// gets a fresh transport from it (in-memory tests, custom transports).
	NewTransport func() (mcp.Transport, error) `json:"-"`
}

// CredentialAuth signs every HTTP request with a credential: Header
// (default Authorization) set to Scheme (default Bearer) and the secret, or
// to the bare secret when Scheme is "none".
type CredentialAuth struct {
	Credential string `json:"credential"`
	Header     string `json:"header,omitempty"`
	Scheme     string `json:"scheme,omitempty"`
}

// AgentConfig is what an agent writes under Agent.Plugins["mcp_client"]:
// the declared servers it uses and the servers of its own.
type AgentConfig struct {
	Servers  []string         `json:"servers,omitempty"`
	External []ExternalServer `json:"external,omitempty"`
	// Sampling names the servers (or globs of names, "*" for all) that may
	// answer their sampling/createMessage with this agent's model during
	// one of its tool calls. Empty by default: every sampling request is
	// refused, and a server no agent allows is not told the client samples.
	Sampling []string `json:"sampling,omitempty"`
}

// ExternalServer is a server declared on one agent: Streamable HTTP only (a
// per-agent entry never spawns a process), connected on first use and
// shared by every agent and run that names the same Name and URL.
type ExternalServer struct {
	Name              string            `json:"name"`
	URL               string            `json:"url"`
	Headers           map[string]string `json:"headers,omitempty"`
	CredentialHeaders map[string]string `json:"credentialHeaders,omitempty"`
	Auth              *CredentialAuth   `json:"auth,omitempty"`
	Elicitation       bool              `json:"elicitation,omitempty"`
	Resources         bool              `json:"resources,omitempty"`
	Prompts           bool              `json:"prompts,omitempty"`
}

func (e ExternalServer) server() Server {
	return Server{Name: e.Name, Transport: TransportHTTP, URL: e.URL, Headers: e.Headers, CredentialHeaders: e.CredentialHeaders, Auth: e.Auth, Elicitation: e.Elicitation, Resources: e.Resources, Prompts: e.Prompts}
}

// agentConfig reads an agent's configuration of this plugin: an
// AgentConfig, a pointer to one, or the map a YAML or JSON file gives.
// Unknown keys are INVALID_CONFIG, so a typo is not a silent no-op.
func agentConfig(a *core.Agent) (*AgentConfig, error) {
	raw, ok := a.Plugins[PluginName]
	if !ok || raw == nil {
		return nil, nil
	}
	switch v := raw.(type) {
	case AgentConfig:
		return &v, nil
	case *AgentConfig:
		return v, nil
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, core.Errorf(core.CodeInvalidConfig, "agent %s: plugins.%s: %v", a.ID, PluginName, err)
	}
	var cfg AgentConfig
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return nil, core.Errorf(core.CodeInvalidConfig, "agent %s: plugins.%s: %v (expected servers, external and sampling)", a.ID, PluginName, err)
	}
	return &cfg, nil
}

// check validates a server declaration without connecting.
func (s *Server) check(where string) error {
	if err := core.ValidateName("MCP server", s.Name); err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	fail := func(format string, args ...any) error {
		return core.Errorf(core.CodeInvalidConfig, "%s: MCP server %s: "+format, append([]any{where, s.Name}, args...)...)
	}
	if s.NewTransport != nil {
		return nil
	}
	if s.Transport == "" {
		s.Transport = TransportStdio
		if s.URL != "" {
			s.Transport = TransportHTTP
		}
	}
	switch s.Transport {
	case TransportStdio:
		if s.Command == "" {
			return fail("a stdio server needs a command")
		}
		if s.URL != "" || len(s.Headers) > 0 || len(s.CredentialHeaders) > 0 || s.Auth != nil || s.Signer != nil {
			return fail("url, headers, credentialHeaders, auth and a signer apply to http servers only")
		}
	case TransportHTTP:
		u, err := url.Parse(s.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fail("an http server needs an absolute http(s) url, got %q", s.URL)
		}
		if s.Command != "" || len(s.Args) > 0 || len(s.Env) > 0 || len(s.CredentialEnv) > 0 || s.Dir != "" {
			return fail("command, args, env, credentialEnv and dir apply to stdio servers only")
		}
	default:
		return fail("unknown transport %q (expected stdio or http)", s.Transport)
	}
	if s.Auth != nil && s.Auth.Credential == "" {
		return fail("auth needs a credential name")
	}
	return nil
}
