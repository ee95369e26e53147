package mcpserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/breadai/bread/core"
)

// requestHeader carries the token of the HTTP request a tool call arrived
// on, from serveHTTP to the tool handler. serveHTTP always overwrites it, so
// a client cannot name another request.
const requestHeader = "X-Bread-Mcp-Request"

// inflight is one HTTP request carrying a call: cancelling ctx cancels the
// run the call started.
type inflight struct {
	ctx    context.Context
	cancel context.CancelFunc
}

// statelessHeader marks, for the tool handler, a request served by the
// stateless handler: such a session cannot send the client a request.
// serveHTTP always overwrites it.
const statelessHeader = "X-Bread-Mcp-Stateless"

// sessionHeader is the Streamable HTTP session id header.
const sessionHeader = "Mcp-Session-Id"

// newHTTPHandlers builds the SDK's two Streamable HTTP handlers over the one
// server. The stateless one serves every request that belongs to no
// session: any replica serves it, and both protocol revisions the SDK
// speaks answer there (2026-07-28 is sessionless by design; a 2025-11-25
// request without a session gets a throwaway one). The stateful one serves
// an initialize and every request naming the session it created: sessions
// live in this process (the SDK keeps them in memory), with resumable
// streams from an in-memory event store. Host and Origin are checked by
// serveHTTP instead of the SDK's loopback-only check, so AllowedHosts can
// name a real host.
func (e *Endpoint) newHTTPHandlers(log *slog.Logger) (stateless, stateful http.Handler) {
	get := func(*http.Request) *mcp.Server { return e.server }
	stateless = mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{
		Stateless:                    true,
		PropagateRequestCancellation: true,
		DisableLocalhostProtection:   true,
		Logger:                       log,
	})
	if e.settings.Stateless {
		return stateless, nil
	}
	stateful = mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{
		DisableLocalhostProtection: true,
		EventStore:                 mcp.NewMemoryEventStore(nil),
		SessionTimeout:             e.settings.SessionTimeout,
		Logger:                     log,
	})
	return stateless, stateful
}

// serveHTTP runs after the server's auth and Authorize (the route is named
// ActionRequest): Host and Origin validation, then the SDK.
func (p *Plugin) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if p.closed.Load() || p.ep.cur.Load() == nil {
		http.Error(w, "the MCP endpoint is not running", http.StatusServiceUnavailable)
		return
	}
	if !p.hostAllowed(r.Host) {
		forbidden(w)
		return
	}
	if o := r.Header.Get("Origin"); o != "" && !p.originAllowed(o) {
		forbidden(w)
		return
	}
	// The call's context follows this request: a client that goes away (or
	// cancels, which closes the request) cancels the run, whatever protocol
	// revision it speaks.
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	token := rand.Text()
	p.ep.reqs.Store(token, &inflight{ctx: ctx, cancel: cancel})
	defer p.ep.reqs.Delete(token)
	r.Header.Set(requestHeader, token)
	r.Header.Del(statelessHeader)
	initialize := false
	if r.Method == http.MethodPost && r.Body != nil {
		// The server caps bodies already; this bounds a mount of the
		// handler elsewhere to the SDK's own limit.
		r.Body = http.MaxBytesReader(w, r.Body, mcp.DefaultMaxRequestBodyBytes)
		var keys []string
		keys, initialize = p.track(r, token)
		if len(keys) > 0 {
			defer func() {
				for _, k := range keys {
					p.ep.calls.CompareAndDelete(k, token)
				}
			}()
		}
	}
	if p.ep.stateful == nil || (r.Method == http.MethodPost && r.Header.Get(sessionHeader) == "" && !initialize) {
		r.Header.Set(statelessHeader, "1")
		p.ep.stateless.ServeHTTP(w, r)
		return
	}
	p.ep.serveStateful(w, r)
}

// rpcPeek is what serveHTTP reads of a JSON-RPC message.
type rpcPeek struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		RequestID json.RawMessage `json:"requestId"`
	} `json:"params"`
}

// track reads the body (already capped by the server) to pair
// notifications/cancelled with the call it names: on a stateless endpoint
// the notification arrives on a request of its own. Calls are keyed by the
// caller's identity and JSON-RPC id, so a caller can only cancel its own.
//
// It also reports whether the message is an initialize, which opens a
// stateful session.
func (p *Plugin) track(r *http.Request, token string) (keys []string, initialize bool) {
	body, err := io.ReadAll(r.Body)
	r.Body.Close()
	if err != nil {
		// Let the SDK answer (413 for an oversized body) from what was read.
		r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{err}))
		return nil, false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var msg rpcPeek
	if json.Unmarshal(body, &msg) != nil {
		return nil, false // batches and garbage go to the SDK as they are
	}
	if msg.Method == "initialize" && len(msg.ID) > 0 {
		return nil, true
	}
	who := ""
	if id := core.IdentityFrom(r.Context()); id != nil {
		who = id.Subject
	}
	switch {
	case msg.Method == "tools/call" && len(msg.ID) > 0:
		k := callKey(who, msg.ID)
		p.ep.calls.Store(k, token)
		return []string{k}, false
	case msg.Method == "notifications/cancelled" && len(msg.Params.RequestID) > 0:
		if t, ok := p.ep.calls.Load(callKey(who, msg.Params.RequestID)); ok {
			if f, ok := p.ep.reqs.Load(t); ok {
				f.(*inflight).cancel()
			}
		}
	}
	return nil, false
}

func callKey(who string, id json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, id) != nil {
		b.Reset()
		b.Write(id)
	}
	return who + "\x00" + b.String()
}

// bind ties a tool handler's context to the HTTP request the call came on,
// when it came over HTTP without a session. A call of a stateful session is
// not tied to its request: the client may resume the stream of a dropped
// request (Last-Event-ID) and find the run still going; it cancels with
// notifications/cancelled, and closing the session ends its calls.
func (p *Plugin) bind(ctx context.Context, req *mcp.CallToolRequest) (context.Context, func()) {
	if req == nil || req.Extra == nil || req.Extra.Header == nil || req.Extra.Header.Get(statelessHeader) == "" {
		return ctx, func() {}
	}
	f, ok := p.ep.reqs.Load(req.Extra.Header.Get(requestHeader))
	if !ok {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(f.(*inflight).ctx, cancel)
	return ctx, func() { stop(); cancel() }
}

// hostAllowed checks a Host header: its name (port ignored) must be
// loopback or in AllowedHosts.
func (p *Plugin) hostAllowed(host string) bool {
	return p.nameAllowed(hostname(host))
}

func (p *Plugin) originAllowed(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	return p.nameAllowed(strings.ToLower(u.Hostname()))
}

func (p *Plugin) nameAllowed(name string) bool {
	if name == "" {
		return false
	}
	if len(p.opts.AllowedHosts) == 0 {
		return name == "localhost" || name == "127.0.0.1" || name == "::1"
	}
	return slices.ContainsFunc(p.opts.AllowedHosts, func(h string) bool { return strings.EqualFold(h, name) })
}

// hostname strips the port and brackets of a Host header.
func hostname(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		return strings.ToLower(h)
	}
	return strings.ToLower(strings.Trim(host, "[]"))
}

// errReader fails every read with err.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// forbiddenBody is the server's 403 body (server.ForbiddenBody), byte for
// byte the seed's: a refused Host or Origin answers as the server's own
// guards do.
const forbiddenBody = `{"error":"Forbidden"}`

// forbidden answers 403 with forbiddenBody.
func forbidden(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusForbidden)
	_, _ = w.Write([]byte(forbiddenBody))
}
