package vault_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/extensions/credentials/vault"
	"github.com/hashicorp/vault/api"
)

// TestMain clears the VAULT_* variables the official client reads, so a
// developer's shell cannot steer the tests; the tests that exercise the
// fallbacks set them with t.Setenv.
func TestMain(m *testing.M) {
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "VAULT_") {
			os.Unsetenv(k)
		}
	}
	os.Exit(m.Run())
}

const testToken = "s.TOKEN-must-not-leak-7f3a"

// fakeVault speaks Vault's KV v2 read API over HTTP as a real server does:
// GET /v1/{mount}/data/{path} with X-Vault-Token, answering
// {"data":{"data":{...},"metadata":{...}}} or {"errors":[...]}.
type fakeVault struct {
	t      *testing.T
	srv    *httptest.Server
	token  string
	mount  string
	mu     sync.Mutex
	data   map[string]map[string]any // path -> the secret's keys
	raw    map[string]rawAnswer      // path -> a fixed answer, for broken servers
	header http.Header               // the last request's headers
	reqs   atomic.Int64
}

type rawAnswer struct {
	status int
	body   string
	delay  time.Duration // wait this long (or until the client gives up) first
	times  int           // answer this way this many times, then normally; 0 = always
}

func newFakeVault(t *testing.T, mount string) *fakeVault {
	f := &fakeVault{t: t, token: testToken, mount: mount, data: map[string]map[string]any{}, raw: map[string]rawAnswer{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeVault) put(path string, kv map[string]any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.data[path] = kv
}

func (f *fakeVault) answer(path string, a rawAnswer) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.raw[path] = a
}

func (f *fakeVault) lastHeader() http.Header {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.header.Clone()
}

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}

func (f *fakeVault) serve(w http.ResponseWriter, r *http.Request) {
	f.reqs.Add(1)
	f.mu.Lock()
	f.header = r.Header.Clone()
	f.mu.Unlock()
	if r.Method != http.MethodGet {
		writeJSON(w, http.StatusMethodNotAllowed, `{"errors":["1 error occurred:\n\t* unsupported operation\n\n"]}`)
		return
	}
	if r.Header.Get("X-Vault-Token") != f.token {
		writeJSON(w, http.StatusForbidden, `{"errors":["permission denied"]}`)
		return
	}
	prefix := "/v1/" + f.mount + "/data/"
	path, ok := strings.CutPrefix(r.URL.Path, prefix)
	if !ok {
		// What Vault says for a path no mount serves.
		writeJSON(w, http.StatusForbidden, `{"errors":["1 error occurred:\n\t* permission denied\n\n"]}`)
		return
	}
	f.mu.Lock()
	a, isRaw := f.raw[path]
	if isRaw && a.times > 0 {
		a.times--
		if a.times == 0 {
			delete(f.raw, path)
		} else {
			f.raw[path] = a
		}
	}
	kv, found := f.data[path]
	f.mu.Unlock()
	if isRaw {
		if a.delay > 0 {
			select {
			case <-time.After(a.delay):
			case <-r.Context().Done():
				return
			}
		}
		writeJSON(w, a.status, a.body)
		return
	}
	if !found {
		writeJSON(w, http.StatusNotFound, `{"errors":[]}`)
		return
	}
	body, err := json.Marshal(map[string]any{
		"request_id":     "a6e3c2c4-1d34-7c10-9a36-2bd0b6b1e3a1",
		"lease_id":       "",
		"renewable":      false,
		"lease_duration": 0,
		"data": map[string]any{
			"data": kv,
			"metadata": map[string]any{
				"created_time":    "2025-01-02T03:04:05.678901Z",
				"custom_metadata": nil,
				"deletion_time":   "",
				"destroyed":       false,
				"version":         3,
			},
		},
		"wrap_info":  nil,
		"warnings":   nil,
		"auth":       nil,
		"mount_type": "kv",
	})
	if err != nil {
		f.t.Error(err)
	}
	writeJSON(w, http.StatusOK, string(body))
}

// fast keeps retries quick so failing cases do not wait a second each.
func fast(o vault.Options) vault.Options {
	if o.MinRetryBackoff == 0 {
		o.MinRetryBackoff = time.Millisecond
	}
	if o.MaxRetryBackoff == 0 {
		o.MaxRetryBackoff = 2 * time.Millisecond
	}
	return o
}

