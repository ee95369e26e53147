// Package protocol is the Bread protocol: the versioned envelope a duplex
// transport speaks when crumbs cross a network (an NDJSON HTTP stream, a
// remote-agent call, a Redis stream entry).
//
// Two frames exist. A CrumbFrame carries one crumb of a run:
//
//	{"v":1,"type":"crumb","runId":"…","seq":7,"crumb":{…}}
//
// A SubscribeFrame is the catch-up handshake a client sends once on
// (re)connect, asking for frames with seq > afterSeq before live ones:
//
//	{"v":1,"type":"subscribe","runId":"…","afterSeq":6}
//
// Decode never panics. Anything malformed, or at another version, is a
// *core.BreadError with code PROTOCOL_DECODE_ERROR carrying a truncated copy
// of the input, so a read loop has one error shape to handle.
package protocol
