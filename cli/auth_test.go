package cli_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/breadai/bread/cli"
)

const jwtSecret = "an-hs256-secret-of-at-least-32-bytes!"

// hs256 signs claims with jwtSecret (RFC 7515 compact form).
func hs256(claims map[string]any) string {
	enc := base64.RawURLEncoding.EncodeToString
	head, _ := json.Marshal(map[string]any{"alg": "HS256", "typ": "JWT"})
	body, _ := json.Marshal(claims)
	signing := enc(head) + "." + enc(body)
	mac := hmac.New(sha256.New, []byte(jwtSecret))
	mac.Write([]byte(signing))
	return signing + "." + enc(mac.Sum(nil))
}

func validClaims(over map[string]any) map[string]any {
	c := map[string]any{"iss": "https://issuer.test", "aud": "bread", "sub": "alice", "exp": time.Now().Add(time.Hour).Unix()}
	for k, v := range over {
		c[k] = v
	}
	return c
}

const authYAML = `entrypoints: [echo]
store: {type: sqlite, path: ./bread.db}
server:
  auth:
    - type: trusted
      proxies: [10.0.0.0/8]
    - type: jwt
      secret: ${JWT_SECRET}
      issuer: https://issuer.test
      audience: bread
      allow: [agent.list, run.start]
    - type: apikey
      scheme: Bearer
      keys: [${API_KEY}]
      allow: [agent.list]
`

