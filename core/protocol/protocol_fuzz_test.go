package protocol_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/protocol"
)

// FuzzDecode checks that Decode never panics, that every failure has the one
// error shape, and that a decoded frame re-encodes to bytes that decode to an
// equal frame.
func FuzzDecode(f *testing.F) {
	var seq int64
	for _, c := range goldenCrumbs(f) {
		seq++
		f.Add(mustEncode(f, core.Frame{RunID: "run_" + c.CrumbType(), Seq: seq, Crumb: c}))
	}
	for _, s := range []string{
		`{"v":1,"type":"subscribe","runId":"r","afterSeq":0}`,
		`{"v":1,"type":"subscribe","runId":"r\u0000\"<>","afterSeq":-1}`,
		`{"v":1,"type":"crumb","runId":"r","seq":1,"crumb":null}`,
		`{"v":1,"type":"crumb","runId":"r","seq":1,"crumb":{"type":"nope"}}`,
		`{"v":1.0,"type":"subscribe","runId":"r","afterSeq":0}`,
		`{"v":"1","type":"subscribe","runId":"r","afterSeq":0}`,
		`{"v":1,"type":"crumb","runId":"\xff\xfe","seq":1,"crumb":{"type":"text:delta","agentId":"a","timestamp":1,"delta":"\xc3"}}`,
		``, `null`, `[]`, `{}`,
	} {
		f.Add([]byte(s))
	}

	f.Fuzz(func(t *testing.T, raw []byte) {
		m, err := protocol.Decode(raw)
		if err != nil {
			if m != nil {
				t.Fatalf("message %#v returned with error %v", m, err)
			}
			assertDecodeError(t, err, raw)
			return
		}
		switch fr := m.(type) {
		case protocol.CrumbFrame:
			if fr.Crumb == nil {
				t.Fatal("crumb frame without a crumb")
			}
			enc, err := protocol.EncodeCrumbFrame(fr.Frame())
			if err != nil {
				t.Fatalf("decoded frame does not re-encode: %v", err)
			}
			back, err := protocol.DecodeCrumbFrame(enc)
			if err != nil {
				t.Fatalf("re-encoded frame does not decode: %v\n%s", err, enc)
			}
			if back.RunID != fr.RunID || back.Seq != fr.Seq {
				t.Fatalf("header changed: %q/%d -> %q/%d", fr.RunID, fr.Seq, back.RunID, back.Seq)
			}
			want, err := json.Marshal(fr.Crumb)
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(back.Crumb)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("crumb changed\nfirst:  %s\nsecond: %s", want, got)
			}
			enc2, err := protocol.EncodeCrumbFrame(back)
			if err != nil || !bytes.Equal(enc, enc2) {
				t.Fatalf("frame encoding is not a fixed point\nfirst:  %s\nsecond: %s (%v)", enc, enc2, err)
			}
		case protocol.SubscribeFrame:
			enc := protocol.EncodeSubscribe(fr)
			back, err := protocol.Decode(enc)
			if err != nil {
				t.Fatalf("re-encoded subscribe does not decode: %v\n%s", err, enc)
			}
			if back != m {
				t.Fatalf("subscribe changed: %#v -> %#v", m, back)
			}
		default:
			t.Fatalf("Decode returned %T", m)
		}
	})
}
