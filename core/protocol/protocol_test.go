package protocol_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/protocol"
)

// The crumb goldens are shared with package core; they are hand-written from
// the original's TypeScript types.
var goldenGlobs = []string{"../testdata/crumbs/*.json", "../testdata/crumbs/minimal/*.json"}

func goldenCrumbs(t testing.TB) map[string]core.Crumb {
	t.Helper()
	out := map[string]core.Crumb{}
	for _, g := range goldenGlobs {
		paths, err := filepath.Glob(g)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			c, err := core.DecodeCrumb(b)
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			out[p] = c
		}
	}
	if len(out) < 2*len(core.CrumbTypes()) {
		t.Fatalf("found %d goldens, want %d", len(out), 2*len(core.CrumbTypes()))
	}
	return out
}

func mustMarshal(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func textDelta(runID string, seq int64, delta string) *core.TextDelta {
	return &core.TextDelta{
		CrumbBase: core.CrumbBase{AgentID: "echo", RunID: runID, SessionID: "sess_1", Timestamp: 1718035200000, Seq: seq},
		Delta:     delta,
	}
}

func TestCrumbFrameRoundTripEveryGolden(t *testing.T) {
	seen := map[string]bool{}
	var seq int64
	for path, c := range goldenCrumbs(t) {
		seq++
		seen[c.CrumbType()] = true
		runID := c.Base().RunID
		if runID == "" { // agent:error before the run existed
			runID = "run_unknown"
		}
		f := core.Frame{RunID: runID, Seq: seq, Crumb: c}
		enc, err := protocol.EncodeCrumbFrame(f)
		if err != nil {
			t.Fatalf("%s: encode: %v", path, err)
		}
		if !json.Valid(enc) {
			t.Fatalf("%s: invalid JSON: %s", path, enc)
		}
		m, err := protocol.Decode(enc)
		if err != nil {
			t.Fatalf("%s: decode: %v", path, err)
		}
		cf, ok := m.(protocol.CrumbFrame)
		if !ok {
			t.Fatalf("%s: decoded %T, want protocol.CrumbFrame", path, m)
		}
		if cf.RunID != f.RunID || cf.Seq != f.Seq {
			t.Errorf("%s: frame header = %q/%d, want %q/%d", path, cf.RunID, cf.Seq, f.RunID, f.Seq)
		}
		if reflect.TypeOf(cf.Crumb) != reflect.TypeOf(c) {
			t.Errorf("%s: crumb decoded as %T, want %T", path, cf.Crumb, c)
		}
		if got, want := mustMarshal(t, cf.Crumb), mustMarshal(t, c); !bytes.Equal(got, want) {
			t.Errorf("%s: crumb changed\n got: %s\nwant: %s", path, got, want)
		}
		// The crumb inside the frame is the crumb's own encoding, verbatim.
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(enc, &fields); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(fields["crumb"], mustMarshal(t, c)) {
			t.Errorf("%s: frame's crumb = %s", path, fields["crumb"])
		}

		cfr, err := protocol.DecodeCrumbFrame(enc)
		if err != nil {
			t.Fatalf("%s: DecodeCrumbFrame: %v", path, err)
		}
		if cfr.RunID != f.RunID || cfr.Seq != f.Seq || !bytes.Equal(mustMarshal(t, cfr.Crumb), mustMarshal(t, c)) {
			t.Errorf("%s: DecodeCrumbFrame = %+v", path, cfr)
		}
		if got := cf.Frame(); got != (core.Frame{RunID: cf.RunID, Seq: cf.Seq, Crumb: cf.Crumb}) {
			t.Errorf("%s: CrumbFrame.Frame() = %+v, want the frame's own fields", path, got)
		}
	}
	for _, typ := range core.CrumbTypes() {
		if !seen[typ] {
			t.Errorf("no frame carried a %s crumb", typ)
		}
	}
}

func TestSubscribeFrameRoundTrip(t *testing.T) {
	for _, f := range []protocol.SubscribeFrame{
		{RunID: "run_01J9Z3K7Q8X2VZC5M4N6P0R1ST", AfterSeq: 0},
		{RunID: "run_1", AfterSeq: 6},
		{RunID: "run_1", AfterSeq: math.MaxInt64},
		{RunID: "", AfterSeq: 1},
	} {
		enc := protocol.EncodeSubscribe(f)
		m, err := protocol.Decode(enc)
		if err != nil {
			t.Fatalf("Decode(%s): %v", enc, err)
		}
		if got, ok := m.(protocol.SubscribeFrame); !ok || got != f {
			t.Errorf("Decode(%s) = %#v, want %#v", enc, m, f)
		}
	}
}

func TestEncodeCrumbFrameWireBytes(t *testing.T) {
	f := core.Frame{RunID: "run_1", Seq: 7, Crumb: textDelta("run_1", 7, "hi")}
	const want = `{"v":1,"type":"crumb","runId":"run_1","seq":7,"crumb":` +
		`{"type":"text:delta","agentId":"echo","runId":"run_1","sessionId":"sess_1","timestamp":1718035200000,"seq":7,"delta":"hi"}}`
	got, err := protocol.EncodeCrumbFrame(f)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("EncodeCrumbFrame =\n%s\nwant\n%s", got, want)
	}

	// AppendCrumbFrame appends after what dst holds, with no newline.
	prefix := []byte("previous line\n")
	app, err := protocol.AppendCrumbFrame(append([]byte(nil), prefix...), f)
	if err != nil {
		t.Fatal(err)
	}
	if string(app) != string(prefix)+want {
		t.Errorf("AppendCrumbFrame = %q", app)
	}

	// Seq zero and negative are written as they are.
	z, _ := protocol.EncodeCrumbFrame(core.Frame{RunID: "r", Seq: 0, Crumb: textDelta("r", 0, "")})
	if !bytes.HasPrefix(z, []byte(`{"v":1,"type":"crumb","runId":"r","seq":0,"crumb":{`)) {
		t.Errorf("seq 0 frame = %s", z)
	}
}

