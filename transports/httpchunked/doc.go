// Package httpchunked is the NDJSON face of bread's one HTTP remote-agent
// client, transports/httpstream/remoteagent: RemoteAgent runs an agent on
// another bread server and reads its response, one Bread protocol
// CrumbFrame per line ({"v":1,"type":"crumb","runId","seq","crumb"}, blank
// lines as heartbeats), back into crumbs, for engine.Config.RemoteAgents.
// When the connection drops before the run ends it reconnects with
// Last-Event-ID and relays nothing twice (see remoteagent).
//
// It is kept for the "httpchunked" name of remote agents in bread.yaml;
// new Go code may call remoteagent.New with Format NDJSON, which is the
// same client. The server side is not here: every bread server (package
// server, through transports/httpstream) serves NDJSON and SSE on the same
// routes and picks per request from the Accept header.
package httpchunked
