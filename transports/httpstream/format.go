package httpstream

import "github.com/breadai/bread/core"

// Format is a wire encoding of a crumb stream. Every Append method appends to
// dst and returns the extended slice, so a stream reuses one buffer. Crumbs
// handed to a Format are already client-safe (see ClientSafe).
type Format interface {
	// ContentType is the response's Content-Type.
	ContentType() string
	// AppendOpen appends what a stream starts with (SSE's retry field).
	AppendOpen(dst []byte) []byte
	// AppendHeartbeat appends a keep-alive that readers skip.
	AppendHeartbeat(dst []byte) []byte
	// AppendCrumb appends one crumb of a run.
	AppendCrumb(dst []byte, f core.Frame) ([]byte, error)
	// AppendFailure appends the end of a stream that failed. f holds the
	// agent:error crumb that reports the failure; its RunID is empty when
	// the failure came before a run existed (a bad body, an unknown agent).
	AppendFailure(dst []byte, f core.Frame) ([]byte, error)
}
