// Package httpchunked is bread's recommended HTTP transport: NDJSON over a
// chunked response, one Bread protocol CrumbFrame per line
// ({"v":1,"type":"crumb","runId","seq","crumb"}), blank lines as
// heartbeats.
//
// New returns a core.BreadTransport that the server mounts (core.Mounter):
// POST /agents/{id}/run, POST /pipelines/{id}/run, POST /resume/{checkpointId}
// and GET /runs/{runId}/stream. Every failure, even one before a run exists
// (a bad body, an unknown agent or pipeline, invalid input), arrives as an
// agent:error frame in a 200 response, because the status line is gone by
// the time a run can fail.
//
// RemoteAgent calls another bread's mounted routes and reads the lines back
// into crumbs, for engine.Config.RemoteAgents.
package httpchunked
