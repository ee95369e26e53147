package httpchunked

import (
	"bytes"
	"testing"

	"github.com/breadai/bread/core"
)

// FuzzReadFrames: the NDJSON reader never panics, and every frame it yields
// is a decoded crumb.
func FuzzReadFrames(f *testing.F) {
	f.Add([]byte(`{"v":1,"type":"crumb","runId":"r","seq":1,"crumb":{"type":"text:delta","agentId":"a","timestamp":1,"delta":"hi"}}` + "\n\n"))
	f.Add([]byte("\n\n\n"))
	f.Add([]byte(`{"v":1,"type":"subscribe","runId":"r","afterSeq":0}` + "\n"))
	f.Add([]byte(`{"v":1,"type":"crumb","runId":"r","seq":1,"crumb":null}`))
	f.Add([]byte("\xff\xfe\r\n{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = readFrames(bytes.NewReader(data), 1024, func(fr core.Frame) bool {
			if fr.Crumb == nil {
				t.Fatal("a frame without a crumb")
			}
			return true
		})
	})
}
