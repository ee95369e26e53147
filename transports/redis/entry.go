package redis

import (
	"cmp"
	"strconv"
	"strings"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/protocol"
)

// The fields of a stream entry: the core/protocol CrumbFrame; the id of the
// run's entry before it, when the writer knows it; the run's durable floor
// when it was written, when it had one. Readers need only the frame.
const (
	frameField = "frame"
	prevField  = "prev"
	floorField = "floor"
)

// streamKey is the key of a run's stream. The braces make the run id the
// Redis Cluster hash tag, so every command on one run goes to one slot.
func streamKey(prefix, runID string) string {
	return prefix + "{" + runID + "}"
}

// decodeEntry parses the fields of one stream entry. Anything that is not a
// crumb frame is a *core.BreadError with code PROTOCOL_DECODE_ERROR.
func decodeEntry(values map[string]any) (core.Frame, error) {
	v, ok := values[frameField]
	if !ok {
		return core.Frame{}, &core.BreadError{Code: core.CodeProtocolDecodeError, Message: `malformed stream entry: no "frame" field`}
	}
	s, ok := v.(string)
	if !ok {
		return core.Frame{}, &core.BreadError{Code: core.CodeProtocolDecodeError, Message: `malformed stream entry: "frame" is not a string`}
	}
	return protocol.DecodeCrumbFrame([]byte(s))
}

// nextID returns the smallest stream id greater than id ("ms-seq"), so a
// range can start after an entry without Redis 6.2's exclusive "(" syntax.
// ok is false for an id that does not parse or has no successor.
func nextID(id string) (string, bool) {
	ms, seq, ok := splitID(id)
	switch {
	case !ok:
		return "", false
	case seq < ^uint64(0):
		return strconv.FormatUint(ms, 10) + "-" + strconv.FormatUint(seq+1, 10), true
	case ms < ^uint64(0):
		return strconv.FormatUint(ms+1, 10) + "-0", true
	}
	return "", false // the largest id
}

// splitID parses a stream id "ms-seq".
func splitID(id string) (ms, seq uint64, ok bool) {
	msText, seqText, found := strings.Cut(id, "-")
	if !found {
		return 0, 0, false
	}
	ms, err1 := strconv.ParseUint(msText, 10, 64)
	seq, err2 := strconv.ParseUint(seqText, 10, 64)
	return ms, seq, err1 == nil && err2 == nil
}

// compareIDs orders two stream ids "ms-seq" as Redis does; an id that does
// not parse sorts first.
func compareIDs(a, b string) int {
	am, as, _ := splitID(a)
	bm, bs, _ := splitID(b)
	if c := cmp.Compare(am, bm); c != 0 {
		return c
	}
	return cmp.Compare(as, bs)
}

// entryLinks reads what an entry says of its place in the stream: the id
// of the entry before it (known is false when the writer did not know it,
// or an older bread wrote it) and the durable floor it was written with.
func entryLinks(values map[string]any) (prev string, known bool, floor int64) {
	prev, known = values[prevField].(string)
	if known {
		_, _, known = splitID(prev)
	}
	if v, ok := values[floorField].(string); ok {
		floor, _ = strconv.ParseInt(v, 10, 64)
	}
	return prev, known, floor
}
