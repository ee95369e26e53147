package trusted_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/extensions/auth/trusted"
)

func request(peer string, hdr ...string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/agents", nil)
	r.RemoteAddr = peer
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Add(hdr[i], hdr[i+1])
	}
	return r
}

func strategy(t *testing.T, o trusted.Options) *trusted.Authenticator {
	t.Helper()
	s, err := trusted.Strategy(o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func isRejection(err error) bool {
	return errors.Is(err, &core.BreadError{Code: core.CodeUnauthorized})
}

func TestPeers(t *testing.T) {
	s := strategy(t, trusted.Options{Proxies: []string{"10.0.0.0/8", "192.0.2.7", "fd00::/8"}, Claims: map[string]string{"email": "X-Forwarded-Email"}})
	hdr := []string{"X-Forwarded-User", "alice", "X-Forwarded-Groups", "eng, ops,,eng", "X-Forwarded-Groups", "admins", "X-Forwarded-Email", "alice@example.test"}
	for _, c := range []struct {
		peer    string
		trusted bool
	}{
		{"10.1.2.3:4567", true},
		{"192.0.2.7:80", true},
		{"192.0.2.8:80", false},
		{"[::ffff:10.9.9.9]:1", true}, // an IPv4 peer on a dual-stack socket
		{"[fd12::1]:443", true},
		{"[fe80::1%eth0]:443", false},
		{"127.0.0.1:1", false},
		{"", false},
		{"garbage", false},
	} {
		t.Run(c.peer, func(t *testing.T) {
			r := request(c.peer, hdr...)
			id, err := s.Authenticate(r)
			if err != nil {
				t.Fatal(err)
			}
			if !c.trusted {
				if id != nil {
					t.Fatalf("untrusted peer authenticated as %+v", id)
				}
				for _, h := range []string{"X-Forwarded-User", "X-Forwarded-Groups", "X-Forwarded-Email"} {
					if r.Header.Get(h) != "" {
						t.Errorf("%s not stripped", h)
					}
				}
				return
			}
			if id == nil || id.Subject != "alice" || id.Claims["email"] != "alice@example.test" {
				t.Fatalf("identity %+v", id)
			}
			if g := id.Claims["groups"].([]string); !slices.Equal(g, []string{"eng", "ops", "admins"}) {
				t.Errorf("groups %v", g)
			}
		})
	}
}

func TestMalformedHeadersFromATrustedPeer(t *testing.T) {
	s := strategy(t, trusted.Options{Proxies: []string{"10.0.0.0/8"}, GroupsSeparator: ";"})
	peer := "10.0.0.1:1"
	cases := map[string]struct {
		hdr  []string
		want string // "pass", "reject" or a subject
	}{
		"no user":            {nil, "pass"},
		"empty user":         {[]string{"X-Forwarded-User", "  "}, "pass"},
		"two users":          {[]string{"X-Forwarded-User", "alice", "X-Forwarded-User", "root"}, "reject"},
		"control character":  {[]string{"X-Forwarded-User", "alice\x01"}, "reject"},
		"invalid UTF-8":      {[]string{"X-Forwarded-User", "al\xffice"}, "reject"},
		"user too long":      {[]string{"X-Forwarded-User", strings.Repeat("a", trusted.MaxUserBytes+1)}, "reject"},
		"too many groups":    {[]string{"X-Forwarded-User", "a", "X-Forwarded-Groups", strings.Repeat("g;", 0) + manyGroups(trusted.MaxGroups+1)}, "reject"},
		"groups too large":   {[]string{"X-Forwarded-User", "a", "X-Forwarded-Groups", strings.Repeat("g", trusted.MaxGroupsBytes+1)}, "reject"},
		"separator honoured": {[]string{"X-Forwarded-User", "bob", "X-Forwarded-Groups", "a,b;c"}, "bob"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			id, err := s.Authenticate(request(peer, c.hdr...))
			switch {
			case c.want == "pass" && (id != nil || err != nil):
				t.Fatalf("%v %v, want a pass", id, err)
			case c.want == "reject" && !isRejection(err):
				t.Fatalf("%v %v, want a rejection", id, err)
			case c.want != "pass" && c.want != "reject" && (id == nil || id.Subject != c.want):
				t.Fatalf("%v %v, want %s", id, err, c.want)
			}
		})
	}
	id, _ := s.Authenticate(request(peer, "X-Forwarded-User", "bob", "X-Forwarded-Groups", "a,b;c"))
	if g := id.Claims["groups"].([]string); !slices.Equal(g, []string{"a,b", "c"}) {
		t.Errorf("groups %v", g)
	}
}

func manyGroups(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString("g")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString(string(rune('a' + i%26)))
		b.WriteString(string(rune('a' + i/26)))
		b.WriteString(";")
	}
	return b.String()
}

