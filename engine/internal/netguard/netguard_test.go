package netguard

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"
)

func TestPublic(t *testing.T) {
	for addr, want := range map[string]bool{
		"8.8.8.8": true, "1.1.1.1": true, "2606:4700::1111": true,
		"127.0.0.1": false, "127.9.9.9": false, "::1": false,
		"10.0.0.5": false, "172.16.3.4": false, "192.168.1.1": false, "fd00::1": false,
		"169.254.169.254": false, "fe80::1": false,
		"0.0.0.0": false, "::": false, "0.1.2.3": false,
		"100.64.0.1": false, "224.0.0.1": false, "ff02::1": false, "255.255.255.255": false,
		"::ffff:127.0.0.1": false, "::ffff:169.254.169.254": false, "::ffff:8.8.8.8": true,
		"64:ff9b::a00:1": false, "2002:a00:1::": false, "2001:db8::1": false,
		// The IPv4 documentation ranges, like the IPv6 one, are not the internet.
		"192.0.2.1": false, "198.51.100.7": false, "203.0.113.255": false,
		"192.0.3.1": true, "198.51.101.1": true, "203.0.114.1": true,
	} {
		if got := Public(netip.MustParseAddr(addr)); got != want {
			t.Errorf("Public(%s) = %v, want %v", addr, got, want)
		}
	}
}

func TestHostAllowed(t *testing.T) {
	p := Policy{AllowHosts: []string{"docs.example.com", "*.wiki.org", " Cache.Example.NET. "}}
	for host, want := range map[string]bool{
		"docs.example.com": true, "DOCS.example.com.": true, "evil-docs.example.com": false,
		"en.wiki.org": true, "a.b.wiki.org": true, "wiki.org": false, "notwiki.org": false,
		"cache.example.net": true, "example.com": false, "": false,
	} {
		if got := p.HostAllowed(host); got != want {
			t.Errorf("HostAllowed(%q) = %v, want %v", host, got, want)
		}
	}
	if (Policy{}).HostAllowed("example.com") {
		t.Error("an empty allow-list allows nothing")
	}
	if !(Policy{AllowHosts: []string{"*"}}).HostAllowed("anything.test") {
		t.Error(`"*" allows every host`)
	}
}

func TestClientRefusesTheMachinesOwnNetwork(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("secret")) }))
	defer srv.Close()
	// The host is allowed, but it resolves to loopback.
	c := Client(Policy{AllowHosts: []string{"127.0.0.1", "localhost"}}, 5*time.Second)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	for _, u := range []string{srv.URL, "http://localhost:" + port} {
		_, err := c.Get(u)
		if !errors.Is(err, ErrBlockedAddress) {
			t.Errorf("GET %s: %v, want ErrBlockedAddress", u, err)
		}
	}
	// The metadata service's address is refused before any packet leaves.
	_, err := Client(Policy{AllowHosts: []string{"*"}}, 2*time.Second).Get("http://169.254.169.254/latest/meta-data/")
	if !errors.Is(err, ErrBlockedAddress) {
		t.Errorf("metadata address: %v", err)
	}
	// Opting in to private networks reaches it.
	resp, err := Client(Policy{AllowHosts: []string{"127.0.0.1"}, AllowPrivateNetworks: true}, 5*time.Second).Get(srv.URL)
	if err != nil {
		t.Fatalf("with AllowPrivateNetworks: %v", err)
	}
	resp.Body.Close()
}

func TestClientChecksEveryRedirectHop(t *testing.T) {
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("internal")) }))
	defer target.Close()
	_, port, _ := net.SplitHostPort(target.Listener.Addr().String())
	redirector := httptest.NewServer(http.RedirectHandler("http://localhost:"+port, http.StatusFound))
	defer redirector.Close()
	c := Client(Policy{AllowHosts: []string{"127.0.0.1"}, AllowPrivateNetworks: true}, 5*time.Second)
	_, err := c.Get(redirector.URL)
	if !errors.Is(err, ErrHostNotAllowed) {
		t.Fatalf("redirect to a host outside the list: %v", err)
	}
}

func TestClientRefusesOtherSchemes(t *testing.T) {
	c := Client(Policy{AllowHosts: []string{"*"}}, time.Second)
	req, _ := http.NewRequest("GET", "ftp://example.com/x", nil)
	if _, err := c.Do(req); err == nil {
		t.Fatal("ftp was fetched")
	}
}
