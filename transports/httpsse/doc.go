// Package httpsse is bread's Server-Sent Events transport, the choice for
// browsers (EventSource) and the wire of the original hand-rolled SSE
// routes: every crumb is an event
//
//	id: <seq>
//	data: {"type":"<crumb type>","payload":<crumb>}
//
// The stream opens with "retry: 3000", idle streams get a ": ping" comment
// every 15 s, and a failure is an event {"type":"error","payload":{code,
// message}}. The seq in id is the crumb's position in the run's crumb log
// (a watermark for text and reasoning deltas), usable as Last-Event-ID on
// GET /runs/{runId}/stream.
//
// New returns a core.BreadTransport that the server mounts (core.Mounter)
// with the same four routes as transports/httpchunked. RemoteAgent reads a
// remote bread's events back into crumbs and, when the connection drops,
// reconnects through the passive run stream with Last-Event-ID.
package httpsse
