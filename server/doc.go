// Package server is bread's HTTP server: the non-streaming routes of the
// HTTP API (agents, sessions, loops, task runs, cancel), the streaming
// routes (an httpstream.Ingress, NDJSON and SSE on the same routes, chosen
// per request by the Accept header), plugin middleware and routes, and the
// guard around all of them.
//
// Every route is registered through one core.Router with an action name
// (core.ActionAgentList, ...). With auth on (Options.Auth strategies or an
// AuthPlugin in the instance's plugins) a request must authenticate (401),
// then Options.Auth.Authorize must allow the route's action with its path
// and query parameters (403); a route registered without an action is 403.
// With auth off only requests whose Host header is loopback pass (403
// otherwise), and ListenAndServe refuses a public bind with
// AUTH_NOT_CONFIGURED. Whatever the auth, a browser's unsafe request for a
// page of another origin is 403 (net/http's CrossOriginProtection), unless
// the origin is one of Options.CORS.Origins.
//
// Handler serves in-process and never refuses to build; the listen methods
// check the bind first and shut down gracefully when their context ends.
package server
