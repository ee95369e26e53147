package a2a

import (
	"context"
	"iter"
	"net"
	"net/http"
	"net/url"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2agrpc"
	"github.com/a2aproject/a2a-go/a2asrv"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/breadai/bread/core"
)

// GRPCPath is the route of the gRPC binding (Options.GRPC): the methods
// of the v0.3 proto's service, a2a.v1.A2AService, as gRPC names them.
const GRPCPath = "/a2a.v1.A2AService/{method}"

// newGRPCServer is a gRPC server of the A2A service over h, the handler
// the JSON-RPC binding serves. It never listens: grpcMount hands it the
// requests the bread server routed, through ServeHTTP.
func newGRPCServer(h a2asrv.RequestHandler) *grpc.Server {
	s := grpc.NewServer()
	a2agrpc.NewHandler(grpcErrors{h}).RegisterWith(s)
	return s
}

// grpcCodes are the gRPC codes of the google.rpc.Code names v1Err's
// errors carry (the v1.0 spec's mapping, which the HTTP+JSON binding
// answers with too).
var grpcCodes = map[string]codes.Code{
	"INVALID_ARGUMENT":    codes.InvalidArgument,
	"NOT_FOUND":           codes.NotFound,
	"FAILED_PRECONDITION": codes.FailedPrecondition,
	"UNIMPLEMENTED":       codes.Unimplemented,
	"RESOURCE_EXHAUSTED":  codes.ResourceExhausted,
	"UNAVAILABLE":         codes.Unavailable,
	"PERMISSION_DENIED":   codes.PermissionDenied,
	"UNAUTHENTICATED":     codes.Unauthenticated,
	"ABORTED":             codes.Aborted,
	"INTERNAL":            codes.Internal,
}

// grpcStatus is err as a gRPC status, by the code the v1.0 bindings give
// it: a2a-go's own translation knows the A2A errors only (an invalid
// params error, a busy session or a full instance would all be INTERNAL).
// The message is the detail JSON-RPC sends (error.data.error); an internal
// error's is not described.
func grpcStatus(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	e := v1Err(err)
	_, name := e.httpStatus()
	msg := e.message
	if e.detail != "" {
		msg = e.detail
	}
	return status.Error(grpcCodes[name], msg)
}

// grpcErrors is the handler the gRPC binding calls: h, its errors as gRPC
// statuses (grpcStatus), which a2agrpc hands on as they are.
type grpcErrors struct{ h a2asrv.RequestHandler }

func (g grpcErrors) OnGetTask(ctx context.Context, q *a2a.TaskQueryParams) (*a2a.Task, error) {
	t, err := g.h.OnGetTask(ctx, q)
	return t, grpcStatus(err)
}

func (g grpcErrors) OnCancelTask(ctx context.Context, id *a2a.TaskIDParams) (*a2a.Task, error) {
	t, err := g.h.OnCancelTask(ctx, id)
	return t, grpcStatus(err)
}

func (g grpcErrors) OnSendMessage(ctx context.Context, m *a2a.MessageSendParams) (a2a.SendMessageResult, error) {
	r, err := g.h.OnSendMessage(ctx, m)
	return r, grpcStatus(err)
}

func (g grpcErrors) OnResubscribeToTask(ctx context.Context, id *a2a.TaskIDParams) iter.Seq2[a2a.Event, error] {
	return grpcEvents(g.h.OnResubscribeToTask(ctx, id))
}

func (g grpcErrors) OnSendMessageStream(ctx context.Context, m *a2a.MessageSendParams) iter.Seq2[a2a.Event, error] {
	return grpcEvents(g.h.OnSendMessageStream(ctx, m))
}

func (g grpcErrors) OnGetTaskPushConfig(ctx context.Context, p *a2a.GetTaskPushConfigParams) (*a2a.TaskPushConfig, error) {
	c, err := g.h.OnGetTaskPushConfig(ctx, p)
	return c, grpcStatus(err)
}

func (g grpcErrors) OnListTaskPushConfig(ctx context.Context, p *a2a.ListTaskPushConfigParams) ([]*a2a.TaskPushConfig, error) {
	c, err := g.h.OnListTaskPushConfig(ctx, p)
	return c, grpcStatus(err)
}

func (g grpcErrors) OnSetTaskPushConfig(ctx context.Context, p *a2a.TaskPushConfig) (*a2a.TaskPushConfig, error) {
	c, err := g.h.OnSetTaskPushConfig(ctx, p)
	return c, grpcStatus(err)
}

func (g grpcErrors) OnDeleteTaskPushConfig(ctx context.Context, p *a2a.DeleteTaskPushConfigParams) error {
	return grpcStatus(g.h.OnDeleteTaskPushConfig(ctx, p))
}

func (g grpcErrors) OnGetExtendedAgentCard(ctx context.Context) (*a2a.AgentCard, error) {
	c, err := g.h.OnGetExtendedAgentCard(ctx)
	return c, grpcStatus(err)
}

// grpcEvents is seq, its error as a gRPC status.
func grpcEvents(seq iter.Seq2[a2a.Event, error]) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		for ev, err := range seq {
			if !yield(ev, grpcStatus(err)) {
				return
			}
		}
	}
}

// grpcMount serves the gRPC binding on the bread server's routes, so the
// server's auth, the ActionRPC grant, the Host guard and the task
// ownership rule apply to it as to JSON-RPC. ServesGRPC tells the server
// to hand a gRPC call its body as a stream (server.GRPCHandler).
type grpcMount struct{ p *Plugin }

// ServesGRPC implements server.GRPCHandler.
func (grpcMount) ServesGRPC() bool { return true }

func (m grpcMount) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := m.p
	if p.closed.Load() || p.grpc == nil {
		// A gRPC client reads HTTP 503 as UNAVAILABLE.
		w.Header().Set("Retry-After", "5")
		http.Error(w, "the A2A endpoint is not running", http.StatusServiceUnavailable)
		return
	}
	if r.Header.Get(core.DelegationDepthHeader) != "" {
		r = r.WithContext(core.DelegationFromHeader(r.Context(), r.Header))
	}
	r = r.WithContext(withCardURL(r.Context(), p.advertised(r)))
	p.grpc.ServeHTTP(w, r)
}

// grpcTarget is the gRPC target the card advertises for the JSON-RPC url
// rpcURL: its host and port (the scheme's when it names none). A gRPC
// client dials host:port, and the service's path is the proto's, not the
// url's, so the url's path is left out.
func grpcTarget(rpcURL string) string {
	u, err := url.Parse(rpcURL)
	if err != nil || u.Host == "" {
		return rpcURL
	}
	if u.Port() != "" {
		return u.Host
	}
	port := "80"
	if u.Scheme == "https" {
		port = "443"
	}
	return net.JoinHostPort(u.Hostname(), port)
}
