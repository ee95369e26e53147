package server

import (
	"net/http"
	"net/netip"
	"strconv"
	"strings"
)

// hostGuard admits only requests whose Host header names the loopback
// interface. It stands in for auth when none is configured: a page in a
// browser cannot make a request carrying Host: localhost to a server on
// another name (DNS rebinding), while curl on the same machine can.
// X-Forwarded-Host is ignored on purpose: any client can set it.
func hostGuard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !loopbackHost(r.Host) {
			forbidden(w)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// loopbackHost reports whether a Host header value is localhost, an
// address of 127.0.0.0/8 in dotted-quad form, ::1 or [::1], with an
// optional port. Other spellings of loopback (localhost., 127.1, 0x7f.1)
// and the wildcard addresses are refused: the forms are exact so they
// cannot be talked around.
func loopbackHost(h string) bool {
	if h == "::1" {
		return true
	}
	host, port := h, ""
	if strings.HasPrefix(h, "[") {
		end := strings.IndexByte(h, ']')
		if end < 0 {
			return false
		}
		host, port = h[1:end], h[end+1:]
		if port != "" {
			if port[0] != ':' {
				return false
			}
			port = port[1:]
			if !validPort(port) {
				return false
			}
		}
		return host == "::1"
	}
	if i := strings.IndexByte(h, ':'); i >= 0 {
		host, port = h[:i], h[i+1:]
		if !validPort(port) {
			return false
		}
	}
	return strings.EqualFold(host, "localhost") || loopbackV4(host)
}

// loopbackV4 reports whether host is a dotted-quad address in 127.0.0.0/8
// (`start -H 127.0.0.2` must be reachable at its own address). A browser
// sends an IP literal as Host only to a page loaded from that address, so
// a rebinding attacker's name can never arrive as one.
func loopbackV4(host string) bool {
	a, err := netip.ParseAddr(host)
	return err == nil && a.Is4() && a.IsLoopback()
}

func validPort(p string) bool {
	if p == "" || len(p) > 5 {
		return false
	}
	for i := 0; i < len(p); i++ {
		if p[i] < '0' || p[i] > '9' {
			return false
		}
	}
	n, _ := strconv.Atoi(p)
	return n <= 65535
}