func TestEncodeSubscribeWireBytes(t *testing.T) {
	got := protocol.EncodeSubscribe(protocol.SubscribeFrame{RunID: "run_1", AfterSeq: 6})
	const want = `{"v":1,"type":"subscribe","runId":"run_1","afterSeq":6}`
	if string(got) != want {
		t.Errorf("EncodeSubscribe = %s, want %s", got, want)
	}
}

func TestAppendCrumbFrameLeavesDstOnError(t *testing.T) {
	bad := &core.ToolCall{CrumbBase: core.CrumbBase{AgentID: "a", RunID: "r", Timestamp: 1}, ToolCallID: "c", ToolName: "t",
		Args: map[string]any{"ch": make(chan int)}}
	dst := []byte("keep")
	got, err := protocol.AppendCrumbFrame(dst, core.Frame{RunID: "r", Seq: 1, Crumb: bad})
	if err == nil {
		t.Fatalf("encoded an unencodable crumb: %s", got)
	}
	if string(got) != "keep" {
		t.Errorf("dst after a failed append = %q, want it untouched", got)
	}
}

// TestEncodeCrumbFrameRejectsNilCrumb: a frame without a crumb encodes as
// "crumb":null, which Decode rejects — the encoder should refuse it instead
// of putting an undecodable frame on the wire.
func TestEncodeCrumbFrameRejectsNilCrumb(t *testing.T) {
	for name, c := range map[string]core.Crumb{"nil interface": nil, "typed nil": (*core.TextDelta)(nil)} {
		enc, err := protocol.EncodeCrumbFrame(core.Frame{RunID: "r", Seq: 1, Crumb: c})
		if err != nil {
			continue
		}
		if _, derr := protocol.Decode(enc); derr != nil {
			t.Errorf("%s: EncodeCrumbFrame accepted it and wrote %s, which Decode rejects: %v", name, enc, derr)
		}
	}
}

