package core_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/breadai/bread/core"
)

func TestDecodeCrumbErrors(t *testing.T) {
	cases := []struct {
		name string
		raw  string
		// cause, when set, is what the error must wrap.
		cause func(error) bool
	}{
		{name: "empty input", raw: ""},
		{name: "whitespace only", raw: " \n\t"},
		{name: "invalid JSON", raw: `{"type":"text:delta",`, cause: isSyntaxError},
		{name: "trailing garbage", raw: `{"type":"text:delta","agentId":"a","timestamp":1,"delta":"x"} x`, cause: isSyntaxError},
		{name: "two values", raw: `{"type":"text:delta"}{"type":"text:delta"}`, cause: isSyntaxError},
		{name: "JSON array", raw: `[{"type":"text:delta"}]`, cause: isTypeError},
		{name: "JSON string", raw: `"text:delta"`, cause: isTypeError},
		{name: "JSON number", raw: `42`, cause: isTypeError},
		{name: "JSON null", raw: `null`},
		{name: "empty object", raw: `{}`},
		{name: "missing type", raw: `{"agentId":"a","timestamp":1,"delta":"x"}`},
		{name: "type null", raw: `{"type":null,"delta":"x"}`},
		{name: "type a number", raw: `{"type":5}`, cause: isTypeError},
		{name: "type an object", raw: `{"type":{"name":"text:delta"}}`, cause: isTypeError},
		{name: "type empty", raw: `{"type":""}`},
		{name: "unknown type", raw: `{"type":"text:deltas","agentId":"a","timestamp":1}`},
		{name: "type with other case", raw: `{"type":"TEXT:DELTA","agentId":"a","timestamp":1}`},
		{name: "type of another protocol", raw: `{"type":"crumb","v":1}`},
		{name: "seq a string", raw: `{"type":"text:delta","agentId":"a","timestamp":1,"seq":"x","delta":"hi"}`, cause: isTypeError},
		{name: "seq a fraction", raw: `{"type":"text:delta","agentId":"a","timestamp":1,"seq":1.5,"delta":"hi"}`, cause: isTypeError},
		{name: "seq overflows int64", raw: `{"type":"text:delta","agentId":"a","timestamp":1,"seq":99999999999999999999}`, cause: isTypeError},
		{name: "delta a number", raw: `{"type":"text:delta","agentId":"a","timestamp":1,"delta":5}`, cause: isTypeError},
		{name: "timestamp a string", raw: `{"type":"text:delta","agentId":"a","timestamp":"2024-06-10","delta":"x"}`, cause: isTypeError},
		{name: "agentId an array", raw: `{"type":"agent:run:start","agentId":["a"],"timestamp":1,"input":1}`, cause: isTypeError},
		{name: "files an object", raw: `{"type":"agent:run:end","agentId":"a","timestamp":1,"output":1,"durationMs":1,"files":{}}`, cause: isTypeError},
		{name: "file uri a number", raw: `{"type":"agent:run:end","agentId":"a","timestamp":1,"output":1,"durationMs":1,"files":[{"kind":"file","uri":7}]}`, cause: isTypeError},
		{name: "pipeline a string", raw: `{"type":"loop:start","agentId":"a","timestamp":1,"loopId":"l","pipeline":"a,b","maxIterations":2}`, cause: isTypeError},
		{name: "stepIndex a string", raw: `{"type":"pipeline:step:start","agentId":"a","runId":"r","timestamp":1,"pipelineId":"p","stepIndex":"0"}`, cause: isTypeError},
		{name: "model an array", raw: `{"type":"task:start","agentId":"a","timestamp":1,"taskRunId":"t","taskId":"t","model":[]}`, cause: isTypeError},
		{name: "usage a string", raw: `{"type":"task:end","agentId":"a","timestamp":1,"taskRunId":"t","taskId":"t","status":"completed","durationMs":1,"usage":"lots"}`, cause: isTypeError},
		{name: "task error an object", raw: `{"type":"task:end","agentId":"a","timestamp":1,"taskRunId":"t","taskId":"t","status":"failed","durationMs":1,"error":{"code":"X"}}`, cause: isTypeError},
		{name: "kind a number", raw: `{"type":"human:resumed","agentId":"a","timestamp":1,"checkpointId":"c","response":1,"kind":1}`, cause: isTypeError},
		{name: "agent error a string", raw: `{"type":"agent:error","agentId":"a","timestamp":1,"error":"boom"}`, cause: isTypeError},
		{name: "agent error context an array", raw: `{"type":"agent:error","agentId":"a","timestamp":1,"error":{"code":"X","message":"m","context":[1]}}`, cause: isTypeError},
		{name: "tool error code a number", raw: `{"type":"tool:error","agentId":"a","timestamp":1,"toolCallId":"c","toolName":"t","error":{"code":500,"message":"m"},"durationMs":1}`, cause: isTypeError},
		{name: "payload invalid", raw: `{"type":"tool:call","agentId":"a","timestamp":1,"toolCallId":"c","toolName":"t","args":{"a":}}`, cause: isSyntaxError},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := core.DecodeCrumb([]byte(tc.raw))
			if c != nil {
				t.Errorf("DecodeCrumb returned a crumb %#v along with its error", c)
			}
			be := assertDecodeError(t, err, []byte(tc.raw))
			if !strings.HasPrefix(be.Message, "malformed bread crumb: ") {
				t.Errorf("message %q does not say what failed", be.Message)
			}
			if tc.cause != nil && !tc.cause(err) {
				t.Errorf("error %v (cause %T) does not wrap the expected json error", err, be.Cause)
			}
		})
	}
}

