package server

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/gorilla/mux"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/transports/httpstream"
)

// Server serves one engine over HTTP.
type Server struct {
	inst      Engine
	opts      Options
	log       *slog.Logger
	authOn    bool
	authorize core.AuthorizeFunc
	canceller Canceller
	streams   *httpstream.Ingress
	handler   http.Handler
	mux       *mux.Router // the routes, before middleware
	fast      *fastRoutes // the first of them, matched without gorilla/mux
	public    map[string]bool
	actions   map[string]bool // every action a route was registered under
	drain     drainState
}

// New builds the server's handler: body cap, CORS, the cross-origin guard,
// host guard (auth off) or authentication (auth on), plugin middleware in
// plugin order, then the routes: the server's own, the streaming routes (an
// httpstream.Ingress built from Options.Streams), and the plugins'. It does
// not start inst; the caller owns its lifecycle.
func New(inst Engine, opts Options) (*Server, error) {
	if inst == nil {
		return nil, &core.BreadError{Code: core.CodeInvalidConfig, Message: "server.New needs an Instance"}
	}
	if opts.MaxBodyBytes < 0 {
		return nil, &core.BreadError{Code: core.CodeInvalidConfig, Message: "Options.MaxBodyBytes must not be negative"}
	}
	if opts.Port < 0 || opts.Port > 65535 {
		return nil, core.Errorf(core.CodeInvalidConfig, "Options.Port %d is not a TCP port (1-65535, 0 for the default %d)", opts.Port, DefaultPort)
	}
	if opts.Host == "" {
		opts.Host = DefaultHost
	}
	if opts.Port == 0 {
		opts.Port = DefaultPort
	}
	if opts.MaxBodyBytes == 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.ShutdownTimeout <= 0 {
		opts.ShutdownTimeout = DefaultShutdownTimeout
	}
	if opts.ReadHeaderTimeout <= 0 {
		opts.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	if opts.BodyReadTimeout <= 0 {
		opts.BodyReadTimeout = DefaultBodyReadTimeout
	}
	if opts.MaxConnections < 0 {
		return nil, core.Errorf(core.CodeInvalidConfig, "Options.MaxConnections %d is negative (0 for the default)", opts.MaxConnections)
	}
	if opts.MaxConnections == 0 {
		opts.MaxConnections = defaultMaxConnections()
	}
	if opts.ReadyTimeout <= 0 {
		opts.ReadyTimeout = DefaultReadyTimeout
	}
	if opts.RetryAfter <= 0 {
		opts.RetryAfter = DefaultRetryAfter
	}
	s := &Server{inst: inst, opts: opts, log: opts.Logger, canceller: opts.Canceller, public: map[string]bool{}, actions: map[string]bool{}}
	for _, action := range opts.Public {
		s.public[action] = true
	}
	if s.log == nil {
		s.log = inst.Logger()
	}
	if s.canceller == nil {
		s.canceller = instanceCanceller{inst}
	}
	streams := opts.Streams
	if streams.Logger == nil {
		streams.Logger = s.log
	}
	s.streams = httpstream.New(streams)
	plugins := inst.Plugins()
	if opts.Auth != nil {
		s.authorize = opts.Auth.Authorize
		s.authOn = len(opts.Auth.Strategies) > 0
	}
	s.authOn = s.authOn || slices.ContainsFunc(plugins, func(p core.BreadPlugin) bool { return p.Name() == AuthPluginName })

	mx := mux.NewRouter()
	// No route is no exemption from the body cap: an oversize body is 413
	// on an unknown path too, chunked or not.
	mx.NotFoundHandler = bodyCap(opts.MaxBodyBytes, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		writeError(w, http.StatusNotFound, core.CodeNotFound, "no route for this path")
	}))
	mx.MethodNotAllowedHandler = bodyCap(opts.MaxBodyBytes, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		writeError(w, http.StatusMethodNotAllowed, CodeMethodNotAllowed, "this path does not serve that method")
	}))
	rt := &router{s: s, mux: mx}
	s.mux, s.fast = mx, &rt.fast
	// gorilla/mux tries routes in registration order, each with its path
	// regexp: the streaming routes, which start every run, go first, so a
	// run does not pay for twenty failed matches. No streaming path
	// overlaps one of the server's own.
	if opts.Ingress != nil {
		opts.Ingress.Mount(rt, inst)
	} else {
		s.streams.Mount(rt, inst)
	}
	s.routes(rt)
	for _, p := range plugins {
		if rp, ok := p.(core.RoutesProvider); ok {
			rp.Routes(rt)
		}
	}
	// A misspelt public action would leave its route behind auth, which
	// fails safe but silently: refuse it by name instead.
	for _, action := range opts.Public {
		if !s.actions[action] {
			return nil, core.Errorf(core.CodeInvalidConfig, "server.public names unknown action %q; known: %s", action, strings.Join(s.Actions(), ", "))
		}
	}

	var h, open http.Handler = rt, rt
	bodyReplaceable := false // a middleware may hand bodyCap another body
	for _, p := range slices.Backward(plugins) {
		if mp, ok := p.(core.MiddlewareProvider); ok {
			bodyReplaceable = true
			h = mp.Middleware(h)
			if p.Name() != AuthPluginName { // public routes skip an auth plugin too
				open = mp.Middleware(open)
			}
		}
	}
	if opts.Auth != nil && len(opts.Auth.Strategies) > 0 {
		bodyReplaceable = true
		h = AuthMiddleware(opts.Auth.Strategies...)(h)
	}
	if !s.authOn {
		h = hostGuard(h)
	}
	if len(s.public) > 0 {
		h = s.publicRoutes(mx, open, h)
	}
	// A page of another origin may not drive the server through its
	// visitor's browser: refused before any guard, middleware or route.
	if !opts.AllowCrossOrigin {
		var err error
		if h, err = crossOriginGuard(opts.CORS.Origins, h); err != nil {
			return nil, err
		}
	}
	if len(opts.CORS.Origins) > 0 {
		h = opts.CORS.middleware(h)
	}
	// A declared length over the cap costs nothing to refuse: at once,
	// ahead of every guard and middleware; any other body is read against
	// the clock from here on. A body is read only once the route's guards
	// (cross-origin, Host, authentication, Authorize) let the request
	// through (bodyCap runs inside each route's gate); until then a
	// refusal closes the connection instead of draining a stranger's body.
	h = bodyClock(opts.MaxBodyBytes, opts.BodyReadTimeout, bodyReplaceable, h)
	h = s.recoverer(h)
	if opts.AccessLog {
		h = s.accessLog(h)
	}
	s.handler = h
	return s, nil
}

