package server_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/server"
)

func TestHostGuard(t *testing.T) {
	f := newFixture(t, fakeConfig{})
	ts := f.serve(t, server.Options{})
	cases := []struct {
		host string
		ok   bool
	}{
		{"localhost", true}, {"localhost:3000", true}, {"LOCALHOST:80", true},
		{"127.0.0.1", true}, {"127.0.0.1:8080", true},
		{"::1", true}, {"[::1]", true}, {"[::1]:3000", true},
		{"127.0.0.2", true}, {"127.0.0.2:3000", true}, {"127.255.255.254:80", true}, // start -H 127.0.0.2
		{"localhost.", false}, {"localhost.:3000", false}, {"127.1", false}, {"0x7f.0.0.1", false}, {"127.000.0.1", false},
		{"128.0.0.1", false}, {"::ffff:127.0.0.1", false}, {"[::ffff:127.0.0.1]:3000", false}, {"126.255.255.255", false},
		{"0.0.0.0", false}, {"0.0.0.0:3000", false}, {"::", false}, {"[::]:3000", false},
		{"example.com", false}, {"localhost.example.com", false}, {"evil.com:80", false},
		{"localhost:", false}, {"localhost:abc", false}, {"localhost:99999", false},
		{"[::1]x", false}, {"[::1", false}, {"[::1]:", false}, {"127.0.0.1:3000:1", false},
	}
	for _, c := range cases {
		r := do(t, ts.URL, "GET", "/agents", "", "Host", c.host)
		if c.ok && r.status != 200 {
			t.Errorf("Host %q = %d %s, want 200", c.host, r.status, r.body)
		}
		if !c.ok && (r.status != 403 || string(r.body) != server.ForbiddenBody) {
			t.Errorf("Host %q = %d %s, want 403", c.host, r.status, r.body)
		}
	}
	// X-Forwarded-Host never helps, and never hurts.
	if r := do(t, ts.URL, "GET", "/agents", "", "Host", "evil.com", "X-Forwarded-Host", "localhost"); r.status != 403 {
		t.Errorf("X-Forwarded-Host admitted a request: %d", r.status)
	}
	if r := do(t, ts.URL, "GET", "/agents", "", "Host", "localhost", "X-Forwarded-Host", "evil.com"); r.status != 200 {
		t.Errorf("X-Forwarded-Host refused a request: %d", r.status)
	}
}

// allowList authorizes actions for subject "alice" and, for bob, only reads
// of agent "writer".
func allowList(calls *[]string) core.AuthorizeFunc {
	return func(_ context.Context, id *core.AuthIdentity, action string, args map[string]string) bool {
		*calls = append(*calls, action+" "+args["id"]+" "+args["q"])
		if id == nil {
			return false
		}
		if id.Subject == "alice" {
			return true
		}
		return action == core.ActionAgentRead && args["id"] == "writer"
	}
}

