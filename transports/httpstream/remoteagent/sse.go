package remoteagent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/transports/httpstream"
)

// sseDecoder reads the events of bread's SSE streams,
//
//	id: <seq>
//	data: {"type":"<crumb type>","payload":<crumb>}
//
// into frames. An error event (a failure before the run existed) is returned
// as its error, a malformed event as PROTOCOL_DECODE_ERROR: both are
// *core.BreadError, which end the run. The end of the body is io.EOF; a
// read failure is returned as it is.
type sseDecoder struct{ er *eventReader }

func newSSEDecoder(r io.Reader, maxEvent int) *sseDecoder {
	return &sseDecoder{er: newEventReader(r, maxEvent)}
}

func (d *sseDecoder) next() (core.Frame, error) {
	ev, err := d.er.next()
	if err != nil {
		return core.Frame{}, err
	}
	c, seq, err := decodeEvent(ev)
	if err != nil {
		return core.Frame{}, err
	}
	return core.Frame{RunID: c.Base().RunID, Seq: seq, Crumb: c}, nil
}

type wireEvent struct {
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload"`
}

// decodeEvent turns one event into a crumb and its seq (the event id, or the
// crumb's own seq without one). An error event is returned as its error.
func decodeEvent(ev event) (core.Crumb, int64, error) {
	var w wireEvent
	if err := json.Unmarshal(ev.data, &w); err != nil || w.Type == "" {
		return nil, 0, malformed(ev.data, err)
	}
	if w.Type == httpstream.SSEErrorEvent {
		var ce core.ClientError
		if err := json.Unmarshal(w.Payload, &ce); err != nil || ce.Code == "" {
			return nil, 0, malformed(ev.data, err)
		}
		return nil, 0, &core.BreadError{Code: ce.Code, Message: ce.Message}
	}
	c, err := core.DecodeCrumb(w.Payload)
	if err != nil {
		return nil, 0, err
	}
	if c.CrumbType() != w.Type {
		return nil, 0, malformed(ev.data, nil)
	}
	seq := c.Base().Seq
	if ev.hasID {
		if n, err := strconv.ParseInt(ev.id, 10, 64); err == nil && n > 0 {
			seq = n
		}
	}
	return c, seq, nil
}

func malformed(data []byte, cause error) error {
	raw := string(data)
	if len(raw) > 200 {
		raw = raw[:200] + "…"
	}
	return &core.BreadError{Code: core.CodeProtocolDecodeError, Message: `malformed SSE crumb event: expected {"type","payload"}`, Context: map[string]any{"raw": raw}, Cause: cause}
}

// event is one dispatched SSE event.
type event struct {
	id    string
	hasID bool
	data  []byte
}

// eventReader parses an SSE stream as the WHATWG spec reads it: lines end
// in CRLF, LF or CR; a line starting with ':' is a comment; "field: value"
// with one optional space; a blank line dispatches the event when it has
// data, and an id read before it, in the same block or an earlier one
// without data, is that event's. Fields other than id and data are
// ignored (retry tunes browsers).
type eventReader struct {
	sc   *bufio.Scanner
	max  int
	data []byte
}

func newEventReader(r io.Reader, maxEvent int) *eventReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxEvent)
	sc.Split(scanLines)
	return &eventReader{sc: sc, max: maxEvent}
}

// next returns the next event. io.EOF means the stream ended (an event
// without its blank line is dropped, as the spec says); an event over the
// size limit is PROTOCOL_DECODE_ERROR; other errors come from the reader.
func (er *eventReader) next() (event, error) {
	var ev event
	er.data = er.data[:0]
	seenData := false
	for er.sc.Scan() {
		line := er.sc.Bytes()
		if len(line) == 0 {
			if seenData {
				ev.data = bytes.TrimSuffix(er.data, []byte{'\n'})
				return ev, nil
			}
			// A dispatch without data delivers nothing but keeps the id
			// for the event that follows (WHATWG's last event ID buffer):
			// a bread server writes each id in a block of its own before
			// its event's data.
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			value = bytes.TrimPrefix(value, []byte{' '})
		}
		switch string(field) {
		case "data":
			if len(er.data)+len(value)+1 > er.max {
				return event{}, tooLarge(er.max, nil)
			}
			er.data = append(er.data, value...)
			er.data = append(er.data, '\n')
			seenData = true
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				ev.id, ev.hasID = string(value), true
			}
		}
	}
	err := er.sc.Err()
	if errors.Is(err, bufio.ErrTooLong) {
		return event{}, tooLarge(er.max, err)
	}
	if err == nil {
		err = io.EOF
	}
	return event{}, err
}

func tooLarge(max int, cause error) error {
	return &core.BreadError{Code: core.CodeProtocolDecodeError, Message: "an SSE event is longer than the reader's limit", Context: map[string]any{"maxEventBytes": max}, Cause: cause}
}

// scanLines splits on CRLF, LF or a lone CR.
func scanLines(data []byte, atEOF bool) (advance int, token []byte, err error) {
	if atEOF && len(data) == 0 {
		return 0, nil, nil
	}
	if i := bytes.IndexAny(data, "\r\n"); i >= 0 {
		if data[i] == '\n' {
			return i + 1, data[:i], nil
		}
		if i+1 < len(data) {
			if data[i+1] == '\n' {
				return i + 2, data[:i], nil
			}
			return i + 1, data[:i], nil
		}
		if atEOF {
			return i + 1, data[:i], nil
		}
		return 0, nil, nil // a CR at the end of the buffer: is an LF next?
	}
	if atEOF {
		return len(data), data, nil
	}
	return 0, nil, nil
}
