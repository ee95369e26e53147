package engine

import (
	"encoding/json"
	"testing"

	"github.com/breadai/bread/core"
)

// TestSessionMessageJSONIsMarshal checks that a session message's content
// is json.Marshal's bytes whether or not it takes the hand-encoded path.
func TestSessionMessageJSONIsMarshal(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    core.Message
		fast bool // the hand-encoded path takes it
	}{
		{"user text", core.Message{Role: core.RoleUser, Parts: []core.Part{core.TextPart("hi")}}, true},
		{"assistant texts", core.Message{Role: core.RoleAssistant, Parts: []core.Part{core.TextPart("a"), {Type: core.PartReasoning, Text: "b"}}}, true},
		{"empty text omitted", core.Message{Role: core.RoleUser, Parts: []core.Part{core.TextPart("")}}, true},
		{"empty type kept", core.Message{Role: core.RoleUser, Parts: []core.Part{{Text: "x"}}}, true},
		{"nil parts", core.Message{Role: core.RoleUser}, true},
		{"empty parts", core.Message{Role: core.RoleUser, Parts: []core.Part{}}, true},
		{"empty role", core.Message{Parts: []core.Part{core.TextPart("x")}}, true},
		{"escapes", core.Message{Role: "us\"er", Parts: []core.Part{core.TextPart("<a href=\"x\">&\\\n\t\x01\u2028\u2029é\xff</a>")}}, true},
		{"tool call", core.Message{Role: core.RoleAssistant, Parts: []core.Part{core.TextPart("x"), {Type: core.PartToolCall, ToolCallID: "c1", ToolName: "t", Input: json.RawMessage(`{"a":1}`)}}}, false},
		{"tool result", core.Message{Role: core.RoleTool, Parts: []core.Part{{Type: core.PartToolResult, ToolCallID: "c1", ToolName: "t", Output: json.RawMessage(`"ok"`), IsError: true}}}, false},
		{"empty raw input", core.Message{Role: core.RoleAssistant, Parts: []core.Part{{Type: core.PartToolCall, Input: json.RawMessage{}}}}, false},
		{"file", core.Message{Role: core.RoleUser, Parts: []core.Part{{Type: core.PartFile, MediaType: "image/png", Data: []byte{1, 2}, Filename: "a.png"}}}, false},
		{"file by url", core.Message{Role: core.RoleUser, Parts: []core.Part{{Type: core.PartFile, URL: "https://x/y"}}}, false},
		{"empty data", core.Message{Role: core.RoleUser, Parts: []core.Part{{Type: core.PartFile, Data: []byte{}}}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, err := json.Marshal(tc.m)
			if err != nil {
				t.Fatal(err)
			}
			if got, ok := appendMessageJSON(nil, tc.m); ok != tc.fast || ok && string(got) != string(want) {
				t.Errorf("appendMessageJSON = %s, %v; want %s, %v", got, ok, want, tc.fast)
			}
			sm, err := toSessionMessage(tc.m)
			if err != nil {
				t.Fatal(err)
			}
			if string(sm.Content) != string(want) || sm.Role != tc.m.Role {
				t.Errorf("toSessionMessage = %s (%s); want %s (%s)", sm.Content, sm.Role, want, tc.m.Role)
			}
		})
	}
}

// BenchmarkToSessionMessage: a short run's two messages (its input and its
// answer) as the session keeps them.
func BenchmarkToSessionMessage(b *testing.B) {
	msgs := []core.Message{
		{Role: core.RoleUser, Parts: []core.Part{core.TextPart("hi")}},
		{Role: core.RoleAssistant, Parts: []core.Part{core.TextPart("tok0 ")}},
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, m := range msgs {
			if _, err := toSessionMessage(m); err != nil {
				b.Fatal(err)
			}
		}
	}
}
