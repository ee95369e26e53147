package redis

import (
	"strconv"
	"strings"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/protocol"
)

// frameField is the one field of a stream entry: a core/protocol CrumbFrame.
const frameField = "frame"

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
// ok is false for an id that does not parse.
func nextID(id string) (string, bool) {
	msText, seqText, found := strings.Cut(id, "-")
	if !found {
		return "", false
	}
	ms, err1 := strconv.ParseUint(msText, 10, 64)
	seq, err2 := strconv.ParseUint(seqText, 10, 64)
	if err1 != nil || err2 != nil {
		return "", false
	}
	if seq < ^uint64(0) {
		return msText + "-" + strconv.FormatUint(seq+1, 10), true
	}
	if ms == ^uint64(0) {
		return "", false // the largest id has no successor
	}
	return strconv.FormatUint(ms+1, 10) + "-0", true
}

// compareIDs orders two well-formed stream ids: -1, 0 or +1. An id that does
// not parse sorts first.
func compareIDs(a, b string) int {
	am, as, aok := splitID(a)
	bm, bs, bok := splitID(b)
	switch {
	case !aok && !bok:
		return 0
	case !aok:
		return -1
	case !bok:
		return 1
	case am != bm:
		return cmpUint(am, bm)
	default:
		return cmpUint(as, bs)
	}
}

func splitID(id string) (ms, seq uint64, ok bool) {
	msText, seqText, found := strings.Cut(id, "-")
	if !found {
		return 0, 0, false
	}
	ms, err1 := strconv.ParseUint(msText, 10, 64)
	seq, err2 := strconv.ParseUint(seqText, 10, 64)
	return ms, seq, err1 == nil && err2 == nil
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