func mustNew(t *testing.T, o vault.Options) *vault.Provider {
	t.Helper()
	p, err := vault.New(o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}

// breadErr asserts err is a *core.BreadError with code and, when reason is
// set, that Context["reason"]; and that the token shows nowhere in the chain.
func breadErr(t *testing.T, err error, code, reason string) *core.BreadError {
	t.Helper()
	var be *core.BreadError
	if !errors.As(err, &be) {
		t.Fatalf("got %T %v, want a *core.BreadError %s", err, err, code)
	}
	if be.Code != code {
		t.Fatalf("code %s (%v), want %s", be.Code, err, code)
	}
	if reason != "" && be.Context["reason"] != reason {
		t.Fatalf("reason %v (%v), want %s", be.Context["reason"], err, reason)
	}
	for e := error(be); e != nil; e = errors.Unwrap(e) {
		if s := fmt.Sprintf("%v %+v", e, e); strings.Contains(s, testToken) {
			t.Fatalf("the token leaked into an error: %s", s)
		}
	}
	if b, _ := json.Marshal(be); strings.Contains(string(b), testToken) {
		t.Fatalf("the token leaked into the wire form: %s", b)
	}
	return be
}

func TestGet(t *testing.T) {
	f := newFakeVault(t, "kv")
	f.put("SEARCH_API_KEY", map[string]any{"SEARCH_API_KEY": "k-123", "other": "x"})
	f.put("EMPTY", map[string]any{"EMPTY": ""})
	f.put("PORT", map[string]any{"PORT": json.Number("8443")})
	f.put("BIG", map[string]any{"BIG": json.Number("12345678901234567890")})
	f.put("FLAG", map[string]any{"FLAG": true})
	f.put("OBJ", map[string]any{"OBJ": map[string]any{"a": "b"}})
	f.put("NULL", map[string]any{"NULL": nil})
	f.put("NO_FIELD", map[string]any{"something_else": "v"})
	f.put("NO_KEYS", map[string]any{})
	f.answer("DELETED", rawAnswer{status: 404, body: `{"data":{"data":null,"metadata":{"created_time":"2025-01-02T03:04:05Z","custom_metadata":null,"deletion_time":"2025-02-02T03:04:05Z","destroyed":false,"version":2}}}`})
	f.answer("DESTROYED", rawAnswer{status: 404, body: `{"data":{"data":null,"metadata":{"created_time":"2025-01-02T03:04:05Z","custom_metadata":null,"deletion_time":"","destroyed":true,"version":2}}}`})
	f.answer("MALFORMED", rawAnswer{status: 200, body: `{"data":{"data":{"MALFORMED":"x"`})
	f.answer("NOT_JSON", rawAnswer{status: 200, body: `<html>proxy error</html>`})
	f.answer("WRONG_SHAPE", rawAnswer{status: 200, body: `{"data":{"data":"a string, not an object"}}`})
	f.answer("NO_DATA", rawAnswer{status: 200, body: `{"data":{"metadata":{}}}`})
	f.answer("DATA_NOT_OBJECT", rawAnswer{status: 200, body: `{"data":"x"}`})
	f.answer("NO_ENVELOPE", rawAnswer{status: 200, body: `{}`})
	f.answer("EMPTY_BODY", rawAnswer{status: 200, body: ``})
	f.answer("MALFORMED_404", rawAnswer{status: 404, body: `{"errors":[`})
	f.answer("SEALED", rawAnswer{status: 503, body: `{"errors":["Vault is sealed"]}`})
	f.answer("TEAPOT", rawAnswer{status: 418, body: `not json at all`})
	f.answer("NOT_IMPLEMENTED", rawAnswer{status: 501, body: `{"errors":["no"]}`})

	p := mustNew(t, fast(vault.Options{Address: f.srv.URL, Token: testToken, Mount: "kv", MaxRetries: -1}))
	tests := []struct {
		name, want, code, reason string
	}{
		{"SEARCH_API_KEY", "k-123", "", ""},
		{"EMPTY", "", "", ""},
		{"PORT", "8443", "", ""},
		{"BIG", "12345678901234567890", "", ""},
		{"FLAG", "true", "", ""},
		{"OBJ", `{"a":"b"}`, "", ""},
		{"MISSING", "", core.CodeCredentialUnavailable, vault.ReasonSecretNotFound},
		{"NO_FIELD", "", core.CodeCredentialUnavailable, vault.ReasonFieldNotFound},
		{"NO_KEYS", "", core.CodeCredentialUnavailable, vault.ReasonFieldNotFound},
		{"NULL", "", core.CodeCredentialUnavailable, vault.ReasonFieldNotFound},
		{"DELETED", "", core.CodeCredentialUnavailable, vault.ReasonSecretDeleted},
		{"DESTROYED", "", core.CodeCredentialUnavailable, vault.ReasonSecretDeleted},
		{"MALFORMED", "", core.CodeCredentialUnavailable, vault.ReasonBadResponse},
		{"NOT_JSON", "", core.CodeCredentialUnavailable, vault.ReasonBadResponse},
		{"WRONG_SHAPE", "", core.CodeCredentialUnavailable, vault.ReasonBadResponse},
		{"NO_DATA", "", core.CodeCredentialUnavailable, vault.ReasonBadResponse},
		{"DATA_NOT_OBJECT", "", core.CodeCredentialUnavailable, vault.ReasonBadResponse},
		{"NO_ENVELOPE", "", core.CodeCredentialUnavailable, vault.ReasonBadResponse},
		{"EMPTY_BODY", "", core.CodeCredentialUnavailable, vault.ReasonSecretNotFound},
		{"MALFORMED_404", "", core.CodeCredentialUnavailable, vault.ReasonBadResponse},
		{"SEALED", "", core.CodeCredentialUnavailable, vault.ReasonVaultError},
		{"TEAPOT", "", core.CodeCredentialUnavailable, vault.ReasonVaultError},
		{"NOT_IMPLEMENTED", "", core.CodeCredentialUnavailable, vault.ReasonVaultError},
		{"../other/x", "", core.CodeInvalidCredentialName, ""},
		{"a?b", "", core.CodeInvalidCredentialName, ""},
		{"a#b", "", core.CodeInvalidCredentialName, ""},
		{"a%2Fb", "", core.CodeInvalidCredentialName, ""},
		{"with space", "", core.CodeInvalidCredentialName, ""},
		{"1abc", "", core.CodeInvalidCredentialName, ""},
		{"", "", core.CodeInvalidCredentialName, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := p.Get(context.Background(), tt.name)
			if tt.code == "" {
				if err != nil || got != tt.want {
					t.Fatalf("Get = %q, %v; want %q", got, err, tt.want)
				}
				return
			}
			if got != "" {
				t.Errorf("Get returned %q with an error", got)
			}
			be := breadErr(t, err, tt.code, tt.reason)
			if be.Context["name"] != tt.name {
				t.Errorf("context %v", be.Context)
			}
		})
	}

	t.Run("the official client's errors stay reachable", func(t *testing.T) {
		_, err := p.Get(context.Background(), "MISSING")
		if !errors.Is(err, api.ErrSecretNotFound) {
			t.Errorf("errors.Is(err, api.ErrSecretNotFound) is false for %v", err)
		}
		_, err = p.Get(context.Background(), "SEALED")
		var re *api.ResponseError
		if !errors.As(err, &re) || re.StatusCode != 503 {
			t.Errorf("no *api.ResponseError with 503 in %v", err)
		}
		if be := breadErr(t, err, core.CodeCredentialUnavailable, vault.ReasonVaultError); be.Context["status"] != 503 {
			t.Errorf("context %v", be.Context)
		}
		if strings.Contains(err.Error(), "sealed") {
			t.Errorf("vault's own text reached the message: %v", err)
		}
	})
}

