package core

import (
	"encoding/json"
	"reflect"
)

// Crumb is one typed event of a run. Every concrete crumb is a pointer to a
// struct in this package (for example *TextDelta) that embeds CrumbBase.
//
// The JSON wire shape of each crumb is identical to the original bread: a
// "type" discriminator followed by camelCase fields, optional fields omitted
// when empty. DecodeCrumb is the inverse of json.Marshal for every type.
//
// A crumb handed to the choke point belongs to it: the emitter must not change
// it afterwards, and listeners must treat it as read-only.
type Crumb interface {
	// CrumbType returns the wire discriminator, for example "text:delta".
	CrumbType() string
	// Base returns the fields every crumb shares.
	Base() *CrumbBase
}

// CrumbBase holds the fields every crumb carries.
//
// Seq is the crumb's per-run position in the durable crumb log, assigned by
// the Instance's choke point and never by emitters. For text:delta and
// reasoning:delta it is a watermark: the seq of the last durable entry, since
// deltas are aggregated before they are logged. Zero means "not sequenced"
// (a crumb consumed below the choke point) and is omitted on the wire.
type CrumbBase struct {
	AgentID   string `json:"agentId"`
	RunID     string `json:"runId,omitempty"`
	SessionID string `json:"sessionId,omitempty"`
	Timestamp int64  `json:"timestamp"`
	Seq       int64  `json:"seq,omitempty"`
}

// Base implements Crumb for every type that embeds CrumbBase.
func (b *CrumbBase) Base() *CrumbBase { return b }

// IsDelta reports whether a crumb type streams as many small pieces that the
// crumb log aggregates into one entry (text:delta and reasoning:delta).
func IsDelta(crumbType string) bool {
	return crumbType == TypeTextDelta || crumbType == TypeReasoningDelta
}

// IsTerminal reports whether a crumb ends its run's stream: agent:run:end or
// agent:error. (human:required ends a call's stream but not the run.)
func IsTerminal(crumbType string) bool {
	return crumbType == TypeAgentRunEnd || crumbType == TypeAgentError
}

// EndsCall reports whether c ends the stream of one call (a run, a
// resume): a terminal crumb, or the last human:required of a suspension. A
// turn that asks several humans emits one human:required per checkpoint,
// each listing the checkpoints the run waits on in Set; the last of them
// is the one naming itself last.
func EndsCall(c Crumb) bool {
	if IsTerminal(c.CrumbType()) {
		return true
	}
	h, ok := c.(*HumanRequired)
	return ok && (len(h.Set) == 0 || h.Set[len(h.Set)-1] == h.CheckpointID)
}

// marshalTagged encodes v (a method-less copy of a struct) with a constant
// discriminator written first, so every crumb shares one encoding path. key
// and value must not need JSON escaping.
func marshalTagged(key, value string, v any) ([]byte, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(body)+len(key)+len(value)+8)
	out = append(out, '{', '"')
	out = append(out, key...)
	out = append(out, '"', ':', '"')
	out = append(out, value...)
	out = append(out, '"')
	if len(body) > 2 {
		out = append(out, ',')
	}
	return append(out, body[1:]...), nil
}

// rawPayloader is implemented by crumbs with free-form JSON fields (input,
// output, args, result, schema, response). DecodeCrumb fills those fields with
// json.RawMessage so a decoded crumb re-encodes to the same JSON, and numbers
// and key order survive a round trip through a store or a transport.
type rawPayloader interface {
	rawPayload() []*any
}

var crumbFactories = map[string]func() Crumb{
	TypeAgentRunStart:      func() Crumb { return new(AgentRunStart) },
	TypeAgentRunEnd:        func() Crumb { return new(AgentRunEnd) },
	TypeTextDelta:          func() Crumb { return new(TextDelta) },
	TypeReasoningDelta:     func() Crumb { return new(ReasoningDelta) },
	TypeFileGenerated:      func() Crumb { return new(FileGenerated) },
	TypeToolCall:           func() Crumb { return new(ToolCall) },
	TypeToolResult:         func() Crumb { return new(ToolResult) },
	TypeToolResultPartial:  func() Crumb { return new(ToolResultPartial) },
	TypeToolError:          func() Crumb { return new(ToolError) },
	TypeToolInputStart:     func() Crumb { return new(ToolInputStart) },
	TypeToolInputDelta:     func() Crumb { return new(ToolInputDelta) },
	TypeToolInputEnd:       func() Crumb { return new(ToolInputEnd) },
	TypeHumanRequired:      func() Crumb { return new(HumanRequired) },
	TypeHumanResumed:       func() Crumb { return new(HumanResumed) },
	TypeSubagentRunStart:   func() Crumb { return new(SubagentRunStart) },
	TypeSubagentRunEnd:     func() Crumb { return new(SubagentRunEnd) },
	TypePipelineStepStart:  func() Crumb { return new(PipelineStepStart) },
	TypePipelineStepEnd:    func() Crumb { return new(PipelineStepEnd) },
	TypeLoopStart:          func() Crumb { return new(LoopStart) },
	TypeLoopIterationStart: func() Crumb { return new(LoopIterationStart) },
	TypeLoopIterationEnd:   func() Crumb { return new(LoopIterationEnd) },
	TypeLoopEnd:            func() Crumb { return new(LoopEnd) },
	TypeTaskStart:          func() Crumb { return new(TaskStart) },
	TypeTaskEnd:            func() Crumb { return new(TaskEnd) },
	TypeAgentError:         func() Crumb { return new(AgentError) },
}