// publicRoutes sends a request whose route's action is in Options.Public
// to open (plugin middleware and the routes, no auth, no Host guard) and
// every other request to guarded.
func (s *Server) publicRoutes(mx *mux.Router, open, guarded http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m mux.RouteMatch
		if mx.Match(r, &m) && m.Route != nil && m.MatchErr == nil && s.public[m.Route.GetName()] {
			open.ServeHTTP(w, r)
			return
		}
		guarded.ServeHTTP(w, r)
	})
}

// Actions lists, sorted, every action a route was registered under: the
// core's, the transport's and the plugins'. It is what an allow list or
// Options.Public may name.
func (s *Server) Actions() []string {
	return slices.Sorted(maps.Keys(s.actions))
}

// HTTPServer returns an http.Server for h with this server's connection
// timeouts and error log, for a caller that serves the handler itself
// (bread dev swaps handlers behind one listener); serve it on Listener(ln)
// for the connection cap. There is no WriteTimeout: streams last as long
// as their runs, and the body deadline is set per request.
//
// It speaks HTTP/1.1 and HTTP/2: unencrypted HTTP/2 with prior knowledge
// (h2c, what a plaintext gRPC client sends) on a plain listener, and
// HTTP/2 negotiated by ALPN when served over TLS (ServeTLS, or a
// TLSConfig whose NextProtos the caller sets). An HTTP/1.1 client is
// served as before: a connection's first bytes tell the two apart.
func (s *Server) HTTPServer(h http.Handler) *http.Server {
	protocols := new(http.Protocols)
	protocols.SetHTTP1(true)
	protocols.SetHTTP2(true)
	protocols.SetUnencryptedHTTP2(true)
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: s.opts.ReadHeaderTimeout,
		IdleTimeout:       s.opts.IdleTimeout,
		Protocols:         protocols,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
}

