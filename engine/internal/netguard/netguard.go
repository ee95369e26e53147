// Package netguard fetches URLs a model chose without letting it reach the
// machine's own network: every connection is checked after DNS resolution,
// at dial time, so a public name resolving to 127.0.0.1 or 169.254.169.254
// is refused as surely as the literal address, and so is every redirect hop.
package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
	"time"
)

// ErrBlockedAddress is wrapped by every refusal to connect to a loopback,
// private, link-local or otherwise non-public address.
var ErrBlockedAddress = errors.New("address is not a public unicast address")

// ErrHostNotAllowed is wrapped by every refusal of a host outside the
// allow-list.
var ErrHostNotAllowed = errors.New("host is not in the allow-list")

// Policy says which URLs may be fetched.
type Policy struct {
	// AllowHosts are host patterns: an exact name ("docs.example.com"), a
	// subdomain wildcard ("*.example.com", which does not match
	// example.com itself) or "*" for any host. Matching ignores case and a
	// trailing dot. An empty list allows nothing.
	AllowHosts []string
	// AllowPrivateNetworks lets connections reach loopback, private,
	// link-local and other non-public addresses.
	AllowPrivateNetworks bool
}

// HostAllowed reports whether host matches one of p.AllowHosts.
func (p Policy) HostAllowed(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	for _, pat := range p.AllowHosts {
		pat = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(pat)), ".")
		switch {
		case pat == "*":
			return true
		case strings.HasPrefix(pat, "*."):
			if strings.HasSuffix(host, pat[1:]) && len(host) > len(pat)-1 {
				return true
			}
		case pat == host:
			return true
		}
	}
	return false
}

// Public reports whether a is a public unicast address: not loopback,
// private (RFC 1918, fc00::/7), link-local, multicast, unspecified, shared
// (100.64.0.0/10), "this network" (0.0.0.0/8) or documentation/benchmark
// space reserved from the internet.
func Public(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() ||
		a.IsLinkLocalMulticast() || a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified() {
		return false
	}
	for _, p := range reserved {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

var reserved = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // this network
	netip.MustParsePrefix("100.64.0.0/10"),   // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation (TEST-NET-1)
	netip.MustParsePrefix("198.51.100.0/24"), // documentation (TEST-NET-2)
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation (TEST-NET-3)
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, and broadcast
	netip.MustParsePrefix("64:ff9b::/96"),    // NAT64 can reach IPv4 private space
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use NAT64
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("100::/64"),        // discard
	netip.MustParsePrefix("2002::/16"),       // 6to4 can embed private IPv4
}

// Client returns an HTTP client that connects only where p allows: the
// dialer refuses non-public addresses (unless AllowPrivateNetworks) after
// resolution, every request and redirect hop must name an allowed host,
// proxies from the environment are not used (a proxy would hide the real
// destination from the check), and timeout bounds the whole exchange.
func Client(p Policy, timeout time.Duration) *http.Client {
	dialer := &net.Dialer{Timeout: 10 * time.Second, Control: p.control}
	transport := &http.Transport{
		Proxy:                 nil,
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          10,
		IdleConnTimeout:       30 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: timeout,
	}
	return &http.Client{
		Timeout:   timeout,
		Transport: &hostCheck{p: p, next: transport},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 5 {
				return errors.New("stopped after 5 redirects")
			}
			return nil // hostCheck sees every hop
		},
	}
}

// control runs after DNS, right before connect, on the address actually
// dialled.
func (p Policy) control(_, address string, _ syscall.RawConn) error {
	if p.AllowPrivateNetworks {
		return nil
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("netguard: %q: %w", address, ErrBlockedAddress)
	}
	if !Public(ap.Addr()) {
		return fmt.Errorf("netguard: %s: %w", ap.Addr(), ErrBlockedAddress)
	}
	return nil
}

// hostCheck refuses requests (first hop and redirects) to hosts outside the
// allow-list, and to schemes other than http and https.
type hostCheck struct {
	p    Policy
	next http.RoundTripper
}

func (h *hostCheck) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := h.p.Check(req.Context(), req.URL.Scheme, req.URL.Hostname()); err != nil {
		return nil, err
	}
	return h.next.RoundTrip(req)
}

// Check applies the policy's scheme and host rules to one request target.
func (p Policy) Check(_ context.Context, scheme, host string) error {
	if scheme != "http" && scheme != "https" {
		return fmt.Errorf("netguard: scheme %q is not http or https", scheme)
	}
	if !p.HostAllowed(host) {
		return fmt.Errorf("netguard: %s: %w", host, ErrHostNotAllowed)
	}
	return nil
}
