package httpstream

import (
	"encoding/json"
	"strconv"

	"github.com/breadai/bread/core"
)

// SSEErrorEvent is the type of the SSE event that reports a failure.
const SSEErrorEvent = "error"

// SSE is the Server-Sent Events format, for browsers (EventSource) and the
// wire of the original SSE routes. Every crumb is an event
//
//	id: <seq>
//
//	data: {"type":"<crumb type>","payload":<crumb>}
//
// (no id when the seq is 0). The id stands alone, ended by its own blank
// line: an EventSource keeps the last id it read for the events that follow
// (WHATWG: the last event ID buffer is not reset by a dispatch, and a
// dispatch without data delivers nothing), so each crumb's event still
// carries its seq; and a reader that splits the body on blank lines and
// JSON-parses each block starting with "data: " (the seed's fetch example)
// sees nothing but the JSON. The stream opens with "retry: 3000", a
// heartbeat is the comment ": ping", and a failure is the event
// {"type":"error","payload":{"code","message"}}.
type SSE struct{}

// ContentType is text/event-stream.
func (SSE) ContentType() string { return ContentTypeSSE }

// AppendOpen asks EventSource clients to reconnect after 3 s.
func (SSE) AppendOpen(dst []byte) []byte { return append(dst, "retry: 3000\n\n"...) }

// AppendHeartbeat appends the comment ": ping".
func (SSE) AppendHeartbeat(dst []byte) []byte { return append(dst, ": ping\n\n"...) }

// AppendCrumb appends one crumb event.
func (SSE) AppendCrumb(dst []byte, f core.Frame) ([]byte, error) {
	if f.Crumb == nil {
		return dst, errNoEventCrumb
	}
	start := len(dst)
	if f.Seq > 0 {
		dst = append(dst, "id: "...)
		dst = strconv.AppendInt(dst, f.Seq, 10)
		dst = append(dst, "\n\n"...)
	}
	dst = append(dst, `data: {"type":"`...)
	dst = append(dst, f.Crumb.CrumbType()...)
	dst = append(dst, `","payload":`...)
	dst, err := AppendCrumbJSON(dst, f.Crumb)
	if err != nil {
		return dst[:start], err
	}
	return append(dst, "}\n\n"...), nil
}

var errNoEventCrumb = &core.BreadError{Code: core.CodeValidationError, Message: "an SSE crumb event needs a crumb"}

// AppendFailure ends a failed stream with an error event. A run that had
// started also gets its agent:error crumb first; a failure before any run
// (a bad body, an unknown agent or pipeline) is the error event alone.
func (s SSE) AppendFailure(dst []byte, f core.Frame) ([]byte, error) {
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
