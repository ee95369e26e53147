package httpstream

import (
	"strconv"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/protocol"
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
	b, err := core.EncodeCrumb(c)
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
	dst = protocol.AppendJSONString(dst, b.AgentID)
	if b.RunID != "" {
		dst = append(dst, `,"runId":`...)
		dst = protocol.AppendJSONString(dst, b.RunID)
	}
	if b.SessionID != "" {
		dst = append(dst, `,"sessionId":`...)
		dst = protocol.AppendJSONString(dst, b.SessionID)
	}
	dst = append(dst, `,"timestamp":`...)
	dst = strconv.AppendInt(dst, b.Timestamp, 10)
	if b.Seq != 0 {
		dst = append(dst, `,"seq":`...)
		dst = strconv.AppendInt(dst, b.Seq, 10)
	}
	dst = append(dst, `,"delta":`...)
	dst = protocol.AppendJSONString(dst, delta)
	return append(dst, '}')
}
