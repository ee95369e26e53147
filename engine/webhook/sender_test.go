package webhook_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/engine/webhook"
)

// receiver answers each delivery with the next status of its script (the
// last one repeated) and keeps what it received.
type receiver struct {
	*httptest.Server
	mu       sync.Mutex
	script   []int
	got      []*http.Request
	bodies   [][]byte
	arrivals chan struct{}
}

func newReceiver(t *testing.T, script ...int) *receiver {
	r := &receiver{script: script, arrivals: make(chan struct{}, 100)}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		n := len(r.got)
		r.got = append(r.got, req)
		r.bodies = append(r.bodies, body)
		status := r.script[min(n, len(r.script)-1)]
		r.mu.Unlock()
		w.WriteHeader(status)
		r.arrivals <- struct{}{}
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) requests() ([]*http.Request, [][]byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.got, r.bodies
}

func TestSendRetriesWhatMaySucceed(t *testing.T) {
	cases := []struct {
		name     string
		script   []int
		attempts int
		ok       bool
	}{
		{"accepted at once", []int{http.StatusNoContent}, 1, true},
		{"a 500, then accepted", []int{500, 200}, 2, true},
		{"429 twice, then accepted", []int{429, 429, 202}, 3, true},
		{"a 400 is final", []int{400, 200}, 1, false},
		{"a 404 is final", []int{404}, 1, false},
		{"always 503: MaxAttempts", []int{503}, 3, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newReceiver(t, c.script...)
			s := webhook.New(webhook.Options{Secret: "s3cret", AllowPrivateNetworks: true, MaxAttempts: 3, Backoff: time.Millisecond})
			defer s.Close()
			body := []byte(`{"id":"run-1"}`)
			attempts, err := s.Send(t.Context(), webhook.Delivery{URL: r.URL + "/hook", Body: body, Header: http.Header{"X-Token": {"tok"}}})
			if attempts != c.attempts || c.ok != (err == nil) {
				t.Fatalf("Send = %d attempts, %v; want %d, ok=%v", attempts, err, c.attempts, c.ok)
			}
			reqs, bodies := r.requests()
			if len(reqs) != c.attempts {
				t.Fatalf("the receiver saw %d requests, want %d", len(reqs), c.attempts)
			}
			for i, req := range reqs {
				if err := webhook.Verify("s3cret", req.Header.Get(webhook.SignatureHeader), bodies[i], time.Now(), time.Minute); err != nil {
					t.Fatalf("attempt %d: %v", i+1, err)
				}
				if req.Header.Get("X-Token") != "tok" || req.Header.Get("Content-Type") != "application/json" || req.Method != http.MethodPost {
					t.Fatalf("attempt %d: %s with headers %v", i+1, req.Method, req.Header)
				}
			}
		})
	}
}

func TestCheckRefusesWhatItWouldNotCall(t *testing.T) {
	creds := core.CredentialFunc(func(_ context.Context, name string) (string, error) {
		if name == "HOOK_SECRET" {
			return "rotating", nil
		}
		return "", errors.New("no such credential")
	})
	cases := []struct {
		name   string
		opts   webhook.Options
		target string
		ok     bool
	}{
		{"a public https URL", webhook.Options{}, "https://hooks.example.com/x", true},
		{"not a URL with a host", webhook.Options{}, "https:///x", false},
		{"ftp", webhook.Options{}, "ftp://example.com/x", false},
		{"credentials in the URL", webhook.Options{}, "https://u:p@example.com/x", false},
		{"localhost", webhook.Options{}, "http://localhost:8080/x", false},
		{"a subdomain of localhost", webhook.Options{}, "http://a.localhost/x", false},
		{"loopback", webhook.Options{}, "http://127.0.0.1/x", false},
		{"metadata service", webhook.Options{}, "http://169.254.169.254/latest", false},
		{"private v6", webhook.Options{}, "http://[fd00::1]/x", false},
		{"loopback, private allowed", webhook.Options{AllowPrivateNetworks: true}, "http://127.0.0.1/x", true},
		{"an allowed host", webhook.Options{AllowHosts: []string{"*.example.com"}}, "https://a.example.com/x", true},
		{"a host outside the list", webhook.Options{AllowHosts: []string{"*.example.com"}}, "https://example.org/x", false},
		{"a readable secret credential", webhook.Options{SecretCredential: "HOOK_SECRET", Credentials: creds}, "https://example.com/x", true},
		{"an unreadable secret credential", webhook.Options{SecretCredential: "MISSING", Credentials: creds}, "https://example.com/x", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := webhook.New(c.opts)
			defer s.Close()
			_, err := s.Check(t.Context(), c.target)
			if c.ok != (err == nil) {
				t.Fatalf("Check(%q) = %v, want ok=%v", c.target, err, c.ok)
			}
			var be *core.BreadError
			if err != nil && (!errors.As(err, &be) || be.Code != core.CodeValidationError || be.Context["webhook"] != c.target) {
				t.Fatalf("Check(%q) = %#v, want a VALIDATION_ERROR naming the target", c.target, err)
			}
			if !c.ok && c.opts.SecretCredential == "" {
				// Send refuses what Check refuses, before any attempt (a
				// credential aside: Send reads it per attempt).
				if n, err := s.Send(t.Context(), webhook.Delivery{URL: c.target}); n != 0 || err == nil {
					t.Fatalf("Send(%q) = %d attempts, %v; want a refusal before any", c.target, n, err)
				}
			}
		})
	}
}

