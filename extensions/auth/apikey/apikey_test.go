package apikey_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/extensions/auth/apikey"
)

func request(h ...string) *http.Request {
	r, _ := http.NewRequest("GET", "http://x/agents", nil)
	for i := 0; i+1 < len(h); i += 2 {
		r.Header.Set(h[i], h[i+1])
	}
	return r
}

func TestStrategy(t *testing.T) {
	creds := core.CredentialFunc(func(_ context.Context, name string) (string, error) {
		if name == "API_KEY" {
			return "from-vault", nil
		}
		return "", errors.New("no such secret")
	})
	cases := []struct {
		name    string
		opts    apikey.Options
		header  []string
		subject string // "" is no identity
	}{
		{"raw header", apikey.Options{Header: "x-api-key", Keys: []string{"k1", "k2"}}, []string{"X-Api-Key", "k2"}, "api-key"},
		{"unknown key", apikey.Options{Header: "x-api-key", Keys: []string{"k1"}}, []string{"X-Api-Key", "nope"}, ""},
		{"missing header", apikey.Options{Header: "x-api-key", Keys: []string{"k1"}}, nil, ""},
		{"prefix of a key", apikey.Options{Header: "x-api-key", Keys: []string{"k1-long"}}, []string{"X-Api-Key", "k1"}, ""},
		{"bearer", apikey.Options{Scheme: "Bearer", Keys: []string{"secret"}}, []string{"Authorization", "Bearer secret"}, "api-key"},
		{"scheme is case-insensitive", apikey.Options{Scheme: "Bearer", Keys: []string{"secret"}}, []string{"Authorization", "bearer secret"}, "api-key"},
		{"key without the scheme", apikey.Options{Scheme: "Bearer", Keys: []string{"secret"}}, []string{"Authorization", "secret"}, ""},
		{"other scheme", apikey.Options{Scheme: "Bearer", Keys: []string{"secret"}}, []string{"Authorization", "Basic secret"}, ""},
		{"scheme and nothing", apikey.Options{Scheme: "Bearer", Keys: []string{"secret"}}, []string{"Authorization", "Bearer "}, ""},
		{"identities", apikey.Options{Identities: map[string]core.AuthIdentity{"ka": {Subject: "alice"}, "kb": {Subject: "bob"}}}, []string{"Authorization", "kb"}, "bob"},
		{"credential provider", apikey.Options{Credentials: creds, CredentialName: "API_KEY", Subject: "svc"}, []string{"Authorization", "from-vault"}, "svc"},
		{"credential provider, wrong key", apikey.Options{Credentials: creds, CredentialName: "API_KEY"}, []string{"Authorization", "k1"}, ""},
		{"keys and provider", apikey.Options{Keys: []string{"k1"}, Credentials: creds, CredentialName: "API_KEY"}, []string{"Authorization", "k1"}, "api-key"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := apikey.Strategy(c.opts)
			if err != nil {
				t.Fatal(err)
			}
			id, err := s.Authenticate(request(c.header...))
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case c.subject == "" && id != nil:
				t.Fatalf("authenticated as %q", id.Subject)
			case c.subject != "" && (id == nil || id.Subject != c.subject):
				t.Fatalf("identity %+v, want %q", id, c.subject)
			}
		})
	}
}

func TestStrategyProviderFailureIsAnError(t *testing.T) {
	s, err := apikey.Strategy(apikey.Options{Credentials: core.CredentialFunc(func(context.Context, string) (string, error) {
		return "", errors.New("vault sealed")
	}), CredentialName: "API_KEY"})
	if err != nil {
		t.Fatal(err)
	}
	if id, err := s.Authenticate(request("Authorization", "k")); id != nil || err == nil {
		t.Fatalf("Authenticate = %v, %v", id, err)
	}
	// No key presented: nothing to check, no error.
	if id, err := s.Authenticate(request()); id != nil || err != nil {
		t.Fatalf("no key = %v, %v", id, err)
	}
}

func TestOptionsAreValidated(t *testing.T) {
	for name, o := range map[string]apikey.Options{
		"no keys":            {},
		"bad header":         {Header: "x api key", Keys: []string{"k"}},
		"bad scheme":         {Scheme: "Bearer x", Keys: []string{"k"}},
		"empty key":          {Keys: []string{" "}},
		"provider, no name":  {Credentials: core.CredentialFunc(nil)},
		"name, no provider":  {CredentialName: "K", Keys: []string{"k"}},
		"empty identity key": {Identities: map[string]core.AuthIdentity{"": {Subject: "x"}}},
	} {
		if _, err := apikey.Strategy(o); !errors.Is(err, &core.BreadError{Code: core.CodeInvalidConfig}) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := apikey.Signer(apikey.Options{Identities: map[string]core.AuthIdentity{"k": {}}}); err == nil {
		t.Error("a signer with only identities has no key to pick")
	}
}

func TestSigner(t *testing.T) {
	s, err := apikey.Signer(apikey.Options{Scheme: "Bearer", Keys: []string{"secret", "other"}})
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	if err := s.Sign(context.Background(), h); err != nil || h.Get("Authorization") != "Bearer secret" {
		t.Fatalf("Sign: %q %v", h.Get("Authorization"), err)
	}
	raw, _ := apikey.Signer(apikey.Options{Header: "x-api-key", Credentials: core.CredentialFunc(func(context.Context, string) (string, error) { return "v1", nil }), CredentialName: "K"})
	h = http.Header{}
	if err := raw.Sign(context.Background(), h); err != nil || h.Get("X-Api-Key") != "v1" {
		t.Fatalf("raw Sign: %v %v", h, err)
	}
	// A signed request authenticates against the same options.
	opts := apikey.Options{Scheme: "Bearer", Keys: []string{"secret"}}
	st, _ := apikey.Strategy(opts)
	r := request()
	_ = s.Sign(context.Background(), r.Header)
	if id, _ := st.Authenticate(r); id == nil {
		t.Fatal("a signed request did not authenticate")
	}
	empty, _ := apikey.Signer(apikey.Options{Credentials: core.CredentialFunc(func(context.Context, string) (string, error) { return "", nil }), CredentialName: "K"})
	if err := empty.Sign(context.Background(), http.Header{}); err == nil {
		t.Fatal("signing with an empty key succeeded")
	}
}

func BenchmarkAuthenticate(b *testing.B) {
	keys := make([]string, 100)
	for i := range keys {
		keys[i] = "key-number-" + string(rune('a'+i%26)) + string(rune('a'+i/26))
	}
	s, _ := apikey.Strategy(apikey.Options{Scheme: "Bearer", Keys: keys})
	r := request("Authorization", "Bearer "+keys[50])
	b.ReportAllocs()
	for b.Loop() {
		if id, _ := s.Authenticate(r); id == nil {
			b.Fatal("no identity")
		}
	}
}
