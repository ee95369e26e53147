package redis

import (
	"errors"
	"testing"

	"github.com/breadai/bread/core"
)

// FuzzDecodeEntry feeds arbitrary "frame" fields to the entry decoder a
// subscription runs on everything it reads: it must never panic, and
// anything it accepts must be a crumb frame that re-encodes.
func FuzzDecodeEntry(f *testing.F) {
	f.Add(`{"v":1,"type":"crumb","runId":"r","seq":1,"crumb":{"type":"tool:input:end","agentId":"a","runId":"r","sessionId":"s","timestamp":1,"toolCallId":"c"}}`)
	f.Add(`{"v":1,"type":"subscribe","runId":"r","afterSeq":0}`)
	f.Add(`{"v":2}`)
	f.Add(`not json`)
	f.Add(``)
	f.Fuzz(func(t *testing.T, raw string) {
		fr, err := decodeEntry(map[string]any{frameField: raw})
		if err != nil {
			var be *core.BreadError
			if !errors.As(err, &be) || be.Code != core.CodeProtocolDecodeError {
				t.Fatalf("error %v is not PROTOCOL_DECODE_ERROR", err)
			}
			return
		}
		if fr.Crumb == nil {
			t.Fatal("accepted a frame without a crumb")
		}
	})
}

func TestDecodeEntryFieldShapes(t *testing.T) {
	for name, values := range map[string]map[string]any{
		"no field":   {"other": "x"},
		"not string": {frameField: int64(3)},
		"nil map":    nil,
	} {
		if _, err := decodeEntry(values); !errors.Is(err, &core.BreadError{Code: core.CodeProtocolDecodeError}) {
			t.Errorf("%s: err = %v, want PROTOCOL_DECODE_ERROR", name, err)
		}
	}
}

// FuzzStreamIDs checks that nextID returns the very next id.
func FuzzStreamIDs(f *testing.F) {
	f.Add("0-0")
	f.Add("1700000000000-18446744073709551615")
	f.Add("x-1")
	f.Fuzz(func(t *testing.T, id string) {
		next, ok := nextID(id)
		if !ok {
			return
		}
		ms, seq, _ := splitID(id)
		nms, nseq, nok := splitID(next)
		if !nok || !(nms > ms || nms == ms && nseq > seq) {
			t.Fatalf("nextID(%q) = %q does not sort after it", id, next)
		}
		if nms == ms && nseq != seq+1 || nms > ms && (nms != ms+1 || nseq != 0) {
			t.Fatalf("nextID(%q) = %q skips ids", id, next)
		}
	})
}
