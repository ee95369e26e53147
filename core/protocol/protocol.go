package protocol

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/breadai/bread/core"
)

// Version is the protocol version this package speaks.
const Version = 1

// The frame type discriminators.
const (
	TypeCrumb     = "crumb"
	TypeSubscribe = "subscribe"
)

// Message is a decoded frame: a CrumbFrame or a SubscribeFrame.
type Message interface{ frameType() string }

// CrumbFrame is one crumb of a run on the wire.
type CrumbFrame struct {
	RunID string
	Seq   int64
	Crumb core.Crumb
}

// SubscribeFrame asks for a run's frames with Seq > AfterSeq.
type SubscribeFrame struct {
	RunID    string
	AfterSeq int64
}

func (CrumbFrame) frameType() string     { return TypeCrumb }
func (SubscribeFrame) frameType() string { return TypeSubscribe }

// Frame converts to the transport's frame.
func (f CrumbFrame) Frame() core.Frame { return core.Frame{RunID: f.RunID, Seq: f.Seq, Crumb: f.Crumb} }

// AppendCrumbFrame appends the wire form of f to dst, without a newline.
func AppendCrumbFrame(dst []byte, f core.Frame) ([]byte, error) {
	if f.Crumb == nil {
		return dst, errNoCrumb
	}
	crumb, err := json.Marshal(f.Crumb)
	if err != nil {
		return dst, err
	}
	if string(crumb) == "null" { // a typed nil pointer
		return dst, errNoCrumb
	}
	dst = append(dst, `{"v":1,"type":"crumb","runId":`...)
	dst = AppendJSONString(dst, f.RunID)
	dst = append(dst, `,"seq":`...)
	dst = strconv.AppendInt(dst, f.Seq, 10)
	dst = append(dst, `,"crumb":`...)
	dst = append(dst, crumb...)
	return append(dst, '}'), nil
}

// errNoCrumb refuses to write a frame Decode would reject.
var errNoCrumb = &core.BreadError{Code: core.CodeValidationError, Message: "bread protocol: a crumb frame needs a crumb"}

// EncodeCrumbFrame returns the wire form of f.
func EncodeCrumbFrame(f core.Frame) ([]byte, error) { return AppendCrumbFrame(nil, f) }

// EncodeSubscribe returns the wire form of a subscribe frame.
func EncodeSubscribe(f SubscribeFrame) []byte {
	dst := append([]byte(nil), `{"v":1,"type":"subscribe","runId":`...)
	dst = AppendJSONString(dst, f.RunID)
	dst = append(dst, `,"afterSeq":`...)
	dst = strconv.AppendInt(dst, f.AfterSeq, 10)
	return append(dst, '}')
}

type wireFrame struct {
	V        *int64          `json:"v"`
	Type     *string         `json:"type"`
	RunID    *string         `json:"runId"`
	Seq      *int64          `json:"seq"`
	AfterSeq *int64          `json:"afterSeq"`
	Crumb    json.RawMessage `json:"crumb"`
}

// Decode parses one frame.
func Decode(raw []byte) (Message, error) {
	var w wireFrame
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, decodeError("not a JSON object with the frame's field types", raw, err)
	}
	if w.V == nil || *w.V != Version {
		got := "none"
		if w.V != nil {
			got = strconv.FormatInt(*w.V, 10)
		}
		return nil, decodeError("unsupported version "+got+" (expected 1)", raw, nil)
	}
	if w.RunID == nil {
		return nil, decodeError(`missing "runId"`, raw, nil)
	}
	if w.Type == nil {
		return nil, decodeError(`missing "type"`, raw, nil)
	}
	switch *w.Type {
	case TypeCrumb:
		if w.Seq == nil || len(w.Crumb) == 0 || string(w.Crumb) == "null" {
			return nil, decodeError(`crumb frame missing "seq" or "crumb"`, raw, nil)
		}
		c, err := core.DecodeCrumb(w.Crumb)
		if err != nil {
			return nil, decodeError("crumb frame holds a malformed crumb", raw, err)
		}
		return CrumbFrame{RunID: *w.RunID, Seq: *w.Seq, Crumb: c}, nil
	case TypeSubscribe:
		if w.AfterSeq == nil {
			return nil, decodeError(`subscribe frame missing "afterSeq"`, raw, nil)
		}
		return SubscribeFrame{RunID: *w.RunID, AfterSeq: *w.AfterSeq}, nil
	}
	return nil, decodeError("unknown frame type "+strconv.Quote(truncate(*w.Type, 64)), raw, nil)
}

// DecodeCrumbFrame parses a frame that must be a crumb frame.
func DecodeCrumbFrame(raw []byte) (core.Frame, error) {
	m, err := Decode(raw)
	if err != nil {
		return core.Frame{}, err
	}
	cf, ok := m.(CrumbFrame)
	if !ok {
		return core.Frame{}, decodeError("expected a crumb frame, got "+m.frameType(), raw, nil)
	}
	return cf.Frame(), nil
}

const maxRaw = 200

func decodeError(reason string, raw []byte, cause error) *core.BreadError {
	return &core.BreadError{
		Code:    core.CodeProtocolDecodeError,
		Message: "malformed bread protocol frame: " + reason,
		Context: map[string]any{"raw": truncate(string(raw), maxRaw)},
		Cause:   cause,
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	// Back up at most three bytes to a rune start; invalid UTF-8 made of
	// continuation bytes must not shrink the copy to nothing.
	for i := 0; i < utf8.UTFMax-1 && n > 0 && !utf8.RuneStart(s[n]); i++ {
		n--
	}
	return s[:n] + "…"
}

// AppendJSONString appends s as encoding/json writes it. Run ids and most
// deltas are plain printable ASCII, which is copied; anything encoding/json
// would escape (quotes, backslashes, control bytes, <, >, &, non-ASCII) goes
// through it, so the bytes match exactly. Transports that hand-encode hot
// frames share it.
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
