// Package httpstream serves bread's streaming HTTP routes and holds what the
// remote-agent clients share.
//
// The server side is the Ingress, a core.Mounter: the server (package
// server) mounts one by default, so most programs configure it through the
// server's options and never call New. It serves
//
//   - POST /agents/{id}/run, POST /pipelines/{id}/run and
//     POST /resume/{checkpointId}, which start or continue a run and stream
//     its crumbs;
//   - GET /runs/{runId}/stream, the passive tail of any run: catch-up from
//     the crumb log, then live frames from the Runtime's bus, deduplicated
//     so nothing is lost between the two and nothing is repeated beyond one
//     delta window;
//
// each in two formats chosen per request from the Accept header: SSE for
// text/event-stream, NDJSON (one core/protocol CrumbFrame per line) for
// anything else. The bus (in-process or Redis) is the engine's business;
// the Ingress only subscribes to it.
//
// The client side is package remoteagent, bread's one HTTP remote-agent
// client (NDJSON and SSE, reconnecting), and Endpoint, Dedup and the error
// helpers it builds on; transports/httpchunked and transports/httpsse are
// that client with the format fixed.
package httpstream
