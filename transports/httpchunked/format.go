package httpchunked

import (
	"strconv"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/protocol"
	"github.com/breadai/bread/transports/httpstream"
)

// ContentType is the media type of a chunked crumb stream.
const ContentType = "application/x-ndjson"

// ndjson writes one CrumbFrame per line.
type ndjson struct{}

func (ndjson) ContentType() string { return ContentType }

func (ndjson) AppendOpen(dst []byte) []byte { return dst }

func (ndjson) AppendHeartbeat(dst []byte) []byte { return append(dst, '\n') }

// AppendCrumb writes the frame core/protocol defines, byte for byte what
// protocol.EncodeCrumbFrame writes, with the crumb encoded by the stream's
// fast path.
func (ndjson) AppendCrumb(dst []byte, f core.Frame) ([]byte, error) {
	start := len(dst)
	dst = append(dst, `{"v":1,"type":"crumb","runId":`...)
	dst = protocol.AppendJSONString(dst, f.RunID)
	dst = append(dst, `,"seq":`...)
	dst = strconv.AppendInt(dst, f.Seq, 10)
	dst = append(dst, `,"crumb":`...)
	crumbAt := len(dst)
	dst, err := httpstream.AppendCrumbJSON(dst, f.Crumb)
	if err == nil && (f.Crumb == nil || string(dst[crumbAt:]) == "null") {
		err = errNoCrumb
	}
	if err != nil {
		return dst[:start], err
	}
	return append(dst, '}', '\n'), nil
}

var errNoCrumb = &core.BreadError{Code: core.CodeValidationError, Message: "a crumb frame needs a crumb"}

// AppendFailure writes the agent:error frame itself: everything on this
// wire is a real crumb, with no sidecar error event.
func (n ndjson) AppendFailure(dst []byte, f core.Frame) ([]byte, error) {
	return n.AppendCrumb(dst, f)
}