// TestOverRealConnections serves the strategy on loopback TCP and on a Unix
// socket: the peer, not a header, decides.
func TestOverRealConnections(t *testing.T) {
	whoami := func(s *trusted.Authenticator) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			id, err := s.Authenticate(r)
			switch {
			case err != nil:
				http.Error(w, err.Error(), http.StatusUnauthorized)
			case id == nil:
				_, _ = io.WriteString(w, "anonymous; header left: "+r.Header.Get("X-Forwarded-User"))
			default:
				_, _ = io.WriteString(w, id.Subject+" via "+id.Claims["peer"].(string))
			}
		})
	}
	get := func(t *testing.T, c *http.Client, url string) string {
		t.Helper()
		req, _ := http.NewRequest("GET", url, nil)
		req.Header.Set("X-Forwarded-User", "alice")
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return string(b)
	}

	loopback := httptest.NewServer(whoami(strategy(t, trusted.Options{Proxies: []string{"127.0.0.0/8"}})))
	defer loopback.Close()
	if got := get(t, loopback.Client(), loopback.URL); got != "alice via 127.0.0.1" {
		t.Errorf("trusted loopback: %q", got)
	}
	elsewhere := httptest.NewServer(whoami(strategy(t, trusted.Options{Proxies: []string{"10.0.0.0/8"}, UnixSocket: true})))
	defer elsewhere.Close()
	if got := get(t, elsewhere.Client(), elsewhere.URL); got != "anonymous; header left: " {
		t.Errorf("untrusted loopback: %q", got)
	}

	sock := filepath.Join(t.TempDir(), "bread.sock")
	for _, c := range []struct {
		unix bool
		want string
	}{{true, "alice via unix"}, {false, "anonymous; header left: "}} {
		ln, err := net.Listen("unix", sock)
		if err != nil {
			t.Skipf("no Unix sockets here: %v", err)
		}
		srv := &http.Server{Handler: whoami(strategy(t, trusted.Options{Proxies: []string{"10.0.0.0/8"}, UnixSocket: c.unix}))}
		go func() { _ = srv.Serve(ln) }()
		client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		}}}
		if got := get(t, client, "http://bread/agents"); got != c.want {
			t.Errorf("unix socket, UnixSocket=%v: %q", c.unix, got)
		}
		_ = srv.Close()
	}
}

func TestScrub(t *testing.T) {
	s := strategy(t, trusted.Options{Proxies: []string{"10.0.0.0/8"}})
	r := request("203.0.113.5:1", "X-Forwarded-User", "root", "X-Forwarded-Groups", "admins", "Authorization", "Bearer x")
	s.Scrub(r)
	if r.Header.Get("X-Forwarded-User") != "" || r.Header.Get("X-Forwarded-Groups") != "" || r.Header.Get("Authorization") == "" {
		t.Errorf("after Scrub: %v", r.Header)
	}
	r = request("10.0.0.5:1", "X-Forwarded-User", "alice")
	s.Scrub(r)
	if r.Header.Get("X-Forwarded-User") != "alice" {
		t.Error("Scrub stripped a trusted peer's header")
	}
}

func TestOptionsAreValidated(t *testing.T) {
	for name, o := range map[string]trusted.Options{
		"no peer":           {},
		"every IPv4 peer":   {Proxies: []string{"0.0.0.0/0"}},
		"every IPv6 peer":   {Proxies: []string{"::/0"}},
		"not a CIDR":        {Proxies: []string{"10.0.0.0/33"}},
		"not an address":    {Proxies: []string{"proxy.internal"}},
		"Authorization":     {Proxies: []string{"10.0.0.1"}, UserHeader: "authorization"},
		"Cookie as a claim": {Proxies: []string{"10.0.0.1"}, Claims: map[string]string{"c": "Cookie"}},
		"a header twice":    {Proxies: []string{"10.0.0.1"}, GroupsHeader: "X-Forwarded-User"},
		"bad header name":   {Proxies: []string{"10.0.0.1"}, UserHeader: "X User"},
		"groups as a claim": {Proxies: []string{"10.0.0.1"}, Claims: map[string]string{"groups": "X-G"}},
	} {
		if _, err := trusted.Strategy(o); !errors.Is(err, &core.BreadError{Code: core.CodeInvalidConfig}) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := trusted.Strategy(trusted.Options{UnixSocket: true}); err != nil {
		t.Errorf("Unix socket only: %v", err)
	}
}

// FuzzHeaders: whatever a trusted proxy sends, the strategy never panics,
// never fails to check, and an accepted subject is the header's value.
func FuzzHeaders(f *testing.F) {
	f.Add("alice", "eng,ops")
	f.Add("", "")
	f.Add("a\x00b", "x,,y")
	f.Add(" bob ", strings.Repeat(",", 300))
	f.Add("\xff", "\xfe")
	s, err := trusted.Strategy(trusted.Options{Proxies: []string{"10.0.0.0/8"}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, user, groups string) {
		r := request("10.0.0.1:1")
		r.Header["X-Forwarded-User"] = []string{user}
		r.Header["X-Forwarded-Groups"] = []string{groups}
		id, err := s.Authenticate(r)
		if err != nil && !isRejection(err) {
			t.Fatalf("failure %v", err)
		}
		if id != nil && id.Subject != strings.TrimSpace(user) {
			t.Fatalf("subject %q from %q", id.Subject, user)
		}
		// From an untrusted peer, never an identity.
		r = request("192.0.2.1:1")
		r.Header["X-Forwarded-User"] = []string{user}
		if id, err := s.Authenticate(r); id != nil || err != nil {
			t.Fatalf("untrusted peer: %v %v", id, err)
		}
	})
}