func TestInvalidNameSendsNothing(t *testing.T) {
	f := newFakeVault(t, "kv")
	p := mustNew(t, vault.Options{Address: f.srv.URL, Token: testToken, Mount: "kv"})
	for _, name := range []string{"..", "a/b", "a\x00b", "é"} {
		_, err := p.Get(context.Background(), name)
		breadErr(t, err, core.CodeInvalidCredentialName, "")
	}
	if n := f.reqs.Load(); n != 0 {
		t.Errorf("%d requests reached vault", n)
	}
}

func TestWireFormat(t *testing.T) {
	f := newFakeVault(t, "kv")
	f.put("API_KEY", map[string]any{"API_KEY": "v"})
	tests := []struct {
		name      string
		opts      vault.Options
		env       map[string]string
		namespace string // the X-Vault-Namespace vault must see; "" = none
	}{
		{"no namespace", vault.Options{}, nil, ""},
		{"namespace header", vault.Options{Namespace: "admin/team-a"}, nil, "admin/team-a"},
		{"VAULT_NAMESPACE fallback", vault.Options{}, map[string]string{"VAULT_NAMESPACE": "from-env"}, "from-env"},
		{"Namespace beats VAULT_NAMESPACE", vault.Options{Namespace: "opt"}, map[string]string{"VAULT_NAMESPACE": "from-env"}, "opt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			o := tt.opts
			o.Address, o.Token, o.Mount = f.srv.URL, testToken, "kv"
			p := mustNew(t, o)
			if got, err := p.Get(context.Background(), "API_KEY"); err != nil || got != "v" {
				t.Fatalf("Get = %q, %v", got, err)
			}
			h := f.lastHeader()
			if got := h.Get("X-Vault-Namespace"); got != tt.namespace {
				t.Errorf("X-Vault-Namespace %q, want %q", got, tt.namespace)
			}
			if _, ok := h["X-Vault-Namespace"]; !ok && tt.namespace != "" {
				t.Errorf("no namespace header")
			}
			if h.Get("X-Vault-Token") != testToken {
				t.Errorf("X-Vault-Token not sent")
			}
			if h.Get("X-Vault-Request") != "true" {
				t.Errorf("X-Vault-Request %q, want the official client's true", h.Get("X-Vault-Request"))
			}
		})
	}
}

