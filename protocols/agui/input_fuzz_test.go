package agui_test

import (
	"errors"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/protocols/agui"
)

// FuzzParseRunAgentInput: any body is either a turn with a thread or a
// BreadError with a stable code; never a panic.
func FuzzParseRunAgentInput(f *testing.F) {
	for _, s := range []string{
		`{"threadId":"t","runId":"r","messages":[{"id":"m","role":"user","content":"hi"}],"tools":[],"context":[],"state":null,"forwardedProps":null}`,
		`{"threadId":"t","messages":[],"resume":[{"interruptId":"cp","status":"resolved","payload":{"approved":true}}]}`,
		`{"thread_id":"t","messages":[{"role":"user","content":[{"type":"text","text":"x"}]}]}`,
		`{"threadId":"t","messages":[null]}`,
		`{"threadId":5}`, `[]`, ``, `{}{}`, `{"threadId":"t","resume":[{"status":"cancelled"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		turn, err := agui.ParseRunAgentInput(body)
		if err != nil {
			var be *core.BreadError
			if !errors.As(err, &be) || (be.Code != core.CodeBadRequest && be.Code != core.CodeValidationError) || be.Message == "" {
				t.Fatalf("error %v is not a BAD_REQUEST/VALIDATION_ERROR BreadError", err)
			}
			return
		}
		if turn.ThreadID == "" {
			t.Fatal("accepted without a thread")
		}
		for _, r := range turn.Resume {
			if r.InterruptID == "" {
				t.Fatal("accepted a resume without an interrupt id")
			}
		}
	})
}
