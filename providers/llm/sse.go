package llm

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// maxSSEEvent bounds one server-sent event, so a hostile or broken server
// cannot make the reader buffer without limit.
const maxSSEEvent = 4 << 20

var errSSETooLarge = errors.New("server-sent event larger than 4 MiB")

// sseReader reads text/event-stream framing (the WHATWG rules: fields
// "event" and "data", comments starting with ':', events ended by a blank
// line, LF or CRLF line ends). The adapters whose SDK parses SSE itself
// do not use it; Cohere's does.
type sseReader struct {
	r     *bufio.Reader
	event []byte
	data  []byte
}

func newSSEReader(r io.Reader) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, 16<<10)}
}

// next returns the next event's type and data, valid until the following
// call. It returns io.EOF at a clean end (a partial event at EOF is
// dropped, as the spec says) and io.ErrUnexpectedEOF or the read error when
// the body breaks off.
func (s *sseReader) next() (event, data []byte, err error) {
	s.event, s.data = s.event[:0], s.data[:0]
	hasData := false
	for {
		line, err := s.readLine()
		if err != nil {
			return nil, nil, err
		}
		if len(line) == 0 {
			if hasData {
				// The data buffer ends with the newline each data line adds.
				return s.event, s.data[:len(s.data)-1], nil
			}
			s.event = s.event[:0]
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value, found := bytes.Cut(line, []byte{':'})
		if found && len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
		switch string(field) {
		case "event":
			s.event = append(s.event[:0], value...)
		case "data":
			if len(s.data)+len(value) > maxSSEEvent {
				return nil, nil, errSSETooLarge
			}
			s.data = append(s.data, value...)
			s.data = append(s.data, '\n')
			hasData = true
		}
	}
}

// readLine returns one line without its terminator.
func (s *sseReader) readLine() ([]byte, error) {
	line, err := s.r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		// A long line: gather it, within the event bound.
		buf := append([]byte(nil), line...)
		for err == bufio.ErrBufferFull {
			if len(buf) > maxSSEEvent {
				return nil, errSSETooLarge
			}
			line, err = s.r.ReadSlice('\n')
			buf = append(buf, line...)
		}
		line = buf
	}
	if err == io.EOF {
		if len(line) == 0 {
			return nil, io.EOF
		}
		// A last line without a newline still ends the stream.
		return nil, io.ErrUnexpectedEOF
	}
	if err != nil {
		return nil, err
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, nil
}
