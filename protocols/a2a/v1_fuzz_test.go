package a2a

import (
	"errors"
	"testing"

	"github.com/a2aproject/a2a-go/a2a"
)

// FuzzDecodeV1Send: any v1.0 SendMessageRequest body is either a message
// whose parts each hold one kind of content, or invalid params; never a
// panic.
func FuzzDecodeV1Send(f *testing.F) {
	for _, s := range []string{
		`{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}}`,
		`{"message":{"messageId":"m","role":"ROLE_USER","taskId":"t","parts":[{"data":{"a":1}},{"url":"https://x/y.png","mediaType":"image/png","filename":"y.png"}]},"configuration":{"returnImmediately":true}}`,
		`{"message":{"role":"ROLE_AGENT","parts":[{"raw":"aGk="}]}}`,
		`{"message":{"role":"ROLE_SYSTEM","parts":[]}}`,
		`{"message":{"parts":[{"text":"a","url":"b"}]}}`,
		`{"message":{"parts":[{"data":[1,2]}]}}`,
		`{"message":null}`, `[]`, ``, `{"message":{"parts":[{}]}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := decodeV1Send(body)
		if err != nil {
			if !errors.Is(err, a2a.ErrInvalidParams) {
				t.Fatalf("error %v is not invalid params", err)
			}
			return
		}
		if p.Message == nil {
			t.Fatal("accepted without a message")
		}
		for i, part := range p.Message.Parts {
			switch v := part.(type) {
			case a2a.TextPart:
			case a2a.DataPart:
				if v.Data == nil {
					t.Fatalf("part %d: a data part without an object", i)
				}
			case a2a.FilePart:
				if v.File == nil {
					t.Fatalf("part %d: a file part without content", i)
				}
			default:
				t.Fatalf("part %d: %T", i, part)
			}
		}
	})
}