func TestWrongToken(t *testing.T) {
	f := newFakeVault(t, "kv")
	f.put("API_KEY", map[string]any{"API_KEY": "v"})
	f.token = "s.the-right-one"
	p := mustNew(t, vault.Options{Address: f.srv.URL, Token: testToken, Mount: "kv"})
	_, err := p.Get(context.Background(), "API_KEY")
	be := breadErr(t, err, core.CodeCredentialUnavailable, vault.ReasonPermissionDenied)
	if be.Context["status"] != 403 {
		t.Errorf("context %v", be.Context)
	}
	if n := f.reqs.Load(); n != 1 {
		t.Errorf("a 403 was retried: %d requests", n)
	}
	var re *api.ResponseError
	if !errors.As(err, &re) || len(re.Errors) != 1 || re.Errors[0] != "permission denied" {
		t.Errorf("vault's errors are not in the cause: %v", err)
	}
	// A mount vault does not serve answers 403 too.
	f.token = testToken
	other := mustNew(t, vault.Options{Address: f.srv.URL, Token: testToken, Mount: "elsewhere"})
	_, err = other.Get(context.Background(), "API_KEY")
	breadErr(t, err, core.CodeCredentialUnavailable, vault.ReasonPermissionDenied)
}

func TestNew(t *testing.T) {
	c, err := api.NewClient(&api.Config{Address: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		opts vault.Options
		code string
	}{
		{"defaults", vault.Options{Address: "http://vault:8200"}, ""},
		{"https with a path", vault.Options{Address: "https://vault.example/prefix/"}, ""},
		{"mount", vault.Options{Address: "http://vault:8200", Mount: "kv_2-team"}, ""},
		{"client", vault.Options{Client: c, Token: "t", Namespace: "ns", Timeout: time.Second}, ""},
		{"no address: VAULT_ADDR or the client's default", vault.Options{}, ""},
		{"mount with a slash", vault.Options{Address: "http://vault:8200", Mount: "a/b"}, core.CodeInvalidVaultMount},
		{"mount ..", vault.Options{Address: "http://vault:8200", Mount: ".."}, core.CodeInvalidVaultMount},
		{"mount with a space", vault.Options{Address: "http://vault:8200", Mount: "x y"}, core.CodeInvalidVaultMount},
		{"mount escaped", vault.Options{Address: "http://vault:8200", Mount: "%2e"}, core.CodeInvalidVaultMount},
		{"mount starting with a digit", vault.Options{Address: "http://vault:8200", Mount: "1kv"}, core.CodeInvalidVaultMount},
		{"mount with a query", vault.Options{Address: "http://vault:8200", Mount: "kv?x"}, core.CodeInvalidVaultMount},
		{"not a url", vault.Options{Address: "not a url"}, core.CodeInvalidConfig},
		{"not http", vault.Options{Address: "ftp://vault:8200"}, core.CodeInvalidConfig},
		{"no host", vault.Options{Address: "http://"}, core.CodeInvalidConfig},
		{"address and client", vault.Options{Address: "http://vault:8200", Client: c}, core.CodeInvalidConfig},
		{"retries and client", vault.Options{Client: c, MaxRetries: 3}, core.CodeInvalidConfig},
		{"MaxRetries -2", vault.Options{Address: "http://vault:8200", MaxRetries: -2}, core.CodeInvalidConfig},
		{"negative backoff", vault.Options{Address: "http://vault:8200", MinRetryBackoff: -time.Second}, core.CodeInvalidConfig},
		{"backoffs inverted", vault.Options{Address: "http://vault:8200", MinRetryBackoff: 2 * time.Second, MaxRetryBackoff: time.Second}, core.CodeInvalidConfig},
		{"token with a newline", vault.Options{Address: "http://vault:8200", Token: testToken + "\n"}, core.CodeInvalidConfig},
		{"namespace with a newline", vault.Options{Address: "http://vault:8200", Namespace: "a\nb"}, core.CodeInvalidConfig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := vault.New(tt.opts)
			if tt.code == "" {
				if err != nil || p == nil {
					t.Fatalf("New = %v, %v", p, err)
				}
				return
			}
			if p != nil {
				t.Errorf("New returned a provider with an error")
			}
			breadErr(t, err, tt.code, "")
		})
	}
}