// TestAuthStrategiesFromBreadYAML serves a project whose server.auth lists
// three strategies and checks who gets in, what each may do, and the
// challenges.
func TestAuthStrategiesFromBreadYAML(t *testing.T) {
	dir := project(t, basic(map[string]string{"bread.yaml": authYAML}))
	port := freePort(t)
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	env := map[string]string{"JWT_SECRET": jwtSecret, "API_KEY": "key-123"}
	go func() {
		var out, errOut syncWriter
		out.w, errOut.w = &bytes.Buffer{}, &bytes.Buffer{}
		done <- cli.Main(cli.Options{Context: ctx, Args: []string{"start", "-p", strconv.Itoa(port), "-H", "127.0.0.1", "--cwd", dir},
			Stdout: &out, Stderr: &errOut, LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	}()
	defer func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("start did not stop")
		}
	}()
	waitHTTP(t, base+"/agents")

	call := func(method, path, auth string, hdr ...string) (int, http.Header, string) {
		t.Helper()
		var body io.Reader
		if method == "POST" {
			body = strings.NewReader(`{"input":"hi"}`)
		}
		req, _ := http.NewRequest(method, base+path, body)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, res.Header, string(b)
	}

	token := "Bearer " + hs256(validClaims(nil))
	cases := []struct {
		name, method, path, auth string
		hdr                      []string
		status                   int
		challenge                string
	}{
		{"anonymous", "GET", "/agents", "", nil, 401, `Bearer realm="bread"`},
		{"a forged proxy header from an untrusted peer", "GET", "/agents", "", []string{"X-Forwarded-User", "root"}, 401, `Bearer realm="bread"`},
		{"a valid JWT lists agents", "GET", "/agents", token, nil, 200, ""},
		{"a valid JWT runs an agent", "POST", "/agents/echo/run", token, nil, 200, ""},
		{"a JWT may not read sessions", "GET", "/sessions", token, nil, 403, ""},
		{"an expired JWT", "GET", "/agents", "Bearer " + hs256(validClaims(map[string]any{"exp": time.Now().Add(-time.Hour).Unix()})), nil, 401, `Bearer realm="bread", error="invalid_token", error_description="the token has expired"`},
		{"a JWT for another audience", "GET", "/agents", "Bearer " + hs256(validClaims(map[string]any{"aud": "other"})), nil, 401, `error_description="the token is not for this audience"`},
		{"a JWT from another issuer falls through to the API key, which refuses it", "GET", "/agents", "Bearer " + hs256(validClaims(map[string]any{"iss": "https://other.test"})), nil, 401, `Bearer realm="bread"`},
		{"the API key lists agents", "GET", "/agents", "Bearer key-123", nil, 200, ""},
		{"the API key may not run agents", "POST", "/agents/echo/run", "Bearer key-123", nil, 403, ""},
		{"a wrong API key", "GET", "/agents", "Bearer key-124", nil, 401, `Bearer realm="bread"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, h, body := call(c.method, c.path, c.auth, c.hdr...)
			if status != c.status {
				t.Fatalf("status %d %s, want %d", status, body, c.status)
			}
			if got := strings.Join(h.Values("WWW-Authenticate"), " | "); !strings.Contains(got, c.challenge) || (c.challenge == "" && got != "") {
				t.Errorf("WWW-Authenticate %q, want %q", got, c.challenge)
			}
		})
	}
}

func TestAuthConfigErrorsNameFileAndLine(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"option typo", "server:\n  auth:\n    - type: jwt\n      secret: " + jwtSecret + "\n      issuerr: x\n", `bread.yaml:3: INVALID_CONFIG: jwt options: json: unknown field "issuerr"`},
		{"short secret", "server:\n  auth:\n    - {type: apikey, keys: [k]}\n    - {type: jwt, secret: short, issuer: x}\n", "bread.yaml:4: INVALID_CONFIG: jwt: Secret is 5 bytes"},
		{"no issuer or audience", "server:\n  auth:\n    - {type: jwt, secret: " + jwtSecret + "}\n", "bread.yaml:3: INVALID_CONFIG: jwt: set Issuer and/or Audience"},
		{"two key sources", "server:\n  auth:\n    - {type: jwt, jwksUrl: https://x/jwks, jwksFile: k.json, issuer: x}\n", "bread.yaml:3: INVALID_CONFIG: jwt: set one of"},
		{"missing key file", "server:\n  auth:\n    - {type: jwt, jwksFile: nope.json, issuer: x}\n", "bread.yaml:3"},
		{"unknown type", "server:\n  auth: [{type: saml}]\n", `bread.yaml:2: INVALID_CONFIG: unknown auth strategy "saml"; known: apikey, jwt, oauth2, trusted`},
		{"same name twice", "server:\n  auth:\n    - {type: apikey, keys: [a]}\n    - {type: apikey, keys: [b]}\n", `bread.yaml:4: INVALID_CONFIG: two auth strategies are named "apikey"`},
		{"trust everyone", "server:\n  auth:\n    - {type: trusted, proxies: [0.0.0.0/0]}\n", "bread.yaml:3: INVALID_CONFIG: trusted: proxy"},
		{"oauth2 without issuer", "server:\n  auth:\n    - {type: oauth2, audience: x}\n", "bread.yaml:3: INVALID_CONFIG: oauth2: set Issuer"},
		{"oauth2 introspection typo", "server:\n  auth:\n    - type: oauth2\n      issuer: https://x\n      introspection: {client_id: c}\n", `bread.yaml:3: INVALID_CONFIG: oauth2 options: json: unknown field "client_id"`},
		{"short stream token key", "server:\n  auth:\n    - {type: apikey, keys: [k]}\n  streamTokens: {key: short}\n", "INVALID_CONFIG: a stream token key needs at least 32 bytes"},
		{"bad stream token ttl", "server:\n  auth:\n    - {type: apikey, keys: [k]}\n  streamTokens: {ttl: soon}\n", `ttl "soon" is not a positive duration`},
		{"remote agent with two signers", "remoteAgents:\n  r: {url: http://x, apiKey: k, oauth2: {tokenUrl: https://x/t, clientId: c}}\n", "bread.yaml:2: INVALID_CONFIG: a remote agent takes apiKey or oauth2"},
		{"remote agent oauth2 typo", "remoteAgents:\n  r: {url: http://x, oauth2: {token_url: https://x/t, clientId: c}}\n", `bread.yaml:2: INVALID_CONFIG: httpchunked options: json: unknown field "token_url"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := project(t, basic(map[string]string{"bread.yaml": "entrypoints: [echo]\nstore: memory\n" + strings.ReplaceAll(tt.yaml, "bread.yaml", "")}))
			// The lines above are shifted by the two lines prepended.
			want := shiftLine(tt.want, 2)
			r := run(t, cli.Options{}, "invoke", "echo", "hi", "--cwd", dir)
			if r.code != cli.ExitFailure || !strings.Contains(r.stderr, want) {
				t.Errorf("invoke: code %d stderr %q, want %q", r.code, r.stderr, want)
			}
			if strings.Contains(tt.yaml, "server:") {
				r = run(t, cli.Options{}, "build", "--cwd", dir)
				if r.code != cli.ExitFailure || !strings.Contains(r.stderr, want) {
					t.Errorf("build: code %d stderr %q, want %q", r.code, r.stderr, want)
				}
			}
		})
	}
}

// shiftLine adds n to the line in "bread.yaml:N".
func shiftLine(s string, n int) string {
	const p = "bread.yaml:"
	i := strings.Index(s, p)
	if i < 0 {
		return s
	}
	j := i + len(p)
	k := j
	for k < len(s) && s[k] >= '0' && s[k] <= '9' {
		k++
	}
	line, _ := strconv.Atoi(s[j:k])
	return s[:j] + strconv.Itoa(line+n) + s[k:]
}

// TestSingleAPIKeyFormStillWorks: the older `auth: {type: apikey, ...}`.
func TestSingleAPIKeyFormStillWorks(t *testing.T) {
	dir := project(t, basic(map[string]string{"bread.yaml": "entrypoints: [echo]\nstore: memory\nserver:\n  auth: {type: apikey, keys: [k1], allow: [agent.list]}\n"}))
	if r := run(t, cli.Options{}, "build", "--cwd", dir); r.code != cli.ExitOK {
		t.Fatalf("build: %+v", r)
	}
}