func TestAuthMatrix(t *testing.T) {
	var calls []string
	plugin := routesPlugin{"extras", func(r core.Router) {
		r.Handle("", "GET", "/unnamed", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(204) }))
		r.Handle("extras.any", "*", "/any", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(204) }))
	}}

	t.Run("no auth: loopback Host passes, authorize is never called", func(t *testing.T) {
		calls = nil
		f := newFixture(t, fakeConfig{Plugins: []core.BreadPlugin{plugin}})
		ts := f.serve(t, server.Options{Auth: &server.Auth{Authorize: allowList(&calls)}})
		for _, p := range []string{"/agents", "/unnamed", "/any"} {
			if r := do(t, ts.URL, "GET", p, ""); r.status/100 != 2 {
				t.Fatalf("GET %s = %d %s", p, r.status, r.body)
			}
		}
		if len(calls) != 0 {
			t.Fatalf("authorize called without auth: %v", calls)
		}
	})

	for _, how := range []string{"options", "plugin"} {
		t.Run("auth via "+how, func(t *testing.T) {
			calls = nil
			cfg := fakeConfig{Plugins: []core.BreadPlugin{plugin}}
			auth := &server.Auth{Authorize: allowList(&calls)}
			if how == "plugin" {
				cfg.Plugins = append(cfg.Plugins, server.AuthPlugin(headerAuth{}))
			} else {
				auth.Strategies = []core.BreadAuthStrategy{headerAuth{}}
			}
			f := newFixture(t, cfg)
			ts := f.serve(t, server.Options{Auth: auth})

			if r := do(t, ts.URL, "GET", "/agents", ""); r.status != 401 || r.errorCode(t) != core.CodeUnauthorized {
				t.Fatalf("anonymous = %d %s", r.status, r.body)
			}
			if r := do(t, ts.URL, "GET", "/agents", "", "X-Identity", "alice", "Host", "example.com"); r.status != 200 {
				t.Fatalf("alice on a public Host = %d %s (the host guard is off with auth)", r.status, r.body)
			}
			if r := do(t, ts.URL, "GET", "/agents", "", "X-Identity", "bob"); r.status != 403 || string(r.body) != server.ForbiddenBody {
				t.Fatalf("bob lists agents = %d %s", r.status, r.body)
			}
			if r := do(t, ts.URL, "GET", "/agents/writer", "", "X-Identity", "bob"); r.status != 200 {
				t.Fatalf("bob reads writer = %d %s", r.status, r.body)
			}
			if r := do(t, ts.URL, "GET", "/agents/analyst", "", "X-Identity", "bob"); r.status != 403 {
				t.Fatalf("bob reads analyst = %d %s", r.status, r.body)
			}
			// A query parameter cannot impersonate a path parameter.
			if r := do(t, ts.URL, "GET", "/agents/analyst?id=writer", "", "X-Identity", "bob"); r.status != 403 {
				t.Fatalf("bob with ?id=writer = %d %s", r.status, r.body)
			}
			// Streaming routes are named too.
			if r := do(t, ts.URL, "POST", "/agents/writer/run", "{}", "X-Identity", "bob"); r.status != 403 {
				t.Fatalf("bob runs = %d %s", r.status, r.body)
			}
			if r := do(t, ts.URL, "POST", "/agents/writer/run", "{}", "X-Identity", "alice"); r.status != 200 || !strings.Contains(string(r.body), `"type":"agent:run:end"`) {
				t.Fatalf("alice runs = %d %s", r.status, r.body)
			}
			// An unnamed plugin route is refused even to alice; a named one is not.
			if r := do(t, ts.URL, "GET", "/unnamed", "", "X-Identity", "alice"); r.status != 403 {
				t.Fatalf("unnamed route = %d %s", r.status, r.body)
			}
			for _, m := range []string{"GET", "POST", "DELETE"} {
				if r := do(t, ts.URL, m, "/any", "", "X-Identity", "alice"); r.status != 204 {
					t.Fatalf("%s /any = %d %s", m, r.status, r.body)
				}
			}
			want := "agent.read analyst "
			found := false
			for _, c := range calls {
				found = found || c == want
			}
			if !found {
				t.Fatalf("authorize calls %q lack %q", calls, want)
			}
			calls = nil
			do(t, ts.URL, "GET", "/sessions?q=1&id=x", "", "X-Identity", "alice")
			if len(calls) != 1 || calls[0] != "session.list x 1" {
				t.Fatalf("args for a query-only route: %q", calls)
			}
		})
	}

	t.Run("auth without authorize refuses every route", func(t *testing.T) {
		f := newFixture(t, fakeConfig{})
		ts := f.serve(t, server.Options{Auth: &server.Auth{Strategies: []core.BreadAuthStrategy{headerAuth{}}}})
		if r := do(t, ts.URL, "GET", "/agents", "", "X-Identity", "alice"); r.status != 403 {
			t.Fatalf("GET /agents = %d %s", r.status, r.body)
		}
	})
}

type failingAuth struct{}

func (failingAuth) Name() string { return "failing" }
func (failingAuth) Authenticate(*http.Request) (*core.AuthIdentity, error) {
	return nil, errors.New("jwks endpoint down")
}

func TestAuthStrategyFailure(t *testing.T) {
	f := newFixture(t, fakeConfig{})
	var calls []string
	ts := f.serve(t, server.Options{Auth: &server.Auth{Strategies: []core.BreadAuthStrategy{failingAuth{}, headerAuth{}}, Authorize: allowList(&calls)}})
	if r := do(t, ts.URL, "GET", "/agents", "", "X-Identity", "alice"); r.status != 200 {
		t.Fatalf("a later strategy authenticates = %d %s", r.status, r.body)
	}
	r := do(t, ts.URL, "GET", "/agents", "")
	if r.status != 500 || r.errorCode(t) != core.CodeInternalError || strings.Contains(string(r.body), "jwks") {
		t.Fatalf("no strategy could check = %d %s", r.status, r.body)
	}
}

func TestListenChecks(t *testing.T) {
	f := newFixture(t, fakeConfig{})
	authorize := func(context.Context, *core.AuthIdentity, string, map[string]string) bool { return true }
	strategies := []core.BreadAuthStrategy{headerAuth{}}
	cases := []struct {
		name     string
		auth     *server.Auth
		host     string
		refusing bool
	}{
		{"neither, loopback", nil, "127.0.0.1", false},
		{"neither, localhost", nil, "localhost", false},
		{"neither, public", nil, "0.0.0.0", true},
		{"neither, all interfaces v6", nil, "::", true},
		{"neither, a name", nil, "example.internal", true},
		{"authorize only, loopback", &server.Auth{Authorize: authorize}, "127.0.0.1", false},
		{"authorize only, public", &server.Auth{Authorize: authorize}, "0.0.0.0", true},
		{"auth only, loopback", &server.Auth{Strategies: strategies}, "127.0.0.1", true},
		{"auth only, public", &server.Auth{Strategies: strategies}, "0.0.0.0", true},
		{"both, public", &server.Auth{Strategies: strategies, Authorize: authorize}, "0.0.0.0", false},
		{"both, loopback", &server.Auth{Strategies: strategies, Authorize: authorize}, "127.0.0.1", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv, err := server.New(f.inst, server.Options{Host: c.host, Port: freePort(t), Auth: c.auth, ShutdownTimeout: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- srv.ListenAndServe(ctx) }()
			if c.refusing {
				err := <-done
				cancel()
				if !errors.Is(err, &core.BreadError{Code: core.CodeAuthNotConfigured}) {
					t.Fatalf("ListenAndServe = %v, want AUTH_NOT_CONFIGURED", err)
				}
				return
			}
			select {
			case err := <-done:
				cancel()
				t.Fatalf("ListenAndServe returned early: %v", err)
			case <-time.After(50 * time.Millisecond):
			}
			cancel()
			if err := <-done; err != nil {
				t.Fatalf("shutdown: %v", err)
			}
		})
	}
}