func isSyntaxError(err error) bool {
	var se *json.SyntaxError
	return errors.As(err, &se)
}

func isTypeError(err error) bool {
	var te *json.UnmarshalTypeError
	return errors.As(err, &te)
}

func TestDecodeCrumbErrorNamesTheProblem(t *testing.T) {
	for raw, want := range map[string]string{
		`{"agentId":"a"}`:                 `no "type"`,
		`{"type":"nope"}`:                 `unknown crumb type "nope"`,
		`{"type":"text:delta","delta":5}`: "text:delta",
	} {
		_, err := core.DecodeCrumb([]byte(raw))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("DecodeCrumb(%s) = %v, want an error mentioning %q", raw, err, want)
		}
	}
	// An unknown type of any length is quoted shortened in the message.
	long := strings.Repeat("x", 5000)
	_, err := core.DecodeCrumb([]byte(`{"type":"` + long + `"}`))
	if err == nil || len(err.Error()) > 400 {
		t.Errorf("an unknown 5000-byte type gives an error of %d bytes", len(err.Error()))
	}
}

// TestDecodeCrumbErrorTruncatesRaw feeds inputs longer than 200 bytes whose
// 200th byte falls at every position inside multi-byte runes: the copy in the
// error context must be cut before the rune, stay valid UTF-8 and end in an
// ellipsis.
func TestDecodeCrumbErrorTruncatesRaw(t *testing.T) {
	for _, r := range []string{"é", "€", "🍞"} {
		for pad := 0; pad < 4; pad++ {
			raw := `{"type":"no:such:type","note":"` + strings.Repeat("x", pad) + strings.Repeat(r, 300) + `"}`
			_, err := core.DecodeCrumb([]byte(raw))
			assertDecodeError(t, err, []byte(raw))
		}
	}
	// A huge crumb with a bad field: the error stays small.
	huge := `{"type":"text:delta","agentId":"a","timestamp":1,"seq":"x","delta":"` + strings.Repeat("ab€", 1<<18) + `"}`
	_, err := core.DecodeCrumb([]byte(huge))
	be := assertDecodeError(t, err, []byte(huge))
	if n := len(be.Error()); n > 2000 {
		t.Errorf("error text is %d bytes for a %d-byte input", n, len(huge))
	}
	// Invalid JSON beyond the limit is truncated the same way.
	bad := strings.Repeat("[", 150) + strings.Repeat("日本", 50)
	_, err = core.DecodeCrumb([]byte(bad))
	assertDecodeError(t, err, []byte(bad))
}

func TestDecodeCrumbAcceptsUnknownFieldsAndWhitespace(t *testing.T) {
	raw := "\n {\"delta\" : \"hi\", \"futureField\": {\"x\": [1,2]},\n \"timestamp\":5, \"agentId\":\"a\", \"type\" : \"text:delta\" } \n"
	c, err := core.DecodeCrumb([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	v := as[*core.TextDelta](t, c)
	eq(t, "Delta", v.Delta, "hi")
	out, _ := json.Marshal(c)
	eq(t, "encoding", string(out), `{"type":"text:delta","agentId":"a","timestamp":5,"delta":"hi"}`)
}

func TestDecodeCrumbMissingPayloadEncodesAsNull(t *testing.T) {
	// A required payload that is absent or null decodes to nil and encodes as
	// null, as the original's JSON.stringify of undefined-turned-null would.
	for _, raw := range []string{
		`{"type":"tool:call","agentId":"a","timestamp":1,"toolCallId":"c","toolName":"t"}`,
		`{"type":"tool:call","agentId":"a","timestamp":1,"toolCallId":"c","toolName":"t","args":null}`,
	} {
		c, err := core.DecodeCrumb([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		if v := as[*core.ToolCall](t, c); v.Args != nil {
			t.Errorf("Args = %#v, want nil", v.Args)
		}
		out, _ := json.Marshal(c)
		if got := string(objectFields(t, out)["args"]); got != "null" {
			t.Errorf("args encodes as %s, want null", got)
		}
	}
}
