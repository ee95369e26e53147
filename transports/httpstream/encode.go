package httpstream

import (
	"encoding/json"
	"strconv"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/protocol"
)

// AppendCrumbJSON appends the JSON wire form of c to dst, byte for byte what
// json.Marshal(c) writes. Text and reasoning deltas, nearly every crumb of a
// stream, are written by hand: reflection-based encoding cost more than the
// rest of the path from model to socket. So are a run's start and end (all
// of a short run but its one delta), but for their free-form input and
// output, unless a string, and an end's files.
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
	case *core.AgentRunStart:
		if v != nil {
			if out, ok := appendRunStart(dst, v); ok {
				return out, nil
			}
		}
	case *core.AgentRunEnd:
		if v != nil && len(v.Files) == 0 {
			if out, ok := appendRunEnd(dst, v); ok {
				return out, nil
			}
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
	dst = appendBase(dst, typ, b)
	dst = append(dst, `,"delta":`...)
	dst = protocol.AppendJSONString(dst, delta)
	return append(dst, '}')
}

// appendRunStart follows core.AgentRunStart's fields; ok is false when its
// input does not encode (AppendCrumbJSON then reports json.Marshal's
// error).
func appendRunStart(dst []byte, c *core.AgentRunStart) (out []byte, ok bool) {
	out = appendBase(dst, core.TypeAgentRunStart, &c.CrumbBase)
	out = append(out, `,"input":`...)
	if out, ok = appendValue(out, c.Input); !ok {
		return dst, false
	}
	if c.Skill != "" {
		out = append(out, `,"skill":`...)
		out = protocol.AppendJSONString(out, c.Skill)
	}
	if c.ParentRunID != "" {
		out = append(out, `,"parentRunId":`...)
		out = protocol.AppendJSONString(out, c.ParentRunID)
	}
	return append(out, '}'), true
}

// appendRunEnd follows core.AgentRunEnd's fields, for an end without files;
// ok is false when its output does not encode.
func appendRunEnd(dst []byte, c *core.AgentRunEnd) (out []byte, ok bool) {
	out = appendBase(dst, core.TypeAgentRunEnd, &c.CrumbBase)
	out = append(out, `,"output":`...)
	if out, ok = appendValue(out, c.Output); !ok {
		return dst, false
	}
	out = append(out, `,"durationMs":`...)
	out = strconv.AppendInt(out, c.DurationMs, 10)
	if c.Usage != nil {
		out = append(out, `,"usage":`...)
		out = appendUsage(out, *c.Usage)
	}
	if len(c.ModelCalls) > 0 {
		out = append(out, `,"modelCalls":[`...)
		for i, u := range c.ModelCalls {
			if i > 0 {
				out = append(out, ',')
			}
			out = appendUsage(out, u)
		}
		out = append(out, ']')
	}
	return append(out, '}'), true
}

// appendUsage follows core.Usage's fields, every one omitempty.
func appendUsage(dst []byte, u core.Usage) []byte {
	dst = append(dst, '{')
	sep := false
	for _, f := range [...]struct {
		key string
		n   int64
	}{{`"inputTokens":`, u.InputTokens}, {`"outputTokens":`, u.OutputTokens}, {`"totalTokens":`, u.TotalTokens}} {
		if f.n == 0 {
			continue
		}
		if sep {
			dst = append(dst, ',')
		}
		dst = append(dst, f.key...)
		dst = strconv.AppendInt(dst, f.n, 10)
		sep = true
	}
	return append(dst, '}')
}

// appendValue appends a free-form field's value: a string (a text run's
// output) by hand, anything else as json.Marshal writes it inside a
// struct. ok is false when it does not encode.
func appendValue(dst []byte, v any) ([]byte, bool) {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...), true
	case string:
		return protocol.AppendJSONString(dst, x), true
	case json.RawMessage:
		if plainJSONString(x) { // a run's input as a client posts it
			return append(dst, x...), true
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return dst, false
	}
	return append(dst, b...), true
}

// plainJSONString reports whether raw is one JSON string token of
// printable ASCII that needs no escape, which json.Marshal writes as it
// is: no backslash, no quote inside, none of the <, > and & it escapes
// for HTML, no byte it would validate or rewrite.
func plainJSONString(raw []byte) bool {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return false
	}
	for _, c := range raw[1 : len(raw)-1] {
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// appendBase opens a crumb's object: its type, then CrumbBase's fields in
// their order, with their omitempty rules.
func appendBase(dst []byte, typ string, b *core.CrumbBase) []byte {
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
	return dst
}
