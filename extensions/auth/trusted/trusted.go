package trusted

import (
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/breadai/bread/core"
)

// Defaults.
const (
	DefaultUserHeader      = "X-Forwarded-User"
	DefaultGroupsHeader    = "X-Forwarded-Groups"
	DefaultGroupsSeparator = ","
	// MaxUserBytes bounds the user header; MaxGroups and MaxGroupsBytes the
	// groups. A trusted proxy sending more is refused, not truncated.
	MaxUserBytes   = 256
	MaxGroups      = 256
	MaxGroupsBytes = 16 << 10
)

// Options say which peers are trusted and where they put the identity.
type Options struct {
	// Proxies are the peers whose headers are believed: CIDRs
	// ("10.0.0.0/8", "fd00::/8") or single addresses ("127.0.0.1"). A /0
	// (every peer) is refused.
	Proxies []string
	// UnixSocket believes every peer of a Unix-socket listener: the proxy
	// shares the host and the socket's file permissions decide who
	// connects.
	UnixSocket bool
	// UserHeader carries the subject (default X-Forwarded-User).
	UserHeader string
	// GroupsHeader carries the groups (default X-Forwarded-Groups),
	// separated by GroupsSeparator (default ","); several header lines add
	// up.
	GroupsHeader    string
	GroupsSeparator string
	// Claims maps more claims to the headers carrying them, for example
	// {"email": "X-Forwarded-Email"}.
	Claims map[string]string
	// Name is the strategy's name (default "trusted").
	Name string
}

// reserved headers cannot carry an identity: the strategy deletes its
// headers from untrusted peers, and these must reach other strategies and
// the server untouched.
var reserved = []string{"Authorization", "Proxy-Authorization", "Cookie", "Host", "Content-Type", "Content-Length", "Content-Encoding", "Transfer-Encoding", "Connection", "Upgrade", "Te", "Trailer"}

func invalid(format string, args ...any) error {
	return core.Errorf(core.CodeInvalidConfig, "trusted: "+format, args...)
}

// Authenticator is the server-side strategy.
type Authenticator struct {
	opts     Options
	prefixes []netip.Prefix
	headers  []string // every header the strategy reads, canonical
	claims   [][2]string
}

var (
	_ core.BreadAuthStrategy = (*Authenticator)(nil)
)

// Strategy returns a core.BreadAuthStrategy reading identities from a
// trusted proxy's headers. It fails with INVALID_CONFIG when no peer is
// trusted, a proxy does not parse or is a /0, or a header is malformed,
// reserved (Authorization, Cookie, ...) or used twice.
func Strategy(opts Options) (*Authenticator, error) {
	if len(opts.Proxies) == 0 && !opts.UnixSocket {
		return nil, invalid("no trusted peer: set Proxies (CIDRs) or UnixSocket")
	}
	a := &Authenticator{}
	for _, p := range opts.Proxies {
		p = strings.TrimSpace(p)
		var prefix netip.Prefix
		if strings.Contains(p, "/") {
			pp, err := netip.ParsePrefix(p)
			if err != nil {
				return nil, invalid("proxy %q is not a CIDR: %v", p, err)
			}
			prefix = pp.Masked()
		} else {
			ip, err := netip.ParseAddr(p)
			if err != nil {
				return nil, invalid("proxy %q is not an address or a CIDR", p)
			}
			ip = ip.Unmap().WithZone("")
			prefix = netip.PrefixFrom(ip, ip.BitLen())
		}
		if prefix.Bits() == 0 {
			return nil, invalid("proxy %q trusts every peer: anyone could claim any user", p)
		}
		if prefix.Addr().Is4In6() && prefix.Bits() >= 96 {
			prefix = netip.PrefixFrom(prefix.Addr().Unmap(), prefix.Bits()-96)
		}
		a.prefixes = append(a.prefixes, prefix)
	}
	if opts.UserHeader == "" {
		opts.UserHeader = DefaultUserHeader
	}
	if opts.GroupsHeader == "" {
		opts.GroupsHeader = DefaultGroupsHeader
	}
	if opts.GroupsSeparator == "" {
		opts.GroupsSeparator = DefaultGroupsSeparator
	}
	if opts.Name == "" {
		opts.Name = "trusted"
	}
	add := func(h string) (string, error) {
		if !core.ValidHTTPToken(h) {
			return "", invalid("header %q is not a valid header name", h)
		}
		h = http.CanonicalHeaderKey(h)
		if slices.Contains(reserved, h) {
			return "", invalid("header %s cannot carry an identity: it would be stripped from every untrusted request", h)
		}
		if slices.Contains(a.headers, h) {
			return "", invalid("header %s is used twice", h)
		}
		a.headers = append(a.headers, h)
		return h, nil
	}
	var err error
	if opts.UserHeader, err = add(opts.UserHeader); err != nil {
		return nil, err
	}
	if opts.GroupsHeader, err = add(opts.GroupsHeader); err != nil {
		return nil, err
	}
	for _, claim := range sortedKeys(opts.Claims) {
		if claim == "" || claim == "groups" {
			return nil, invalid("claim name %q is reserved or empty", claim)
		}
		h, err := add(opts.Claims[claim])
		if err != nil {
			return nil, err
		}
		a.claims = append(a.claims, [2]string{claim, h})
	}
	a.opts = opts
	return a, nil
}