func TestEnvironment(t *testing.T) {
	f := newFakeVault(t, "secret")
	f.put("API_KEY", map[string]any{"API_KEY": "from-vault"})

	t.Run("VAULT_ADDR and VAULT_TOKEN fill empty options", func(t *testing.T) {
		t.Setenv("VAULT_ADDR", f.srv.URL)
		t.Setenv("VAULT_TOKEN", testToken)
		p := mustNew(t, vault.Options{})
		if p.Mount() != vault.DefaultMount {
			t.Errorf("mount %q", p.Mount())
		}
		if got, err := p.Get(context.Background(), "API_KEY"); err != nil || got != "from-vault" {
			t.Fatalf("Get = %q, %v", got, err)
		}
	})
	t.Run("options win over the environment", func(t *testing.T) {
		t.Setenv("VAULT_ADDR", "http://127.0.0.1:1")
		t.Setenv("VAULT_AGENT_ADDR", "http://127.0.0.1:1")
		t.Setenv("VAULT_TOKEN", "s.wrong")
		t.Setenv("VAULT_MAX_RETRIES", "9")
		t.Setenv("VAULT_CLIENT_TIMEOUT", "1")
		p := mustNew(t, vault.Options{Address: f.srv.URL, Token: testToken})
		if got, err := p.Get(context.Background(), "API_KEY"); err != nil || got != "from-vault" {
			t.Fatalf("Get = %q, %v", got, err)
		}
		if p.Client().MaxRetries() != vault.DefaultMaxRetries || p.Client().ClientTimeout() != vault.DefaultTimeout {
			t.Errorf("retries %d, timeout %s", p.Client().MaxRetries(), p.Client().ClientTimeout())
		}
	})
	t.Run("a malformed VAULT_ variable is INVALID_CONFIG", func(t *testing.T) {
		t.Setenv("VAULT_SKIP_VERIFY", "maybe")
		_, err := vault.New(vault.Options{Address: f.srv.URL})
		breadErr(t, err, core.CodeInvalidConfig, "")
	})
	t.Run("a non-printable VAULT_TOKEN is INVALID_CONFIG and not echoed", func(t *testing.T) {
		t.Setenv("VAULT_TOKEN", testToken+"\x07")
		_, err := vault.New(vault.Options{Address: f.srv.URL})
		breadErr(t, err, core.CodeInvalidConfig, "")
	})
}

