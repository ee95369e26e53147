package cli_test

import (
	"bytes"
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/breadai/bread/cli"
)

// testIDP is a local OpenID provider: discovery, a JWKS, a
// client-credentials token endpoint minting RS256 JWTs whose aud is the
// request's audience parameter (default "idp-default"), and RFC 7662
// introspection of the opaque tokens given by opaque. It records every
// path hit and every token it issued.
type testIDP struct {
	*httptest.Server
	key    *rsa.PrivateKey
	mu     sync.Mutex
	hits   map[string]int
	issued []string
	scopes []string
	active map[string]map[string]any // introspection answers by opaque token
}

func newTestIDP(t *testing.T) *testIDP {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	p := &testIDP{key: key, hits: map[string]int{}, active: map[string]map[string]any{}}
	p.Server = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.Close)
	return p
}

func (p *testIDP) count(path string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.hits[path]
}

func (p *testIDP) serve(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.hits[r.URL.Path]++
	p.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	enc := base64.RawURLEncoding.EncodeToString
	switch r.URL.Path {
	case "/.well-known/openid-configuration":
		_ = json.NewEncoder(w).Encode(map[string]any{
			"issuer": p.URL, "jwks_uri": p.URL + "/jwks", "token_endpoint": p.URL + "/token",
			"authorization_endpoint": p.URL + "/authorize", "introspection_endpoint": p.URL + "/introspect",
			"id_token_signing_alg_values_supported": []string{"RS256"},
		})
	case "/jwks":
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": []map[string]any{{
			"kty": "RSA", "kid": "k1", "alg": "RS256", "use": "sig",
			"n": enc(p.key.N.Bytes()), "e": enc(big.NewInt(int64(p.key.E)).Bytes()),
		}}})
	case "/token":
		id, secret, ok := r.BasicAuth()
		if !ok {
			id, secret = r.PostFormValue("client_id"), r.PostFormValue("client_secret")
		}
		if r.PostFormValue("grant_type") != "client_credentials" || id != "planner" || secret != "planner-secret" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":"invalid_client"}`))
			return
		}
		aud := r.PostFormValue("audience")
		if aud == "" {
			aud = "idp-default"
		}
		tok := p.mint(map[string]any{"sub": id, "aud": aud, "scope": r.PostFormValue("scope")})
		p.mu.Lock()
		p.issued = append(p.issued, tok)
		p.scopes = append(p.scopes, r.PostFormValue("scope"))
		p.mu.Unlock()
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 3600})
	case "/introspect":
		id, secret, ok := r.BasicAuth()
		if !ok || id != "bread-a" || secret != "introspection-secret" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":"invalid_client"}`))
			return
		}
		p.mu.Lock()
		ans, ok := p.active[r.PostFormValue("token")]
		p.mu.Unlock()
		if !ok {
			ans = map[string]any{"active": false}
		}
		_ = json.NewEncoder(w).Encode(ans)
	default:
		http.NotFound(w, r)
	}
}

// opaque registers an opaque access token for aud, active at the
// introspection endpoint.
func (p *testIDP) opaque(token, aud string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.active[token] = map[string]any{"active": true, "iss": p.URL, "sub": "svc-1", "aud": aud, "exp": time.Now().Add(time.Hour).Unix()}
	return token
}

// mint signs claims (over valid defaults from this issuer) with RS256.
func (p *testIDP) mint(over map[string]any) string {
	now := time.Now()
	claims := map[string]any{"iss": p.URL, "aud": "bread-a", "sub": "alice", "iat": now.Add(-time.Minute).Unix(), "exp": now.Add(time.Hour).Unix()}
	for k, v := range over {
		claims[k] = v
	}
	enc := base64.RawURLEncoding.EncodeToString
	head, _ := json.Marshal(map[string]any{"alg": "RS256", "typ": "JWT", "kid": "k1"})
	body, _ := json.Marshal(claims)
	signing := enc(head) + "." + enc(body)
	sum := sha256.Sum256([]byte(signing))
	sig, err := rsa.SignPKCS1v15(rand.Reader, p.key, crypto.SHA256, sum[:])
	if err != nil {
		panic(err)
	}
	return signing + "." + enc(sig)
}

// clientCredentials asks the IdP's token endpoint for a token, as a
// client would.
func (p *testIDP) clientCredentials(t *testing.T, audience string) string {
	t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "audience": {audience}}
	req, _ := http.NewRequest("POST", p.URL+"/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth("planner", "planner-secret")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(res.Body).Decode(&tok); err != nil || tok.AccessToken == "" {
		t.Fatalf("token endpoint: %d %v", res.StatusCode, err)
	}
	return tok.AccessToken
}