// A secret named in the credential provider is read at every attempt, so
// a rotated secret signs the next one.
func TestSecretCredentialIsReadPerAttempt(t *testing.T) {
	var mu sync.Mutex
	secret := "first"
	creds := core.CredentialFunc(func(context.Context, string) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		return secret, nil
	})
	r := newReceiver(t, 200)
	s := webhook.New(webhook.Options{SecretCredential: "HOOK_SECRET", Credentials: creds, AllowPrivateNetworks: true})
	defer s.Close()
	for _, want := range []string{"first", "second"} {
		mu.Lock()
		secret = want
		mu.Unlock()
		if _, err := s.Send(t.Context(), webhook.Delivery{URL: r.URL, Body: []byte(want)}); err != nil {
			t.Fatal(err)
		}
	}
	reqs, bodies := r.requests()
	for i, req := range reqs {
		if err := webhook.Verify(string(bodies[i]), req.Header.Get(webhook.SignatureHeader), bodies[i], time.Now(), 0); err != nil {
			t.Fatalf("delivery %d not signed with the secret of its moment: %v", i+1, err)
		}
	}
}

// Without a secret a delivery goes unsigned.
func TestUnsignedWithoutASecret(t *testing.T) {
	r := newReceiver(t, 200)
	s := webhook.New(webhook.Options{AllowPrivateNetworks: true})
	defer s.Close()
	if s.Signed() {
		t.Fatal("Signed() without a secret")
	}
	if _, err := s.Send(t.Context(), webhook.Delivery{URL: r.URL}); err != nil {
		t.Fatal(err)
	}
	if reqs, _ := r.requests(); reqs[0].Header.Get(webhook.SignatureHeader) != "" {
		t.Fatal("an unsigned sender signed")
	}
}

// A Send waiting to retry gives up when the Sender closes or its context
// ends, however long its backoff.
func TestWaitingRetryIsAbandoned(t *testing.T) {
	for _, how := range []string{"close", "cancel"} {
		t.Run(how, func(t *testing.T) {
			r := newReceiver(t, 500)
			s := webhook.New(webhook.Options{AllowPrivateNetworks: true, Backoff: time.Hour})
			defer s.Close()
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			type result struct {
				n   int
				err error
			}
			done := make(chan result, 1)
			go func() {
				n, err := s.Send(ctx, webhook.Delivery{URL: r.URL})
				done <- result{n, err}
			}()
			<-r.arrivals // the first attempt failed; Send waits an hour
			if how == "close" {
				s.Close()
			} else {
				cancel()
			}
			got := <-done
			if got.n != 1 || !errors.Is(got.err, webhook.ErrAbandoned) {
				t.Fatalf("Send = %d attempts, %v; want 1 and ErrAbandoned", got.n, got.err)
			}
		})
	}
}
