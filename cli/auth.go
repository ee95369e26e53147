package cli

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/breadai/bread/cli/project"
	"github.com/breadai/bread/core"
	"github.com/breadai/bread/extensions/auth/apikey"
	"github.com/breadai/bread/extensions/auth/jwt"
	"github.com/breadai/bread/extensions/auth/oauth2"
	"github.com/breadai/bread/extensions/auth/trusted"
)

// ClaimStrategy is the claim in which the CLI records which server.auth
// strategy authenticated a caller: the strategy's name (its `name` option,
// or its type). bread.yaml's `allow` lists are per strategy, and read it.
const ClaimStrategy = "bread.strategy"

// authCommon are the options every server.auth strategy takes.
type authCommon struct {
	// Name tells two strategies of one type apart (default: the type).
	Name string `json:"name"`
	// Allow lists the actions the strategy's callers may perform ("*":
	// all, the default).
	Allow []string `json:"allow"`
	// Ownership, true by default, confines the strategy's callers to the
	// runs they started (tail, read, cancel, resume, stream tokens); false
	// lets them act on every run.
	Ownership *bool `json:"ownership"`
	// Admins are subjects of this strategy that may act on every run.
	Admins []string `json:"admins"`
	// AdminClaims make an identity an admin when one of its claims has the
	// value given (a string claim equal to it, or a list claim holding it).
	AdminClaims map[string]string `json:"adminClaims"`
}

// admin reports whether id, authenticated by this strategy, may act on
// every run.
func (c authCommon) admin(id *core.AuthIdentity) bool {
	if c.Ownership != nil && !*c.Ownership {
		return true
	}
	if slices.Contains(c.Admins, id.Subject) {
		return true
	}
	for claim, want := range c.AdminClaims {
		switch v := id.Claims[claim].(type) {
		case string:
			if v == want {
				return true
			}
		case []string:
			if slices.Contains(v, want) {
				return true
			}
		case []any:
			if slices.Contains(v, any(want)) {
				return true
			}
		}
	}
	return false
}

// authSetup is server.auth built: the strategies in order, the action
// grant of their allow lists, and the admin predicate of the run-ownership
// policy.
type authSetup struct {
	strategies []core.BreadAuthStrategy
	authorize  core.AuthorizeFunc
	admin      func(*core.AuthIdentity) bool
}

// strings reads a YAML string or list of strings.
type stringList []string

