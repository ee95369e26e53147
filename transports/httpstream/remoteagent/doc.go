// Package remoteagent is bread's one HTTP remote-agent client: a
// core.RemoteAgent that runs an agent on another bread server and relays its
// crumbs, for engine.Config.RemoteAgents. It speaks both of the server's
// stream formats through one decoder each, NDJSON (one core/protocol
// CrumbFrame per line) and SSE (id: <seq>, data: {"type","payload"}), and
// shares everything else between them: the request, the reconnect, the
// deduplication and the errors.
//
// A run is started detached ("detach": true), so a dropped connection does
// not cancel it on the remote; when the stream drops before its terminal
// crumb the client reconnects to GET /runs/{runId}/stream with
// Last-Event-ID and drops what it already relayed with httpstream.Dedup's
// exact rule, so the relayed text is the remote run's byte for byte (from a
// server that sends httpstream.DeltaSeqHeader; from any other, repeats
// never a loss). A caller that stops early, or cancels, has the remote run
// cancelled through POST /runs/{runId}/cancel.
//
// transports/httpchunked and transports/httpsse are this client with its
// format fixed, kept for their configuration names.
package remoteagent