func TestServeChecksTheListener(t *testing.T) {
	f := newFixture(t, fakeConfig{})
	srv, err := server.New(f.inst, server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Skip("cannot bind a public address here:", err)
	}
	if err := srv.Serve(context.Background(), ln); !errors.Is(err, &core.BreadError{Code: core.CodeAuthNotConfigured}) {
		t.Fatalf("Serve on a public listener = %v", err)
	}
	if _, err := ln.Accept(); err == nil {
		t.Fatal("Serve left the refused listener open")
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func TestBodyCap(t *testing.T) {
	var seen int
	plugin := routesPlugin{"sink", func(r core.Router) {
		r.Handle("sink.post", "POST", "/sink", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, err := io.ReadAll(r.Body)
			if err != nil {
				w.WriteHeader(500)
				return
			}
			seen = len(b)
			w.WriteHeader(204)
		}))
	}}
	mwCalled := false
	mw := middlewarePlugin{"mw", func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { mwCalled = true; next.ServeHTTP(w, r) })
	}}
	f := newFixture(t, fakeConfig{Plugins: []core.BreadPlugin{plugin, mw}})
	ts := f.serve(t, server.Options{MaxBodyBytes: 1000})

	post := func(body io.Reader, length int64) reply {
		t.Helper()
		req, _ := http.NewRequest("POST", ts.URL+"/sink", body)
		req.ContentLength = length
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return reply{status: res.StatusCode, body: b}
	}
	chunked := func(n int) io.Reader { return io.MultiReader(bytes.NewReader(make([]byte, n))) } // unknown length
	if r := post(bytes.NewReader(make([]byte, 1000)), 1000); r.status != 204 || seen != 1000 {
		t.Fatalf("at the cap = %d, read %d", r.status, seen)
	}
	mwCalled = false
	if r := post(bytes.NewReader(make([]byte, 1001)), 1001); r.status != 413 || r.errorCode(t) != core.CodeBodyTooLarge || mwCalled {
		t.Fatalf("over the cap = %d %s (middleware ran: %v)", r.status, r.body, mwCalled)
	}
	if r := post(chunked(1000), -1); r.status != 204 || seen != 1000 {
		t.Fatalf("chunked at the cap = %d, read %d", r.status, seen)
	}
	if r := post(chunked(5000), -1); r.status != 413 || r.errorCode(t) != core.CodeBodyTooLarge {
		t.Fatalf("chunked over the cap = %d %s", r.status, r.body)
	}
	// The cap also covers the streaming routes.
	if r := post(bytes.NewReader(make([]byte, 2<<20)), 2<<20); r.status != 413 {
		t.Fatalf("2 MiB = %d", r.status)
	}
}

func TestDefaultBodyCapIsOneMiB(t *testing.T) {
	f := newFixture(t, fakeConfig{})
	ts := f.serve(t, server.Options{})
	big := strings.Repeat("x", 1<<20+1)
	if r := do(t, ts.URL, "POST", "/agents/writer/run", big); r.status != 413 || r.errorCode(t) != core.CodeBodyTooLarge {
		t.Fatalf("1 MiB + 1 = %d %s", r.status, r.body)
	}
	if r := do(t, ts.URL, "POST", "/agents/writer/run", big[:1<<20]); r.status != 200 {
		t.Fatalf("1 MiB = %d", r.status)
	}
}

type middlewarePlugin struct {
	name string
	mw   func(http.Handler) http.Handler
}

func (p middlewarePlugin) Name() string                           { return p.name }
func (p middlewarePlugin) Middleware(h http.Handler) http.Handler { return p.mw(h) }

func TestPluginMiddlewareWrapsEveryRouteInOrder(t *testing.T) {
	var order []string
	mk := func(name string) middlewarePlugin {
		return middlewarePlugin{name, func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				order = append(order, name)
				next.ServeHTTP(w, r)
			})
		}}
	}
	f := newFixture(t, fakeConfig{Plugins: []core.BreadPlugin{mk("first"), mk("second")}})
	ts := f.serve(t, server.Options{})
	for _, p := range []string{"/agents", "/nowhere"} {
		order = nil
		do(t, ts.URL, "GET", p, "")
		if strings.Join(order, ",") != "first,second" {
			t.Fatalf("GET %s middleware order %v", p, order)
		}
	}
	order = nil
	do(t, ts.URL, "POST", "/agents/writer/run", "{}")
	if strings.Join(order, ",") != "first,second" {
		t.Fatalf("streaming route middleware order %v", order)
	}
}
