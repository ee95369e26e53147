package httpstream

import (
	"strconv"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/protocol"
)

// NDJSON is the chunked format, the default: one Bread protocol CrumbFrame
// per line ({"v":1,"type":"crumb","runId","seq","crumb"}), blank lines as
// heartbeats. Everything on this wire is a crumb: a failure is the
// agent:error crumb itself.
type NDJSON struct{}

// ContentType is application/x-ndjson.
func (NDJSON) ContentType() string { return ContentTypeNDJSON }

// AppendOpen appends nothing: the stream starts with its first frame.
func (NDJSON) AppendOpen(dst []byte) []byte { return dst }

// AppendHeartbeat appends a blank line.
func (NDJSON) AppendHeartbeat(dst []byte) []byte { return append(dst, '\n') }

// AppendCrumb appends the frame core/protocol defines, byte for byte what
// protocol.EncodeCrumbFrame writes, and a newline; the crumb is encoded by
// AppendCrumbJSON's fast path.
func (NDJSON) AppendCrumb(dst []byte, f core.Frame) ([]byte, error) {
	start := len(dst)
	dst = append(dst, `{"v":1,"type":"crumb","runId":`...)
	dst = protocol.AppendJSONString(dst, f.RunID)
	dst = append(dst, `,"seq":`...)
	dst = strconv.AppendInt(dst, f.Seq, 10)
	dst = append(dst, `,"crumb":`...)
	crumbAt := len(dst)
	dst, err := AppendCrumbJSON(dst, f.Crumb)
	if err == nil && (f.Crumb == nil || string(dst[crumbAt:]) == "null") {
		err = errNoFrameCrumb
	}
	if err != nil {
		return dst[:start], err
	}
	return append(dst, '}', '\n'), nil
}

var errNoFrameCrumb = &core.BreadError{Code: core.CodeValidationError, Message: "a crumb frame needs a crumb"}

// AppendFailure appends the agent:error frame itself, with no sidecar
// error event.
func (n NDJSON) AppendFailure(dst []byte, f core.Frame) ([]byte, error) {
	return n.AppendCrumb(dst, f)
}
