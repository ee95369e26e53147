package httpsse

import (
	"encoding/json"
	"strconv"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/transports/httpstream"
)

// ContentType is the media type of an SSE crumb stream.
const ContentType = "text/event-stream"

// ErrorEvent is the type of the event that reports a failure.
const ErrorEvent = "error"

// sse writes crumbs as SSE events.
type sse struct{}

func (sse) ContentType() string { return ContentType }

// AppendOpen asks EventSource clients to reconnect after 3 s.
func (sse) AppendOpen(dst []byte) []byte { return append(dst, "retry: 3000\n\n"...) }

func (sse) AppendHeartbeat(dst []byte) []byte { return append(dst, ": ping\n\n"...) }

func (sse) AppendCrumb(dst []byte, f core.Frame) ([]byte, error) {
	if f.Crumb == nil {
		return dst, errNoCrumb
	}
	start := len(dst)
	if f.Seq > 0 {
		dst = append(dst, "id: "...)
		dst = strconv.AppendInt(dst, f.Seq, 10)
		dst = append(dst, '\n')
	}
	dst = append(dst, `data: {"type":"`...)
	dst = append(dst, f.Crumb.CrumbType()...)
	dst = append(dst, `","payload":`...)
	dst, err := httpstream.AppendCrumbJSON(dst, f.Crumb)
	if err != nil {
		return dst[:start], err
	}
	return append(dst, "}\n\n"...), nil
}

var errNoCrumb = &core.BreadError{Code: core.CodeValidationError, Message: "an SSE crumb event needs a crumb"}

// AppendFailure ends a failed stream with an error event. A run that had
// started also gets its agent:error crumb first; a failure before any run
// (a bad body, an unknown agent or pipeline) is the error event alone.
func (s sse) AppendFailure(dst []byte, f core.Frame) ([]byte, error) {
	ce := core.ClientError{Code: core.CodeAgentError, Message: "the run failed"}
	if ae, ok := f.Crumb.(*core.AgentError); ok && ae.Error != nil {
		ce = core.ClientError{Code: ae.Error.Code, Message: ae.Error.Message}
	}
	if f.RunID != "" {
		var err error
		if dst, err = s.AppendCrumb(dst, f); err != nil {
			return dst, err
		}
	}
	payload, err := json.Marshal(ce)
	if err != nil {
		return dst, err
	}
	dst = append(dst, `data: {"type":"error","payload":`...)
	dst = append(dst, payload...)
	return append(dst, "}\n\n"...), nil
}
