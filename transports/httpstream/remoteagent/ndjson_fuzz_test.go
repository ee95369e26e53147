package remoteagent

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/breadai/bread/core"
)

// FuzzNDJSONDecoder: the NDJSON decoder never panics, every frame it
// returns is a decoded crumb, and every failure is an error with text.
func FuzzNDJSONDecoder(f *testing.F) {
	f.Add([]byte(`{"v":1,"type":"crumb","runId":"r","seq":1,"crumb":{"type":"text:delta","agentId":"a","timestamp":1,"delta":"hi"}}` + "\n\n"))
	f.Add([]byte("\n\n\n"))
	f.Add([]byte(`{"v":1,"type":"subscribe","runId":"r","afterSeq":0}` + "\n"))
	f.Add([]byte(`{"v":1,"type":"crumb","runId":"r","seq":1,"crumb":null}`))
	f.Add([]byte("\xff\xfe\r\n{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		d := newNDJSONDecoder(bytes.NewReader(data), 1024)
		for range 1000 {
			fr, err := d.next()
			if err != nil {
				var be *core.BreadError
				if err.Error() == "" || (!errors.As(err, &be) && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF)) {
					t.Fatalf("error %v", err)
				}
				return
			}
			if fr.Crumb == nil {
				t.Fatal("a frame without a crumb")
			}
		}
	})
}