// startInProcess serves dir with `bread start` in this process and
// returns its base URL; the server stops when the test ends.
func startInProcess(t *testing.T, dir string, env map[string]string) string {
	t.Helper()
	port := freePort(t)
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	errOut := &syncWriter{w: &bytes.Buffer{}}
	go func() {
		out := &syncWriter{w: &bytes.Buffer{}}
		done <- cli.Main(cli.Options{Context: ctx, Args: []string{"start", "-p", strconv.Itoa(port), "-H", "127.0.0.1", "--cwd", dir},
			Stdout: out, Stderr: errOut, LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("start did not stop")
		}
		if t.Failed() {
			t.Logf("%s stderr:\n%s", base, errOut.String())
		}
	})
	waitHTTP(t, base+"/agents")
	return base
}

// post sends a run request with an optional Authorization header and
// returns the status, headers and whole body.
func post(t *testing.T, target, auth string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", target, strings.NewReader(`{"input":"hi"}`))
	req.Header.Set("Content-Type", "application/json")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, string(b)
}

// TestOAuth2StrategyFromBreadYAML serves a project whose server.auth is
// `type: oauth2` naming a local IdP as issuer, with introspection of
// opaque tokens at the endpoint discovery names, and authenticates through
// it with tokens the IdP issued.
func TestOAuth2StrategyFromBreadYAML(t *testing.T) {
	idp := newTestIDP(t)
	dir := project(t, basic(map[string]string{"bread.yaml": "entrypoints: [echo]\nstore: {type: sqlite, path: ./bread.db}\n" +
		"server:\n  auth:\n    - type: oauth2\n      issuer: ${IDP}\n      audience: bread-a\n" +
		"      introspection:\n        clientId: bread-a\n        clientSecret: ${INTROSPECTION_SECRET}\n"}))
	base := startInProcess(t, dir, map[string]string{"IDP": idp.URL, "INTROSPECTION_SECRET": "introspection-secret"})

	good := idp.clientCredentials(t, "bread-a")
	other := idp.clientCredentials(t, "other-api")
	cases := []struct {
		name, auth string
		status     int
		challenge  string
		body       string
	}{
		{"no token", "", 401, `Bearer realm="bread"`, ""},
		{"a token from the IdP runs the agent", "Bearer " + good, 200, "", "Hello there."},
		{"a token for another audience", "Bearer " + other, 401, `Bearer realm="bread", error="invalid_token", error_description="the token is not for this audience"`, ""},
		{"a token signed by another key", "Bearer " + newTestIDPKeyOnly(t, idp.URL).mint(nil), 401, `error="invalid_token"`, ""},
		{"an opaque token active at introspection", "Bearer " + idp.opaque("opaque-good", "bread-a"), 200, "", "Hello there."},
		{"an opaque token for another audience", "Bearer " + idp.opaque("opaque-other", "other-api"), 401, `error="invalid_token"`, ""},
		{"an opaque token the IdP does not know", "Bearer opaque-unknown", 401, `error="invalid_token"`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, h, body := post(t, base+"/agents/echo/run", c.auth)
			if status != c.status {
				t.Fatalf("status %d %s, want %d", status, body, c.status)
			}
			if got := strings.Join(h.Values("WWW-Authenticate"), " | "); !strings.Contains(got, c.challenge) || (c.challenge == "" && got != "") {
				t.Errorf("WWW-Authenticate %q, want %q", got, c.challenge)
			}
			if c.body != "" && (!strings.Contains(body, `"text:delta"`) || !strings.Contains(body, `"agent:run:end"`) || !strings.Contains(body, c.body)) {
				t.Errorf("the run did not stream to its end: %s", body)
			}
		})
	}
	if n := idp.count("/.well-known/openid-configuration"); n != 1 {
		t.Errorf("discovery fetched %d times, want 1", n)
	}
	if n := idp.count("/jwks"); n < 1 {
		t.Errorf("the JWKS was never fetched")
	}
	if n := idp.count("/introspect"); n != 3 {
		t.Errorf("introspection called %d times, want 3 (one per opaque token)", n)
	}
}

// newTestIDPKeyOnly is an IdP naming issuer with a key of its own: its
// tokens claim the right issuer but are signed by a key not in its JWKS.
func newTestIDPKeyOnly(t *testing.T, issuer string) *testIDP {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return &testIDP{Server: &httptest.Server{URL: issuer}, key: key}
}