func TestRunIDsNeedingEscapes(t *testing.T) {
	for _, runID := range []string{
		`run"quoted"`,
		`back\slash\`,
		"naïve-日本語-🍞",
		"ctl\x00\x01\x1f\n\r\t",
		"<script>alert(1)</script>&amp;",
		"line\u2028sep\u2029",
		"del\x7f",
		"",
		"/slashes/are/fine",
	} {
		want := mustMarshal(t, runID) // encoding/json's escaping, the reference
		for name, enc := range map[string][]byte{
			"crumb":     mustEncode(t, core.Frame{RunID: runID, Seq: 3, Crumb: textDelta(runID, 3, "x")}),
			"subscribe": protocol.EncodeSubscribe(protocol.SubscribeFrame{RunID: runID, AfterSeq: 2}),
		} {
			if !json.Valid(enc) {
				t.Errorf("%s frame for %q is not valid JSON: %q", name, runID, enc)
				continue
			}
			var fields map[string]json.RawMessage
			if err := json.Unmarshal(enc, &fields); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(fields["runId"], want) {
				t.Errorf("%s frame runId for %q = %s, want %s", name, runID, fields["runId"], want)
			}
			m, err := protocol.Decode(enc)
			if err != nil {
				t.Errorf("%s frame for %q: %v", name, runID, err)
				continue
			}
			var got string
			switch f := m.(type) {
			case protocol.CrumbFrame:
				got = f.RunID
			case protocol.SubscribeFrame:
				got = f.RunID
			}
			if got != runID {
				t.Errorf("%s frame run id = %q, want %q", name, got, runID)
			}
		}
	}
}

func mustEncode(t testing.TB, f core.Frame) []byte {
	t.Helper()
	b, err := protocol.EncodeCrumbFrame(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecodeToleratesOrderWhitespaceAndUnknownFields(t *testing.T) {
	raw := ` { "crumb" : {"delta":"hi","type":"text:delta","agentId":"echo","timestamp":1} ,
		"seq": 4, "future": {"x": [1]}, "runId": "r", "type": "crumb", "v": 1 } `
	f, err := protocol.DecodeCrumbFrame([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if f.RunID != "r" || f.Seq != 4 {
		t.Errorf("frame = %+v", f)
	}
	if td, ok := f.Crumb.(*core.TextDelta); !ok || td.Delta != "hi" {
		t.Errorf("crumb = %#v", f.Crumb)
	}
}

func TestDecodeErrors(t *testing.T) {
	const crumb = `{"type":"text:delta","agentId":"a","runId":"r","timestamp":1,"seq":1,"delta":"x"}`
	cases := []struct {
		name string
		raw  string
		// malformedCrumb: the cause is core's own crumb decode error.
		malformedCrumb bool
	}{
		{name: "empty", raw: ``},
		{name: "invalid JSON", raw: `{"v":1,"type":"crumb",`},
		{name: "not JSON at all", raw: `hello`},
		{name: "array", raw: `[{"v":1}]`},
		{name: "string", raw: `"crumb"`},
		{name: "number", raw: `1`},
		{name: "null", raw: `null`},
		{name: "two frames", raw: `{"v":1,"type":"subscribe","runId":"r","afterSeq":0}{"v":1}`},
		{name: "v absent", raw: `{"type":"subscribe","runId":"r","afterSeq":0}`},
		{name: "v null", raw: `{"v":null,"type":"subscribe","runId":"r","afterSeq":0}`},
		{name: "v 0", raw: `{"v":0,"type":"subscribe","runId":"r","afterSeq":0}`},
		{name: "v 2", raw: `{"v":2,"type":"subscribe","runId":"r","afterSeq":0}`},
		{name: "v -1", raw: `{"v":-1,"type":"subscribe","runId":"r","afterSeq":0}`},
		{name: `v "1"`, raw: `{"v":"1","type":"subscribe","runId":"r","afterSeq":0}`},
		{name: "v 1.5", raw: `{"v":1.5,"type":"subscribe","runId":"r","afterSeq":0}`},
		{name: "v true", raw: `{"v":true,"type":"subscribe","runId":"r","afterSeq":0}`},
		{name: "v huge", raw: `{"v":1e400,"type":"subscribe","runId":"r","afterSeq":0}`},
		{name: "runId absent", raw: `{"v":1,"type":"subscribe","afterSeq":0}`},
		{name: "runId null", raw: `{"v":1,"type":"subscribe","runId":null,"afterSeq":0}`},
		{name: "runId a number", raw: `{"v":1,"type":"subscribe","runId":7,"afterSeq":0}`},
		{name: "runId an object", raw: `{"v":1,"type":"subscribe","runId":{"id":"r"},"afterSeq":0}`},
		{name: "type absent", raw: `{"v":1,"runId":"r","afterSeq":0}`},
		{name: "type a number", raw: `{"v":1,"type":1,"runId":"r","afterSeq":0}`},
		{name: "unknown type", raw: `{"v":1,"type":"unsubscribe","runId":"r","afterSeq":0}`},
		{name: "type with other case", raw: `{"v":1,"type":"Crumb","runId":"r","seq":1,"crumb":` + crumb + `}`},
		{name: "crumb frame without seq", raw: `{"v":1,"type":"crumb","runId":"r","crumb":` + crumb + `}`},
		{name: "crumb frame seq null", raw: `{"v":1,"type":"crumb","runId":"r","seq":null,"crumb":` + crumb + `}`},
		{name: "crumb frame seq a string", raw: `{"v":1,"type":"crumb","runId":"r","seq":"1","crumb":` + crumb + `}`},
		{name: "crumb frame seq a fraction", raw: `{"v":1,"type":"crumb","runId":"r","seq":1.5,"crumb":` + crumb + `}`},
		{name: "crumb frame without crumb", raw: `{"v":1,"type":"crumb","runId":"r","seq":1}`},
		{name: "crumb frame crumb null", raw: `{"v":1,"type":"crumb","runId":"r","seq":1,"crumb":null}`},
		{name: "crumb a string", raw: `{"v":1,"type":"crumb","runId":"r","seq":1,"crumb":"text:delta"}`, malformedCrumb: true},
		{name: "crumb empty object", raw: `{"v":1,"type":"crumb","runId":"r","seq":1,"crumb":{}}`, malformedCrumb: true},
		{name: "crumb unknown type", raw: `{"v":1,"type":"crumb","runId":"r","seq":1,"crumb":{"type":"nope"}}`, malformedCrumb: true},
		{name: "crumb field of wrong kind", raw: `{"v":1,"type":"crumb","runId":"r","seq":1,"crumb":{"type":"text:delta","delta":5}}`, malformedCrumb: true},
		{name: "subscribe without afterSeq", raw: `{"v":1,"type":"subscribe","runId":"r"}`},
		{name: "subscribe afterSeq null", raw: `{"v":1,"type":"subscribe","runId":"r","afterSeq":null}`},
		{name: "subscribe afterSeq a string", raw: `{"v":1,"type":"subscribe","runId":"r","afterSeq":"0"}`},
		{name: "huge", raw: `{"v":2,"type":"crumb","runId":"` + strings.Repeat("€", 1000) + `"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := protocol.Decode([]byte(tc.raw))
			if m != nil {
				t.Errorf("Decode returned %#v with its error", m)
			}
			be := assertDecodeError(t, err, []byte(tc.raw))
			if !strings.HasPrefix(be.Message, "malformed bread protocol frame: ") {
				t.Errorf("message = %q", be.Message)
			}
			if tc.malformedCrumb {
				var inner *core.BreadError
				if !errors.As(be.Cause, &inner) || inner.Code != core.CodeProtocolDecodeError {
					t.Errorf("cause = %#v, want core's crumb decode error", be.Cause)
				}
			}

			f, err := protocol.DecodeCrumbFrame([]byte(tc.raw))
			assertDecodeError(t, err, []byte(tc.raw))
			if f != (core.Frame{}) {
				t.Errorf("DecodeCrumbFrame returned %+v with its error", f)
			}
		})
	}
}