// CrumbTypes lists every crumb type in the order of the original's lexicon.
func CrumbTypes() []string {
	return []string{
		TypeAgentRunStart, TypeTextDelta, TypeReasoningDelta, TypeFileGenerated,
		TypeToolCall, TypeToolInputStart, TypeToolInputDelta, TypeToolInputEnd,
		TypeToolResult, TypeToolResultPartial, TypeToolError,
		TypeHumanRequired, TypeHumanResumed, TypeSubagentRunStart, TypeSubagentRunEnd,
		TypePipelineStepStart, TypePipelineStepEnd,
		TypeLoopStart, TypeLoopIterationStart, TypeLoopIterationEnd, TypeLoopEnd,
		TypeTaskStart, TypeTaskEnd, TypeAgentRunEnd, TypeAgentError,
	}
}

// DecodeCrumb parses one crumb from its JSON wire form. It never panics; any
// malformed input (invalid JSON, not an object, a missing or unknown "type",
// a field of the wrong JSON kind) is a *BreadError with code
// PROTOCOL_DECODE_ERROR whose context carries a truncated copy of raw.
func DecodeCrumb(raw []byte) (Crumb, error) {
	var head struct {
		Type *string `json:"type"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, decodeError("crumb is not a JSON object", raw, err)
	}
	if head.Type == nil {
		return nil, decodeError(`crumb has no "type"`, raw, nil)
	}
	factory, ok := crumbFactories[*head.Type]
	if !ok {
		return nil, decodeError("unknown crumb type "+quoteTruncated(*head.Type), raw, nil)
	}
	c := factory()
	var fields []*any
	if rp, ok := c.(rawPayloader); ok {
		fields = rp.rawPayload()
		for _, f := range fields {
			*f = new(json.RawMessage)
		}
	}
	if err := json.Unmarshal(raw, c); err != nil {
		return nil, decodeError("crumb "+*head.Type+" has a malformed field", raw, err)
	}
	for _, f := range fields {
		if rm, ok := (*f).(*json.RawMessage); ok {
			if rm == nil || len(*rm) == 0 {
				*f = nil
			} else {
				*f = *rm // UnmarshalJSON already copied the bytes
			}
		}
	}
	return c, nil
}

// EncodeCrumb returns the JSON wire form of c, byte for byte what
// json.Marshal(c) writes. Every crumb type's MarshalJSON writes compact,
// HTML-escaped JSON already, so it is called directly: json.Marshal would
// scan and copy its output once more.
func EncodeCrumb(c Crumb) ([]byte, error) {
	if m, ok := c.(json.Marshaler); ok && !nilPointer(c) {
		return m.MarshalJSON()
	}
	return json.Marshal(c)
}

func nilPointer(c Crumb) bool {
	v := reflect.ValueOf(c)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

const maxRawInError = 200

func decodeError(reason string, raw []byte, cause error) *BreadError {
	return &BreadError{
		Code:    CodeProtocolDecodeError,
		Message: "malformed bread crumb: " + reason,
		Context: map[string]any{"raw": truncate(string(raw), maxRawInError)},
		Cause:   cause,
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	// Cut on a rune boundary so the copy stays valid UTF-8, backing up at
	// most three bytes: input made of stray continuation bytes must not
	// shrink the copy to nothing.
	for i := 0; i < 3 && n > 0 && s[n]&0xC0 == 0x80; i++ {
		n--
	}
	return s[:n] + "…"
}

func quoteTruncated(s string) string { return `"` + truncate(s, 64) + `"` }