// Name implements core.BreadAuthStrategy.
func (a *Authenticator) Name() string { return a.opts.Name }

// Trusted reports whether r's direct peer is a trusted proxy.
func (a *Authenticator) Trusted(r *http.Request) bool {
	if a.opts.UnixSocket {
		if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && la != nil && la.Network() == "unix" {
			return true
		}
	}
	if len(a.prefixes) == 0 {
		return false
	}
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	ip := ap.Addr().Unmap().WithZone("")
	for _, p := range a.prefixes {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// Scrub deletes the strategy's headers from a request whose peer is not
// trusted (server.Scrubber).
func (a *Authenticator) Scrub(r *http.Request) {
	if a.Trusted(r) {
		return
	}
	for _, h := range a.headers {
		r.Header.Del(h)
	}
}

// Authenticate returns the identity a trusted proxy asserts; nil, nil when
// the peer is not trusted (the headers are then deleted) or sent no user;
// and a rejection (a core.BreadError with code UNAUTHORIZED) when a trusted
// peer sent a malformed identity: several users, control characters, more
// than the bounds.
func (a *Authenticator) Authenticate(r *http.Request) (*core.AuthIdentity, error) {
	if !a.Trusted(r) {
		for _, h := range a.headers {
			r.Header.Del(h)
		}
		return nil, nil
	}
	user, ok, err := single(r, a.opts.UserHeader, MaxUserBytes)
	if err != nil || !ok {
		return nil, err
	}
	groups, err := a.groups(r)
	if err != nil {
		return nil, err
	}
	peer := "unix"
	if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		peer = ap.Addr().Unmap().String()
	}
	id := &core.AuthIdentity{Subject: user, Claims: map[string]any{"groups": groups, "peer": peer}}
	for _, c := range a.claims {
		v, ok, err := single(r, c[1], MaxUserBytes*4)
		if err != nil {
			return nil, err
		}
		if ok {
			id.Claims[c[0]] = v
		}
	}
	return id, nil
}

// single reads a header that must appear at most once with a printable
// value of at most max bytes.
func single(r *http.Request, h string, max int) (string, bool, error) {
	vs := r.Header.Values(h)
	switch {
	case len(vs) == 0:
		return "", false, nil
	case len(vs) > 1:
		return "", false, reject("more than one " + h + " header")
	}
	v := strings.TrimSpace(vs[0])
	if v == "" {
		return "", false, nil
	}
	if len(v) > max || !printable(v) {
		return "", false, reject("a malformed " + h + " header")
	}
	return v, true, nil
}

func (a *Authenticator) groups(r *http.Request) ([]string, error) {
	groups := []string{}
	total := 0
	for _, line := range r.Header.Values(a.opts.GroupsHeader) {
		total += len(line)
		if total > MaxGroupsBytes {
			return nil, reject("the " + a.opts.GroupsHeader + " header is too large")
		}
		for g := range strings.SplitSeq(line, a.opts.GroupsSeparator) {
			g = strings.TrimSpace(g)
			if g == "" {
				continue
			}
			if !printable(g) {
				return nil, reject("a malformed " + a.opts.GroupsHeader + " header")
			}
			if !slices.Contains(groups, g) {
				groups = append(groups, g)
			}
			if len(groups) > MaxGroups {
				return nil, reject("too many groups")
			}
		}
	}
	return groups, nil
}

func reject(msg string) error {
	return &core.BreadError{Code: core.CodeUnauthorized, Message: "trusted: " + msg}
}

// printable refuses control characters and invalid UTF-8.
func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, c := range s {
		if c < 0x20 || c == 0x7f {
			return false
		}
	}
	return true
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
