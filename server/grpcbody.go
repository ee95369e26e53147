package server

import (
	"encoding/binary"
	"io"
	"net/http"
	"strings"
	"time"
)

// GRPCHandler is a route handler that serves gRPC over HTTP/2 (a
// grpc.Server's ServeHTTP, say) and says so: ServesGRPC true. Registered
// through core.Router.Handle, its gRPC requests (HTTP/2, Content-Type
// application/grpc or application/grpc+...) keep their body as a stream
// instead of having it read whole up front by the body cap: a gRPC call is
// a stream of length-prefixed messages, and its errors travel as gRPC
// statuses, not JSON. What guards such a body instead is grpcBody's. A
// handler need not import this package to be one: the method is enough.
type GRPCHandler interface {
	http.Handler
	ServesGRPC() bool
}

// isGRPC reports whether r is a gRPC call: HTTP/2 with a gRPC content
// type. Over HTTP/1 no gRPC server answers one, so it is guarded as any
// other body.
func isGRPC(r *http.Request) bool {
	ct := r.Header.Get("Content-Type")
	return r.ProtoMajor == 2 && strings.HasPrefix(ct, "application/grpc") &&
		(len(ct) == len("application/grpc") || ct[len("application/grpc")] == '+' || ct[len("application/grpc")] == ';')
}

// grpcBody guards a GRPCHandler's route. A request that is not a gRPC call
// goes through bodyCap as on any route. A gRPC call's body is handed on
// unread, as a stream, with bodyClock's guards replaced by per-message
// ones:
//
//   - its first message (the 5-byte prefix and the length it declares)
//     must arrive within the body read timeout bodyClock set; then the
//     deadline is lifted, so a client stream may last as long as the call
//     (every A2A method sends one message and half-closes, so for them
//     this is the whole body, as for JSON-RPC);
//   - no message may declare more than max bytes (the body cap, per
//     message rather than per body): the read fails with
//     *http.MaxBytesError before the message is read. The gRPC server's
//     own receive limit (grpc.MaxRecvMsgSize, 4 MiB unless set) applies
//     as well.
//
// A body some middleware replaced (so bodyClock's is not the request's)
// is guarded by bodyCap as any other.
func grpcBody(max int64, next http.Handler) http.Handler {
	capped := bodyCap(max, next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, ok := r.Body.(*cappedBody)
		if !ok || !isGRPC(r) {
			capped.ServeHTTP(w, r)
			return
		}
		r.Body = &grpcMessages{body: c.body, rc: c.rc, max: max}
		next.ServeHTTP(w, r)
	})
}

// grpcMessages reads a gRPC request body, following its framing (a flag
// byte, a 4-byte big-endian length, the message) to refuse a message
// declared over max and to lift the read deadline once the first message
// is in.
type grpcMessages struct {
	body   io.ReadCloser
	rc     *http.ResponseController
	max    int64
	prefix [5]byte
	got    int   // bytes of the current message's prefix read so far
	left   int64 // bytes of the current message's payload still to come
	lifted bool  // the first message arrived: the deadline is off
	over   bool
}

func (g *grpcMessages) Read(p []byte) (int, error) {
	if g.over {
		return 0, &http.MaxBytesError{Limit: g.max}
	}
	n, err := g.body.Read(p)
	for b := p[:n]; len(b) > 0; {
		if g.got < len(g.prefix) {
			k := copy(g.prefix[g.got:], b)
			g.got, b = g.got+k, b[k:]
			if g.got < len(g.prefix) {
				break
			}
			g.left = int64(binary.BigEndian.Uint32(g.prefix[1:]))
			if g.left > g.max {
				g.over = true
				return n, &http.MaxBytesError{Limit: g.max}
			}
		}
		k := min(int64(len(b)), g.left)
		g.left, b = g.left-k, b[k:]
		if g.left == 0 {
			g.got = 0 // the message is in; the next begins
			g.lift()
		}
	}
	return n, err
}

// lift ends the first-message deadline.
func (g *grpcMessages) lift() {
	if g.lifted {
		return
	}
	g.lifted = true
	if g.rc != nil {
		_ = g.rc.SetReadDeadline(time.Time{})
	}
}

func (g *grpcMessages) Close() error { return g.body.Close() }