func TestDecodeErrorMessagesNameTheProblem(t *testing.T) {
	for raw, want := range map[string]string{
		`{"v":2,"type":"subscribe","runId":"r","afterSeq":0}`: "unsupported version 2",
		`{"type":"subscribe","runId":"r","afterSeq":0}`:       "unsupported version none",
		`{"v":1,"type":"subscribe","afterSeq":0}`:             `"runId"`,
		`{"v":1,"type":"subscribe","runId":"r"}`:              `"afterSeq"`,
		`{"v":1,"type":"crumb","runId":"r","seq":1}`:          `"crumb"`,
		`{"v":1,"type":"bogus","runId":"r"}`:                  `unknown frame type "bogus"`,
	} {
		_, err := protocol.Decode([]byte(raw))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Decode(%s) = %v, want it to mention %s", raw, err, want)
		}
	}
}

func TestDecodeCrumbFrameRejectsSubscribe(t *testing.T) {
	raw := protocol.EncodeSubscribe(protocol.SubscribeFrame{RunID: "r", AfterSeq: 3})
	f, err := protocol.DecodeCrumbFrame(raw)
	be := assertDecodeError(t, err, raw)
	if !strings.Contains(be.Message, "expected a crumb frame, got subscribe") {
		t.Errorf("message = %q", be.Message)
	}
	if f != (core.Frame{}) {
		t.Errorf("frame = %+v, want zero", f)
	}
}

