package httpstream

import (
	"encoding/json"
	"strconv"

	"github.com/breadai/bread/core"
)

// AppendCrumbJSON appends the JSON wire form of c to dst, byte for byte what
// json.Marshal(c) writes. Text and reasoning deltas, nearly every crumb of a
// stream, are written by hand: reflection-based encoding cost more than the
// rest of the path from model to socket.
func AppendCrumbJSON(dst []byte, c core.Crumb) ([]byte, error) {
	switch v := c.(type) {
	case *core.TextDelta:
		if v != nil {
			return appendDelta(dst, core.TypeTextDelta, &v.CrumbBase, v.Delta), nil
		}
	case *core.ReasoningDelta:
		if v != nil {
			return appendDelta(dst, core.TypeReasoningDelta, &v.CrumbBase, v.Delta), nil
		}
	}
	b, err := json.Marshal(c)
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}

// appendDelta follows the field order and omitempty rules of CrumbBase.
func appendDelta(dst []byte, typ string, b *core.CrumbBase, delta string) []byte {
	dst = append(dst, `{"type":"`...)
	dst = append(dst, typ...)
	dst = append(dst, `","agentId":`...)
	dst = AppendJSONString(dst, b.AgentID)
	if b.RunID != "" {
		dst = append(dst, `,"runId":`...)
		dst = AppendJSONString(dst, b.RunID)
	}
	if b.SessionID != "" {
		dst = append(dst, `,"sessionId":`...)
		dst = AppendJSONString(dst, b.SessionID)
	}
	dst = append(dst, `,"timestamp":`...)
	dst = strconv.AppendInt(dst, b.Timestamp, 10)
	if b.Seq != 0 {
		dst = append(dst, `,"seq":`...)
		dst = strconv.AppendInt(dst, b.Seq, 10)
	}
	dst = append(dst, `,"delta":`...)
	dst = AppendJSONString(dst, delta)
	return append(dst, '}')
}

// AppendJSONString appends s as encoding/json writes it. Plain printable ASCII,
// the common case, is copied; anything encoding/json would escape (quotes,
// backslashes, control bytes, <, >, &, non-ASCII) goes through it.
func AppendJSONString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s)
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}
