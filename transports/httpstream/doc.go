// Package httpstream is the HTTP streaming ingress shared by bread's HTTP
// transports (transports/httpchunked and transports/httpsse). It owns
// everything the two have in common and leaves only the bytes on the wire to
// a Format:
//
//   - the four streaming routes a transport mounts: POST /agents/{id}/run,
//     POST /pipelines/{id}/run, POST /resume/{checkpointId} and the passive
//     GET /runs/{runId}/stream;
//   - the passive stream's catch-up from the crumb log, then live frames from
//     the instance's transport, deduplicated so nothing is lost between the
//     two and nothing is repeated beyond one delta window;
//   - the client side both remote agents share: signed requests, status
//     checks and the dedup rule for reconnects.
//
// Users do not import this package directly; they pick a transport.
package httpstream