// TestDecodeErrorTruncatesRaw cuts a long frame at every position inside a
// multi-byte rune.
func TestDecodeErrorTruncatesRaw(t *testing.T) {
	for _, r := range []string{"é", "€", "🍞"} {
		for pad := 0; pad < 4; pad++ {
			raw := `{"v":9,"runId":"` + strings.Repeat("x", pad) + strings.Repeat(r, 300) + `"}`
			_, err := protocol.Decode([]byte(raw))
			assertDecodeError(t, err, []byte(raw))
		}
	}
	huge := `{"v":1,"type":"crumb","runId":"r","seq":1,"crumb":{"type":"text:delta","delta":"` +
		strings.Repeat("ab€", 1<<18) + `","seq":"x"}}`
	_, err := protocol.Decode([]byte(huge))
	be := assertDecodeError(t, err, []byte(huge))
	if len(be.Error()) > 2000 {
		t.Errorf("error text is %d bytes", len(be.Error()))
	}
}

// assertDecodeError checks the protocol's one error shape: a *core.BreadError
// with code PROTOCOL_DECODE_ERROR carrying the input cut to 200 bytes plus an
// ellipsis, on a rune boundary.
func assertDecodeError(t testing.TB, err error, raw []byte) *core.BreadError {
	t.Helper()
	if err == nil {
		t.Fatalf("no error for %.80q", raw)
	}
	var be *core.BreadError
	if !errors.As(err, &be) {
		t.Fatalf("error %T (%v) is not a *core.BreadError", err, err)
	}
	if be.Code != core.CodeProtocolDecodeError {
		t.Errorf("code = %q, want %q", be.Code, core.CodeProtocolDecodeError)
	}
	if !errors.Is(err, core.ErrProtocolDecode) {
		t.Errorf("errors.Is(err, core.ErrProtocolDecode) = false")
	}
	got, ok := be.Context["raw"].(string)
	if !ok {
		t.Fatalf(`Context["raw"] = %#v, want a string`, be.Context["raw"])
	}
	if len(raw) <= 200 {
		if got != string(raw) {
			t.Errorf(`Context["raw"] = %q, want %q`, got, raw)
		}
		return be
	}
	kept, cut := strings.CutSuffix(got, "…")
	if !cut {
		t.Errorf(`Context["raw"] of a %d-byte input has no ellipsis`, len(raw))
	}
	if len(kept) > 200 || !bytes.HasPrefix(raw, []byte(kept)) {
		t.Errorf(`Context["raw"] keeps %d bytes, want a prefix of at most 200`, len(kept))
	}
	// For valid UTF-8 the cut backs up at most to the start of one rune. (For
	// invalid input it may back up further: see the fuzz corpus.)
	if utf8.Valid(raw) {
		if len(kept) < 200-utf8.UTFMax+1 {
			t.Errorf(`Context["raw"] keeps %d bytes, want 197..200`, len(kept))
		}
		if !utf8.ValidString(got) {
			t.Errorf(`Context["raw"] is not valid UTF-8: %q`, got)
		}
	}
	return be
}
