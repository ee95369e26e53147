package vault_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/extensions/credentials/vault"
	"github.com/hashicorp/vault/api"
)

// recorder is a transport that remembers the request URL and answers 404,
// so names can be fuzzed without a server.
type recorder struct {
	mu   sync.Mutex
	urls []string
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.urls = append(r.urls, req.URL.String())
	r.mu.Unlock()
	return &http.Response{
		StatusCode: http.StatusNotFound,
		Header:     http.Header{"Content-Type": {"application/json"}},
		Body:       io.NopCloser(strings.NewReader(`{"errors":[]}`)),
		Request:    req,
	}, nil
}

func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	u := r.urls
	r.urls = nil
	return u
}

func recordingProvider(t testing.TB) (*vault.Provider, *recorder) {
	rec := &recorder{}
	c, err := api.NewClient(&api.Config{Address: "http://vault.test:8200", HttpClient: &http.Client{Transport: rec}, MaxRetries: 0})
	if err != nil {
		t.Fatal(err)
	}
	p, err := vault.New(vault.Options{Client: c, Mount: "kv"})
	if err != nil {
		t.Fatal(err)
	}
	return p, rec
}

// nameCases seed the fuzzer and run as a table: a name is valid iff it is
// letters, digits, '_' or '-', starting with a letter.
var nameCases = []struct {
	name  string
	valid bool
}{
	{"SEARCH_API_KEY", true},
	{"a", true},
	{"Z9", true},
	{"api-key_2", true},
	{"", false},
	{"1abc", false},
	{"_x", false},
	{"-x", false},
	{"a/b", false},
	{"..", false},
	{"a/../b", false},
	{"a?b=c", false},
	{"a#b", false},
	{"a%2Fb", false},
	{"a b", false},
	{"a\tb", false},
	{"a\nb", false},
	{"a.b", false},
	{"é", false},
	{"aé", false},
	{"a\x00", false},
	{"A\u200b", false},
}

func checkName(t *testing.T, p *vault.Provider, rec *recorder, name string) (valid bool) {
	t.Helper()
	_, err := p.Get(context.Background(), name)
	var be *core.BreadError
	if !errors.As(err, &be) {
		t.Fatalf("Get(%q) = %v, want a BreadError", name, err)
	}
	urls := rec.take()
	switch be.Code {
	case core.CodeInvalidCredentialName:
		if len(urls) != 0 {
			t.Fatalf("Get(%q) was rejected but sent %v", name, urls)
		}
		return false
	case core.CodeCredentialUnavailable:
		// Accepted: exactly one request, to exactly /v1/kv/data/{name}.
		want := "http://vault.test:8200/v1/kv/data/" + name
		if len(urls) != 1 || urls[0] != want {
			t.Fatalf("Get(%q) sent %v, want [%s]", name, urls, want)
		}
		for _, r := range name {
			ok := r == '_' || r == '-' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
			if !ok {
				t.Fatalf("Get(%q) accepted the rune %q", name, r)
			}
		}
		if c := name[0]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			t.Fatalf("Get(%q) accepted a name not starting with a letter", name)
		}
		return true
	default:
		t.Fatalf("Get(%q): unexpected code %s (%v)", name, be.Code, err)
		return false
	}
}

func TestNames(t *testing.T) {
	p, rec := recordingProvider(t)
	for _, tt := range nameCases {
		if got := checkName(t, p, rec, tt.name); got != tt.valid {
			t.Errorf("name %q: valid %v, want %v", tt.name, got, tt.valid)
		}
	}
}

// FuzzNames: no name makes the provider request anything but
// /v1/{mount}/data/{name}, and only well-formed names are requested at all.
func FuzzNames(f *testing.F) {
	for _, tt := range nameCases {
		f.Add(tt.name)
	}
	p, rec := recordingProvider(f)
	f.Fuzz(func(t *testing.T, name string) {
		checkName(t, p, rec, name)
	})
}