// Handler returns the server's http.Handler for in-process use (tests, a
// mux of your own). It applies the same guards as a listening server but no
// bind check.
func (s *Server) Handler() http.Handler { return s.handler }

// recoverer turns a panicking handler into a 500 instead of a dropped
// connection, and logs it.
func (s *Server) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				s.log.ErrorContext(r.Context(), "bread: handler panicked", "method", r.Method, "path", r.URL.Path, "panic", p)
				writeError(w, http.StatusInternalServerError, core.CodeInternalError, "internal server error")
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// ListenAndServe checks the bind, listens on Options.Host:Port and serves
// until ctx ends, then shuts down gracefully.
func (s *Server) ListenAndServe(ctx context.Context) error {
	if err := s.checkBind(s.opts.Host, loopbackBind(s.opts.Host)); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(strings.Trim(s.opts.Host, "[]"), strconv.Itoa(s.opts.Port)))
	if err != nil {
		return err
	}
	return s.serve(ctx, ln)
}

// Serve checks the listener's address like ListenAndServe checks its bind,
// then serves on ln until ctx ends. It always closes ln.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if err := s.checkBind(ln.Addr().String(), listenerLoopback(ln)); err != nil {
		ln.Close()
		return err
	}
	return s.serve(ctx, ln)
}

// CheckHost applies ListenAndServe's bind check to host before anything
// binds it: for a caller that opens its own listener (the CLI's reloading
// dev server), so a public address without auth is refused before it is
// ever bound, as ListenAndServe refuses it.
func (s *Server) CheckHost(host string) error {
	return s.checkBind(host, loopbackBind(host))
}

// CheckListener applies Serve's bind check to ln without serving: for a
// caller that runs its own http.Server around Handler (the CLI's reloading
// dev server).
func (s *Server) CheckListener(ln net.Listener) error {
	return s.checkBind(ln.Addr().String(), listenerLoopback(ln))
}

// checkBind refuses the combinations that would leave the server open or
// unusable: auth without Authorize (every route would be 403), and no auth
// on a public address. No auth on loopback is allowed with a warning.
func (s *Server) checkBind(addr string, loopback bool) error {
	switch {
	case s.authOn && s.authorize == nil:
		return &core.BreadError{Code: core.CodeAuthNotConfigured, Message: "auth is on but Options.Auth.Authorize is not set: every route would be refused"}
	case s.authOn:
		return nil
	case loopback:
		s.log.Warn("bread: serving without auth on a loopback address; a reverse proxy on this machine can present a loopback Host and reach every route", "addr", addr)
		return nil
	case s.authorize != nil:
		return &core.BreadError{Code: core.CodeAuthNotConfigured, Message: "Options.Auth.Authorize is set but no auth strategy authenticates callers; refusing to listen on public address " + addr}
	default:
		return &core.BreadError{Code: core.CodeAuthNotConfigured, Message: "no auth configured; refusing to listen on public address " + addr + " (bind localhost, or set Options.Auth)"}
	}
}

// loopbackBind reports whether a configured host binds loopback only. Names
// other than localhost are not resolved: a name is public until proven
// otherwise.
func loopbackBind(host string) bool {
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func listenerLoopback(ln net.Listener) bool {
	switch a := ln.Addr().(type) {
	case *net.TCPAddr:
		return a.IP.IsLoopback()
	case *net.UnixAddr:
		return true // a socket file reaches only this machine
	}
	host, _, err := net.SplitHostPort(ln.Addr().String())
	return err == nil && loopbackBind(host)
}

// serve runs an http.Server on ln. When ctx ends it stops accepting, ends
// every request's context (so open streams flush and close their
// responses), waits up to ShutdownTimeout and then closes what is left.
func (s *Server) serve(ctx context.Context, ln net.Listener) error {
	base, endRequests := context.WithCancel(context.WithoutCancel(ctx))
	defer endRequests()
	hs := s.HTTPServer(s.handler)
	hs.BaseContext = func(net.Listener) context.Context { return base }
	served := make(chan error, 1)
	go func() { served <- hs.Serve(s.Listener(ln)) }()
	s.log.Info("bread: listening", "addr", ln.Addr().String())

	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	endRequests()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.ShutdownTimeout)
	defer cancel()
	err := hs.Shutdown(sctx)
	if err != nil {
		err = errors.Join(err, hs.Close())
	}
	if serr := <-served; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}
