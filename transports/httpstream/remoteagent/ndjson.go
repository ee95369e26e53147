package remoteagent

import (
	"bufio"
	"bytes"
	"errors"
	"io"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/protocol"
)

// ndjsonDecoder reads one core/protocol CrumbFrame per line. Blank lines are
// heartbeats. A malformed line, or one longer than the limit, is
// PROTOCOL_DECODE_ERROR; the end of the body is io.EOF; a read failure is
// returned as it is.
type ndjsonDecoder struct {
	sc  *bufio.Scanner
	max int
}

func newNDJSONDecoder(r io.Reader, maxLine int) *ndjsonDecoder {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxLine)
	sc.Split(scanWholeLines)
	return &ndjsonDecoder{sc: sc, max: maxLine}
}

func (d *ndjsonDecoder) next() (core.Frame, error) {
	for d.sc.Scan() {
		line := bytes.TrimSpace(d.sc.Bytes())
		if len(line) == 0 {
			continue
		}
		return protocol.DecodeCrumbFrame(line)
	}
	err := d.sc.Err()
	if errors.Is(err, errPartialLine) {
		return core.Frame{}, io.ErrUnexpectedEOF
	}
	if errors.Is(err, bufio.ErrTooLong) {
		return core.Frame{}, &core.BreadError{Code: core.CodeProtocolDecodeError, Message: "a crumb frame line is longer than the reader's limit", Context: map[string]any{"maxLineBytes": d.max}, Cause: err}
	}
	if err == nil {
		err = io.EOF
	}
	return core.Frame{}, err
}

// errPartialLine is a body that ended in the middle of a line: the
// connection dropped mid-frame, which a reconnect recovers, never a
// malformed frame.
var errPartialLine = errors.New("remoteagent: the stream ended in the middle of a line")

// scanWholeLines is bufio.ScanLines without its last, unterminated line:
// every frame the server writes ends with a newline.
func scanWholeLines(data []byte, atEOF bool) (advance int, token []byte, err error) {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		return i + 1, data[:i], nil
	}
	if atEOF && len(data) > 0 {
		return 0, nil, errPartialLine
	}
	return 0, nil, nil
}
