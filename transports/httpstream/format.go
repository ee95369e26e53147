package httpstream

import (
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/breadai/bread/core"
)

// Media types of the two stream formats.
const (
	ContentTypeNDJSON = "application/x-ndjson"
	ContentTypeSSE    = "text/event-stream"
)

// Format is a wire encoding of a crumb stream. Every Append method appends to
// dst and returns the extended slice, so a stream reuses one buffer. Crumbs
// handed to a Format are already client-safe (see ClientSafe). The Ingress
// serves NDJSON and SSE; the type is exported so clients and tests can
// encode exactly what a server sends.
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

var (
	_ Format = NDJSON{}
	_ Format = SSE{}
)

// negotiate picks a request's format from its Accept header, by the rules
// of RFC 9110: each format takes the quality of the most specific media
// range that matches it (its own type, then text/* or application/*, then
// */*), and the higher quality wins. A tie (no Accept, */*, a header that
// names neither format) is def, the configured transport's format, unless
// the header refuses def (q=0) and not the other. Malformed ranges are
// skipped.
func negotiate(h http.Header, def Format) Format {
	accept := h.Values("Accept")
	if len(accept) == 0 {
		return def
	}
	qs, sseNamed := quality(accept, "text", "event-stream")
	qn, ndjsonNamed := quality(accept, "application", "x-ndjson")
	switch {
	case qs > qn:
		return SSE{}
	case qn > qs:
		return NDJSON{}
	case qs == 0 && def.ContentType() == ContentTypeSSE && sseNamed && !ndjsonNamed:
		return NDJSON{} // "text/event-stream;q=0": anything but SSE
	case qs == 0 && def.ContentType() != ContentTypeSSE && ndjsonNamed && !sseNamed:
		return SSE{}
	}
	return def
}

// quality is the q value Accept gives the media type typ/sub: the q of the
// most specific range that matches it, 0 when none does. matched reports
// whether a range did.
func quality(accept []string, typ, sub string) (q float64, matched bool) {
	best := -1
	for _, line := range accept {
		for rng := range strings.SplitSeq(line, ",") {
			rng = strings.TrimSpace(rng)
			if rng == "" {
				continue
			}
			mt, params, err := mime.ParseMediaType(rng)
			if err != nil {
				continue
			}
			rt, rs, ok := strings.Cut(mt, "/")
			if !ok {
				continue
			}
			var spec int
			switch {
			case rt == typ && rs == sub:
				spec = 2
			case rt == typ && rs == "*":
				spec = 1
			case rt == "*" && rs == "*":
				spec = 0
			default:
				continue
			}
			if spec <= best {
				continue
			}
			best, q = spec, 1
			if v, ok := params["q"]; ok {
				f, err := strconv.ParseFloat(v, 64)
				if err != nil || f < 0 || f > 1 {
					f = 0 // a malformed weight asks for nothing
				}
				q = f
			}
		}
	}
	return q, best >= 0
}
