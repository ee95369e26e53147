package httpchunked

import (
	"bufio"
	"bytes"
	"errors"
	"io"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/protocol"
)

// DefaultMaxLineBytes bounds one NDJSON line (one crumb).
const DefaultMaxLineBytes = 16 << 20

// readFrames reads NDJSON CrumbFrame lines from r and calls yield for each
// frame until yield returns false or r ends. Blank lines are heartbeats. A
// malformed line or one longer than maxLine is PROTOCOL_DECODE_ERROR; a read
// failure is returned as it is, io.EOF as nil.
func readFrames(r io.Reader, maxLine int, yield func(core.Frame) bool) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxLine)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		f, err := protocol.DecodeCrumbFrame(line)
		if err != nil {
			return err
		}
		if !yield(f) {
			return nil
		}
	}
	err := sc.Err()
	if errors.Is(err, bufio.ErrTooLong) {
		return &core.BreadError{Code: core.CodeProtocolDecodeError, Message: "a crumb frame line is longer than the reader's limit", Context: map[string]any{"maxLineBytes": maxLine}, Cause: err}
	}
	return err
}