func TestSuppliedClient(t *testing.T) {
	f := newFakeVault(t, "kv")
	f.put("API_KEY", map[string]any{"API_KEY": "v"})
	cfg := api.DefaultConfig()
	cfg.Address = f.srv.URL
	c, err := api.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.SetToken(testToken)
	c.SetNamespace("theirs")

	p := mustNew(t, vault.Options{Client: c, Mount: "kv"})
	if p.Client() != c {
		t.Errorf("the client was copied without need")
	}
	if got, err := p.Get(context.Background(), "API_KEY"); err != nil || got != "v" {
		t.Fatalf("Get = %q, %v", got, err)
	}
	if ns := f.lastHeader().Get("X-Vault-Namespace"); ns != "theirs" {
		t.Errorf("namespace %q", ns)
	}

	f.token = "s.other"
	q := mustNew(t, vault.Options{Client: c, Mount: "kv", Token: "s.other", Namespace: "mine"})
	if got, err := q.Get(context.Background(), "API_KEY"); err != nil || got != "v" {
		t.Fatalf("Get = %q, %v", got, err)
	}
	if ns := f.lastHeader().Get("X-Vault-Namespace"); ns != "mine" {
		t.Errorf("namespace %q", ns)
	}
	if c.Token() != testToken || c.Namespace() != "theirs" {
		t.Errorf("the caller's client changed: token changed %v, namespace %q", c.Token() != testToken, c.Namespace())
	}
}

func TestServerDown(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	addr := srv.URL
	srv.Close()
	tests := []struct {
		name string
		opts vault.Options
	}{
		{"no retries", vault.Options{MaxRetries: -1}},
		{"after retries", fast(vault.Options{MaxRetries: 2})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tt.opts
			o.Address, o.Token = addr, testToken
			p := mustNew(t, o)
			start := time.Now()
			_, err := p.Get(context.Background(), "API_KEY")
			be := breadErr(t, err, core.CodeCredentialUnavailable, vault.ReasonUnreachable)
			if !strings.Contains(be.Message, strings.TrimPrefix(addr, "http://")) {
				t.Errorf("message does not name the host: %s", be.Message)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %s", d)
			}
		})
	}
}

func TestRetries(t *testing.T) {
	tests := []struct {
		name       string
		answer     rawAnswer
		maxRetries int
		reqs       int64
		reason     string // "" = the read succeeds
	}{
		{"503 then ok", rawAnswer{status: 503, body: `{"errors":["Vault is sealed"]}`, times: 2}, 2, 3, ""},
		{"429 then ok", rawAnswer{status: 429, body: `{"errors":["rate limited"]}`, times: 1}, 2, 2, ""},
		{"412 then ok", rawAnswer{status: 412, body: `{"errors":["required index state not present"]}`, times: 1}, 1, 2, ""},
		{"503 beyond the retries", rawAnswer{status: 503, body: `{"errors":["Vault is sealed"]}`, times: 5}, 2, 3, vault.ReasonVaultError},
		{"no retries", rawAnswer{status: 502, body: `bad gateway`, times: 1}, -1, 1, vault.ReasonVaultError},
		{"404 is not retried", rawAnswer{status: 404, body: `{"errors":[]}`, times: 5}, 2, 1, vault.ReasonSecretNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeVault(t, "kv")
			f.put("API_KEY", map[string]any{"API_KEY": "v"})
			f.answer("API_KEY", tt.answer)
			p := mustNew(t, fast(vault.Options{Address: f.srv.URL, Token: testToken, Mount: "kv", MaxRetries: tt.maxRetries}))
			got, err := p.Get(context.Background(), "API_KEY")
			if tt.reason == "" {
				if err != nil || got != "v" {
					t.Fatalf("Get = %q, %v", got, err)
				}
			} else {
				breadErr(t, err, core.CodeCredentialUnavailable, tt.reason)
			}
			if n := f.reqs.Load(); n != tt.reqs {
				t.Errorf("%d requests, want %d", n, tt.reqs)
			}
		})
	}
}