// TestRemoteAgentOAuth2Signer runs a pipeline on project B whose first
// step is a remote agent on server A; A is protected by the oauth2
// strategy and B's remoteAgents entry has an `oauth2:` client-credentials
// signer. B fetches a token from the IdP and A accepts it.
func TestRemoteAgentOAuth2Signer(t *testing.T) {
	idp := newTestIDP(t)
	a := project(t, map[string]string{
		"bread.yaml": "entrypoints: [researcher]\nstore: {type: sqlite, path: ./bread.db}\n" +
			"server:\n  auth:\n    - type: oauth2\n      issuer: ${IDP}\n      audience: bread-a\n",
		"agents/researcher/agent.yaml": "model: {provider: replay, model: t/r.jsonl}\n",
		"t/r.jsonl":                    transcript("Rye needs a starter."),
	})
	baseA := startInProcess(t, a, map[string]string{"IDP": idp.URL})

	// A recording proxy in front of A: what B sends A.
	var mu sync.Mutex
	var seen []string
	target, _ := url.Parse(baseA)
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.FlushInterval = -1
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)

	bYAML := func(secret string) string {
		return "entrypoints: [writer]\nstore: {type: sqlite, path: ./bread.db}\n" +
			"remoteAgents:\n  researcher:\n    type: httpchunked\n    url: " + proxy.URL + "\n" +
			"    oauth2:\n      tokenUrl: ${IDP}/token\n      clientId: planner\n      clientSecret: \"" + secret + "\"\n" +
			"      scopes: [agents:run, agents:read]\n      audience: bread-a\n" +
			"pipelines:\n  brief:\n    - {type: agent, agentId: researcher}\n    - {type: agent, agentId: writer}\n"
	}
	b := project(t, map[string]string{
		"bread.yaml":               bYAML("${PLANNER_SECRET}"),
		"agents/writer/agent.yaml": "model: {provider: replay, model: t/w.jsonl}\n",
		"t/w.jsonl":                transcript("Rye bread, written."),
	})
	baseB := startInProcess(t, b, map[string]string{"IDP": idp.URL, "PLANNER_SECRET": "planner-secret"})

	if status, _, body := post(t, baseA+"/agents/researcher/run", ""); status != 401 {
		t.Fatalf("A without a token: %d %s, want 401", status, body)
	}
	status, _, body := post(t, baseB+"/pipelines/brief/run", "")
	if status != 200 || !strings.Contains(body, "Rye needs a starter.") || !strings.Contains(body, "Rye bread, written.") {
		t.Fatalf("the pipeline on B: %d %s", status, body)
	}
	if n := idp.count("/token"); n != 1 {
		t.Errorf("the IdP's token endpoint was hit %d times, want 1", n)
	}
	idp.mu.Lock()
	issued, scopes := append([]string(nil), idp.issued...), append([]string(nil), idp.scopes...)
	idp.mu.Unlock()
	if len(issued) != 1 || scopes[0] != "agents:run agents:read" {
		t.Fatalf("issued %d tokens with scopes %q", len(issued), scopes)
	}
	mu.Lock()
	got := append([]string(nil), seen...)
	mu.Unlock()
	want := "POST /agents/researcher/run Bearer " + issued[0]
	if len(got) == 0 || got[0] != want {
		t.Errorf("A saw %q, want first %q", got, want)
	}

	// A second run reuses the token.
	if status, _, body := post(t, baseB+"/pipelines/brief/run", ""); status != 200 || !strings.Contains(body, "Rye needs a starter.") {
		t.Fatalf("the second pipeline run on B: %d %s", status, body)
	}
	if n := idp.count("/token"); n != 1 {
		t.Errorf("the second run fetched a new token: %d token requests", n)
	}

	// B with a wrong client secret: the IdP refuses, the step fails with
	// REMOTE_AGENT_ERROR (the signer's CREDENTIAL_UNAVAILABLE is its cause,
	// not shown to the caller) and A is never called.
	bad := project(t, map[string]string{
		"bread.yaml":               bYAML("wrong"),
		"agents/writer/agent.yaml": "model: {provider: replay, model: t/w.jsonl}\n",
		"t/w.jsonl":                transcript("Rye bread, written."),
	})
	baseBad := startInProcess(t, bad, map[string]string{"IDP": idp.URL})
	mu.Lock()
	before := len(seen)
	mu.Unlock()
	_, _, body = post(t, baseBad+"/pipelines/brief/run", "")
	if !strings.Contains(body, `"code":"REMOTE_AGENT_ERROR","message":"signing the remote agent request failed"`) || strings.Contains(body, "Rye needs a starter.") {
		t.Errorf("with a refused client secret the pipeline answered %s", body)
	}
	mu.Lock()
	after := len(seen)
	mu.Unlock()
	if after != before {
		t.Errorf("A was called %d times without a token", after-before)
	}
}
