package server

import (
	"context"
	"log/slog"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/transports/httpstream"
)

// Defaults of Options.
const (
	DefaultHost            = "localhost"
	DefaultPort            = 3000
	DefaultMaxBodyBytes    = 1 << 20
	DefaultShutdownTimeout = 10 * time.Second
	DefaultReadyTimeout    = 2 * time.Second
	DefaultRetryAfter      = 5 * time.Second
)

// Options configure a Server. Zero values take the defaults.
type Options struct {
	// Host and Port are where ListenAndServe binds (default
	// localhost:3000). An empty Host after defaulting is not possible: bind
	// every interface with "0.0.0.0" or "::", which needs auth.
	Host string
	Port int
	// MaxBodyBytes caps every request body, ahead of every route and
	// middleware (default 1 MiB). A larger body is 413 BODY_TOO_LARGE.
	MaxBodyBytes int64
	// Auth turns authentication and authorization on.
	Auth *Auth
	// Streams configures the streaming routes (POST /agents/{id}/run,
	// POST /pipelines/{id}/run, POST /resume/{checkpointId},
	// GET /runs/{runId}/stream), which every server mounts: an
	// httpstream.Ingress serving NDJSON and SSE, chosen per request from the
	// Accept header, with live frames from the engine's bus. The zero value
	// takes every default (15 s heartbeat, no stream authorization, no
	// liveness); a nil Streams.Logger is Logger. Streams.AuthorizeStream
	// also guards the cancel route.
	Streams httpstream.Options
	// Ingress, when set, is the configured transport's own core.Mounter:
	// it serves the streaming routes instead of the httpstream.Ingress
	// built from Streams, behind the same body cap, guards and plugin
	// middleware (the seed: the streaming routes are mounted by whichever
	// transport is configured). Streams.AuthorizeStream still guards the
	// server's per-run routes (cancel, files, the record).
	Ingress core.Mounter
	// Canceller cancels runs for POST /runs/{runId}/cancel; nil cancels the
	// runs of this instance.
	Canceller Canceller
	// Logger receives server logs; nil uses the instance's logger.
	Logger *slog.Logger
	// ShutdownTimeout bounds the graceful shutdown (default 10 s); then
	// remaining connections are closed.
	ShutdownTimeout time.Duration
	// ReadHeaderTimeout bounds reading a request's headers (default
	// DefaultReadHeaderTimeout).
	ReadHeaderTimeout time.Duration
	// IdleTimeout closes a keep-alive connection that sends no new request
	// for this long (default DefaultIdleTimeout).
	IdleTimeout time.Duration
	// CORS lets browser apps on the listed origins call the server; none by
	// default. Its origins (but not "*") are also the cross-origin guard's
	// trusted origins.
	CORS CORS
	// AllowCrossOrigin turns the cross-origin guard off. By default an
	// unsafe request (POST, DELETE, ...) that a browser sends for a page
	// of another origin than the server's, and not one of CORS.Origins, is
	// 403 before any middleware or route: a web page cannot drive the
	// server, even on loopback without auth. Clients that are not browsers
	// are not affected either way. Turn it off only for a server no
	// browser can reach.
	AllowCrossOrigin bool
	// BodyReadTimeout bounds receiving a request's whole body, declared
	// length or chunked, counted from the end of its headers (default
	// DefaultBodyReadTimeout). A body sent more slowly is 408
	// REQUEST_TIMEOUT and the connection closes. It is a read deadline on
	// the connection, lifted once the body is in: responses, streams
	// included, are not bounded.
	BodyReadTimeout time.Duration
	// MaxConnections caps the connections served at once (default
	// DefaultMaxConnections, and never more than half the process's open
	// file limit): past it, a new connection waits in the listen backlog
	// until one closes, so a flood of connections cannot exhaust the
	// process's descriptors. Applies to ListenAndServe, Serve and
	// Listener.
	MaxConnections int
	// Public lists route actions served to anyone: without authentication
	// or authorization when auth is on, and past the Host guard when it is
	// off. Meant for probes and scrapers (health.live, health.ready,
	// metrics.read); empty by default, so every route stays guarded.
	Public []string
	// Checks are readiness checks GET /readyz runs after the built-in ones
	// (not draining; the instance started and not stopping; the store and
	// the bus answer a ping when they implement core.Pinger).
	Checks []Check
	// ReadyTimeout bounds each readiness check (default 2 s).
	ReadyTimeout time.Duration
	// AccessLog logs one Info line per request on Logger when it ends:
	// method, path without the query, status, bytes, duration, peer. Never
	// bodies, headers or credentials.
	AccessLog bool
	// RetryAfter is the Retry-After of a run refused while draining
	// (default 5 s, whole seconds).
	RetryAfter time.Duration
	// Evals runs an agent's eval suites for POST /agents/{id}/evals (bread
	// dev and bread start run the project's agents/<id>/evals); nil
	// answers 501 NOT_IMPLEMENTED. An error with the code EVALS_NOT_FOUND
	// is 404.
	Evals EvalFunc
	// Console serves the web console (package console) at "/" and its
	// assets under /console/, under the action console.read, behind the
	// same guards as every route. bread dev sets it; bread start with
	// `server.console: true`.
	Console bool
}

// EvalFunc runs every eval case of agentID and returns the per-case
// results in order.
type EvalFunc func(ctx context.Context, agentID string) ([]core.EvalResult, error)

// Auth configures authentication and authorization.
type Auth struct {
	// Strategies authenticate a request; the first that returns an identity
	// wins. Without strategies here, auth is still on when the instance has
	// a plugin named "auth" (AuthPlugin).
	Strategies []core.BreadAuthStrategy
	// Authorize decides whether the caller may perform a route's action. It
	// is called only when auth is on; nil then denies every route, and the
	// listen methods refuse to start (AUTH_NOT_CONFIGURED).
	Authorize core.AuthorizeFunc
}

// DefaultReadHeaderTimeout bounds reading a request's headers.
const DefaultReadHeaderTimeout = 10 * time.Second

// DefaultIdleTimeout closes keep-alive connections left idle.
const DefaultIdleTimeout = 2 * time.Minute

// DefaultBodyReadTimeout bounds receiving a request body.
const DefaultBodyReadTimeout = 30 * time.Second

// DefaultMaxConnections caps the connections a server serves at once.
const DefaultMaxConnections = 4096