func (s *stringList) UnmarshalJSON(b []byte) error {
	var one string
	if json.Unmarshal(b, &one) == nil {
		*s = []string{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return err
	}
	*s = many
	return nil
}

var authTypes = []string{"apikey", "jwt", "oauth2", "trusted"}

// authStrategies builds server.auth: its strategies in order, each
// recording its name in the identity (ClaimStrategy), the authorization
// that grants a caller the actions its strategy's `allow` lists, and the
// admin predicate of run ownership (each strategy's `ownership`, `admins`
// and `adminClaims`). Nothing here does network I/O: remote key sets and
// OIDC discovery are fetched when the first token arrives.
func (a *app) authStrategies(cs []*project.Component) (authSetup, error) {
	commons := map[string]authCommon{}
	var out []core.BreadAuthStrategy
	for _, c := range cs {
		s, common, err := a.authStrategy(c)
		if err != nil {
			return authSetup{}, err
		}
		name := common.Name
		if name == "" {
			name = c.Type
		}
		if _, dup := commons[name]; dup {
			return authSetup{}, c.Errorf(core.CodeInvalidConfig, "two auth strategies are named %q: give each a distinct name", name)
		}
		if len(common.Allow) == 0 {
			common.Allow = []string{"*"}
		}
		commons[name] = common
		out = append(out, named{BreadAuthStrategy: s, name: name})
	}
	strategy := func(id *core.AuthIdentity) (authCommon, bool) {
		if id == nil {
			return authCommon{}, false
		}
		name, _ := id.Claims[ClaimStrategy].(string)
		c, ok := commons[name]
		return c, ok
	}
	authorize := func(_ context.Context, id *core.AuthIdentity, action string, _ map[string]string) bool {
		c, ok := strategy(id)
		return ok && (slices.Contains(c.Allow, "*") || slices.Contains(c.Allow, action))
	}
	admin := func(id *core.AuthIdentity) bool {
		c, ok := strategy(id)
		return ok && c.admin(id)
	}
	return authSetup{strategies: out, authorize: authorize, admin: admin}, nil
}

// authStrategy builds one server.auth component.
func (a *app) authStrategy(c *project.Component) (core.BreadAuthStrategy, authCommon, error) {
	var s core.BreadAuthStrategy
	var common authCommon
	var err error
	switch c.Type {
	case "apikey":
		var o struct {
			authCommon
			Keys   []string `json:"keys"`
			Header string   `json:"header"`
			Scheme string   `json:"scheme"`
		}
		if err := decode(c, &o); err != nil {
			return nil, common, err
		}
		common = o.authCommon
		s, err = apikey.Strategy(apikey.Options{Keys: o.Keys, Header: o.Header, Scheme: o.Scheme})
	case "jwt":
		var o struct {
			authCommon
			Secret                        string     `json:"secret"`
			JWKSURL                       string     `json:"jwksUrl"`
			JWKSFile                      string     `json:"jwksFile"`
			PublicKeyFile                 string     `json:"publicKeyFile"`
			JWKSRefresh                   duration   `json:"jwksRefresh"`
			JWKSMinRefetch                duration   `json:"jwksMinRefetch"`
			JWKSTimeout                   duration   `json:"jwksTimeout"`
			Issuer                        string     `json:"issuer"`
			Audience                      stringList `json:"audience"`
			AllowUnverifiedIssuerAudience bool       `json:"allowUnverifiedIssuerAudience"`
			Algorithms                    []string   `json:"algorithms"`
			ClockSkew                     duration   `json:"clockSkew"`
			AllowMissingExpiry            bool       `json:"allowMissingExpiry"`
			SubjectClaim                  string     `json:"subjectClaim"`
			Claims                        []string   `json:"claims"`
			Header                        string     `json:"header"`
			Scheme                        string     `json:"scheme"`
			Realm                         string     `json:"realm"`
			MaxTokenBytes                 int        `json:"maxTokenBytes"`
		}
		if err := decode(c, &o); err != nil {
			return nil, common, err
		}
		common = o.authCommon
		opts := jwt.Options{
			Issuer: o.Issuer, Audience: o.Audience, AllowUnverifiedIssuerAudience: o.AllowUnverifiedIssuerAudience,
			Algorithms: o.Algorithms, ClockSkew: o.ClockSkew.d(), AllowMissingExpiry: o.AllowMissingExpiry,
			SubjectClaim: o.SubjectClaim, Claims: o.Claims, Header: o.Header, Scheme: o.Scheme, Realm: o.Realm,
			MaxTokenBytes: o.MaxTokenBytes, Name: c.Type,
		}
		if o.Secret != "" {
			opts.Secret = []byte(o.Secret)
		}
		sources := 0
		for _, set := range []bool{o.JWKSURL != "", o.JWKSFile != "", o.PublicKeyFile != ""} {
			if set {
				sources++
			}
		}
		if sources > 1 {
			return nil, common, c.Errorf(core.CodeInvalidConfig, "jwt: set one of jwksUrl, jwksFile and publicKeyFile")
		}
		switch {
		case o.JWKSURL != "":
			opts.Keys, err = jwt.NewRemoteJWKS(o.JWKSURL, jwt.JWKSOptions{Refresh: o.JWKSRefresh.d(), MinRefetch: o.JWKSMinRefetch.d(), Timeout: o.JWKSTimeout.d()})
		case o.JWKSFile != "":
			opts.Keys, err = readKeys(projectPath(a.project, o.JWKSFile), jwt.ParseJWKS)
		case o.PublicKeyFile != "":
			opts.Keys, err = readKeys(projectPath(a.project, o.PublicKeyFile), jwt.ParsePEM)
		}
		if err == nil {
			s, err = jwt.Strategy(opts)
		}
	case "oauth2":
		var o struct {
			authCommon
			Issuer        string     `json:"issuer"`
			JWKSURL       string     `json:"jwksUrl"`
			Audience      stringList `json:"audience"`
			Algorithms    []string   `json:"algorithms"`
			Introspection *struct {
				URL          string   `json:"url"`
				ClientID     string   `json:"clientId"`
				ClientSecret string   `json:"clientSecret"`
				CacheSize    int      `json:"cacheSize"`
				CacheTTL     duration `json:"cacheTTL"`
			} `json:"introspection"`
			ClockSkew     duration `json:"clockSkew"`
			SubjectClaim  string   `json:"subjectClaim"`
			Claims        []string `json:"claims"`
			Header        string   `json:"header"`
			Scheme        string   `json:"scheme"`
			Realm         string   `json:"realm"`
			MaxTokenBytes int      `json:"maxTokenBytes"`
			Timeout       duration `json:"timeout"`
			MinRefetch    duration `json:"minRefetch"`
		}
		if err := decode(c, &o); err != nil {
			return nil, common, err
		}
		common = o.authCommon
		opts := oauth2.Options{
			Issuer: o.Issuer, JWKSURL: o.JWKSURL, Audience: o.Audience, Algorithms: o.Algorithms,
			ClockSkew: o.ClockSkew.d(), SubjectClaim: o.SubjectClaim, Claims: o.Claims, Header: o.Header, Scheme: o.Scheme,
			Realm: o.Realm, MaxTokenBytes: o.MaxTokenBytes, Timeout: o.Timeout.d(), MinRefetch: o.MinRefetch.d(),
		}
		if in := o.Introspection; in != nil {
			opts.Introspection = &oauth2.Introspection{URL: in.URL, ClientID: in.ClientID, ClientSecret: in.ClientSecret, CacheSize: in.CacheSize, CacheTTL: in.CacheTTL.d()}
		}
		s, err = oauth2.Strategy(opts)
	case "trusted":
		var o struct {
			authCommon
			Proxies         []string          `json:"proxies"`
			UnixSocket      bool              `json:"unixSocket"`
			UserHeader      string            `json:"userHeader"`
			GroupsHeader    string            `json:"groupsHeader"`
			GroupsSeparator string            `json:"groupsSeparator"`
			Claims          map[string]string `json:"claims"`
		}
		if err := decode(c, &o); err != nil {
			return nil, common, err
		}
		common = o.authCommon
		s, err = trusted.Strategy(trusted.Options{Proxies: o.Proxies, UnixSocket: o.UnixSocket, UserHeader: o.UserHeader,
			GroupsHeader: o.GroupsHeader, GroupsSeparator: o.GroupsSeparator, Claims: o.Claims})
	default:
		return nil, common, unknown(c, "auth strategy", slices.Clone(authTypes))
	}
	if err != nil {
		return nil, common, located(c, err)
	}
	return s, common, nil
}

func readKeys(path string, parse func([]byte) (jwt.StaticKeys, error)) (jwt.StaticKeys, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, core.Errorf(core.CodeInvalidConfig, "jwt: %v", err)
	}
	keys, err := parse(data)
	if err != nil {
		return nil, core.Errorf(core.CodeInvalidConfig, "%s: %v", path, err)
	}
	if len(keys) == 0 {
		return nil, core.Errorf(core.CodeInvalidConfig, "%s: no usable signature key", path)
	}
	return keys, nil
}

