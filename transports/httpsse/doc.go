// Package httpsse is the Server-Sent Events face of bread's one HTTP
// remote-agent client, transports/httpstream/remoteagent: RemoteAgent runs
// an agent on another bread server and reads its events
//
//	id: <seq>
//	data: {"type":"<crumb type>","payload":<crumb>}
//
// back into crumbs, for engine.Config.RemoteAgents. When the connection
// drops before the run ends it reconnects through the passive run stream
// (GET /runs/{runId}/stream) with Last-Event-ID and relays nothing twice
// (see remoteagent).
//
// It is kept for the "httpsse" name of remote agents in bread.yaml; new Go
// code may call remoteagent.New with Format SSE, which is the same client.
// The server side is not here: every bread server (package server, through
// transports/httpstream) serves SSE and NDJSON on the same routes and
// picks per request from the Accept header.
package httpsse
