package server

import (
	"net"

	"golang.org/x/net/netutil"
)

// defaultMaxConnections is DefaultMaxConnections, or half the process's
// open file limit when that is lower: the other half stays for the store,
// the bus, model connections and files.
func defaultMaxConnections() int {
	n := DefaultMaxConnections
	if lim := openFileLimit(); lim > 0 && lim/2 < n {
		n = max(lim/2, 1)
	}
	return n
}

// Listener wraps ln so that at most Options.MaxConnections of its
// connections are open at once; past the cap, Accept waits for one to
// close, and new connections wait in the kernel's listen backlog. The
// listen methods apply it themselves; a caller serving Handler with its
// own http.Server (HTTPServer) wraps its listener with it.
func (s *Server) Listener(ln net.Listener) net.Listener {
	return netutil.LimitListener(ln, s.opts.MaxConnections)
}
