// Package httpchunked is the client of bread's NDJSON streams: RemoteAgent
// runs an agent on another bread server and reads its response, one Bread
// protocol CrumbFrame per line ({"v":1,"type":"crumb","runId","seq","crumb"},
// blank lines as heartbeats), back into crumbs, for
// engine.Config.RemoteAgents.
//
// The server side is not here: every bread server (package server, through
// transports/httpstream) serves NDJSON and SSE on the same routes and picks
// per request from the Accept header; this client asks for
// application/x-ndjson. For a client that reconnects after a dropped
// connection, use transports/httpsse.
package httpchunked