func TestTimeoutAndCancellation(t *testing.T) {
	f := newFakeVault(t, "kv")
	f.answer("SLOW", rawAnswer{status: 200, body: `{"data":{"data":{"SLOW":"late"},"metadata":{}}}`, delay: time.Minute})
	f.answer("SLOW_503", rawAnswer{status: 503, body: `{"errors":["sealed"]}`, delay: 30 * time.Millisecond})

	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name   string
		opts   vault.Options
		ctx    func(t *testing.T) context.Context
		secret string
		code   string
		reason string
		cause  error
	}{
		{"slow server hits Timeout", vault.Options{Timeout: 50 * time.Millisecond}, nil, "SLOW", core.CodeCredentialUnavailable, vault.ReasonTimeout, context.DeadlineExceeded},
		{"retries stop at Timeout", fast(vault.Options{Timeout: 100 * time.Millisecond, MaxRetries: 100}), nil, "SLOW_503", core.CodeCredentialUnavailable, "", nil},
		{"context cancelled before", vault.Options{}, func(*testing.T) context.Context { return cancelled }, "SLOW", core.CodeRunCancelled, "", context.Canceled},
		{"context cancelled during", vault.Options{}, func(t *testing.T) context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(50*time.Millisecond, cancel)
			t.Cleanup(cancel)
			return ctx
		}, "SLOW", core.CodeRunCancelled, "", context.Canceled},
		{"caller's deadline is the caller's", vault.Options{}, func(t *testing.T) context.Context {
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			t.Cleanup(cancel)
			return ctx
		}, "SLOW", core.CodeRunCancelled, "", context.DeadlineExceeded},
		{"a bad name is reported before a cancelled context", vault.Options{}, func(*testing.T) context.Context { return cancelled }, "a/b", core.CodeInvalidCredentialName, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tt.opts
			o.Address, o.Token, o.Mount = f.srv.URL, testToken, "kv"
			p := mustNew(t, o)
			ctx := context.Background()
			if tt.ctx != nil {
				ctx = tt.ctx(t)
			}
			start := time.Now()
			_, err := p.Get(ctx, tt.secret)
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("Get took %s", d)
			}
			be := breadErr(t, err, tt.code, tt.reason)
			if tt.name == "retries stop at Timeout" {
				// Either the last 503 or the deadline, whichever the client
				// met first; never a hang.
				if r := be.Context["reason"]; r != vault.ReasonTimeout && r != vault.ReasonVaultError {
					t.Errorf("reason %v", r)
				}
			}
			if tt.cause != nil && !errors.Is(err, tt.cause) {
				t.Errorf("errors.Is(%v, %v) is false", err, tt.cause)
			}
			if core.AsBreadError(err, core.CodeToolError).Code != tt.code {
				t.Errorf("core.AsBreadError changed the code")
			}
		})
	}
}

func TestConcurrentGets(t *testing.T) {
	f := newFakeVault(t, "kv")
	for i := range 8 {
		k := fmt.Sprintf("KEY_%d", i)
		f.put(k, map[string]any{k: fmt.Sprint(i)})
	}
	p := mustNew(t, vault.Options{Address: f.srv.URL, Token: testToken, Mount: "kv"})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 20 {
				k := fmt.Sprintf("KEY_%d", i)
				if got, err := p.Get(context.Background(), k); err != nil || got != fmt.Sprint(i) {
					t.Errorf("Get(%s) = %q, %v", k, got, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestNothingCached: a rotated secret is read at once.
func TestNothingCached(t *testing.T) {
	f := newFakeVault(t, "kv")
	f.put("API_KEY", map[string]any{"API_KEY": "v1"})
	p := mustNew(t, vault.Options{Address: f.srv.URL, Token: testToken, Mount: "kv"})
	for _, want := range []string{"v1", "v2"} {
		f.put("API_KEY", map[string]any{"API_KEY": want})
		if got, err := p.Get(context.Background(), "API_KEY"); err != nil || got != want {
			t.Fatalf("Get = %q, %v; want %q", got, err, want)
		}
	}
}

// TestScopedInCore: the provider slots into core's credential plumbing.
func TestScopedInCore(t *testing.T) {
	f := newFakeVault(t, "kv")
	f.put("API_KEY", map[string]any{"API_KEY": "v"})
	p := mustNew(t, vault.Options{Address: f.srv.URL, Token: testToken, Mount: "kv"})
	scoped := core.ScopedCredentials(p, []string{"API_KEY"})
	if got, err := scoped.Get(context.Background(), "API_KEY"); err != nil || got != "v" {
		t.Fatalf("Get = %q, %v", got, err)
	}
	_, err := scoped.Get(context.Background(), "OTHER")
	breadErr(t, err, core.CodeCredentialNotDeclared, "")
}
