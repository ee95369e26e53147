// Package httpsse is the client of bread's Server-Sent Events streams:
// RemoteAgent runs an agent on another bread server, reads its events
//
//	id: <seq>
//	data: {"type":"<crumb type>","payload":<crumb>}
//
// back into crumbs, for engine.Config.RemoteAgents, and when the connection
// drops before the run ends, reconnects through the passive run stream
// (GET /runs/{runId}/stream) with Last-Event-ID, skipping what it already
// yielded.
//
// The server side is not here: every bread server (package server, through
// transports/httpstream) serves SSE and NDJSON on the same routes and picks
// per request from the Accept header; this client asks for
// text/event-stream.
package httpsse