// named records a strategy's name in the identities it returns, and passes
// the server's optional interfaces through.
type named struct {
	core.BreadAuthStrategy
	name string
}

func (n named) Name() string { return n.name }

func (n named) Authenticate(r *http.Request) (*core.AuthIdentity, error) {
	id, err := n.BreadAuthStrategy.Authenticate(r)
	if id == nil || err != nil {
		return id, err
	}
	cp := *id
	cp.Claims = maps.Clone(id.Claims)
	if cp.Claims == nil {
		cp.Claims = map[string]any{}
	}
	cp.Claims[ClaimStrategy] = n.name
	return &cp, nil
}

// Challenge implements server.Challenger when the strategy does.
func (n named) Challenge(rejection error) string {
	if c, ok := n.BreadAuthStrategy.(interface{ Challenge(error) string }); ok {
		return c.Challenge(rejection)
	}
	return ""
}

// Scrub implements server.Scrubber when the strategy does.
func (n named) Scrub(r *http.Request) {
	if s, ok := n.BreadAuthStrategy.(interface{ Scrub(*http.Request) }); ok {
		s.Scrub(r)
	}
}

// oauth2Signer is a remote agent's `oauth2:` option: the client-credentials
// grant.
type oauth2Signer struct {
	TokenURL     string     `json:"tokenUrl"`
	ClientID     string     `json:"clientId"`
	ClientSecret string     `json:"clientSecret"`
	Scopes       stringList `json:"scopes"`
	Audience     string     `json:"audience"`
	Timeout      duration   `json:"timeout"`
}

func (o *oauth2Signer) signer(c *project.Component) (core.BreadSigner, error) {
	s, err := oauth2.Signer(oauth2.ClientCredentials{TokenURL: o.TokenURL, ClientID: o.ClientID, ClientSecret: o.ClientSecret, Scopes: o.Scopes, Audience: o.Audience, Timeout: o.Timeout.d()})
	if err != nil {
		return nil, located(c, err)
	}
	return s, nil
}

func (d duration) d() time.Duration { return time.Duration(d) }

// checkAllow refuses an `allow` entry that names no action the server
// serves: a misspelt action grants nothing, so every caller of that
// strategy would get 403 on the route the operator meant to open. known is
// (*server.Server).Actions, which includes the plugins' routes.
func checkAllow(cs []*project.Component, known []string) error {
	for _, c := range cs {
		list, _ := c.Options["allow"].([]any)
		for _, e := range list {
			action, _ := e.(string)
			if action != "*" && !slices.Contains(known, action) {
				return c.Errorf(core.CodeInvalidConfig, "%s: allow names unknown action %q; known: * %s", c.Type, action, strings.Join(known, " "))
			}
		}
	}
	return nil
}
