package agui_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/protocols/agui"
)

// TestToolMessageContentParts holds the tool message's content to what
// @ag-ui/core 1.0 allows (a string, or an array of content parts): text
// parts are joined into the tool's result, any other part is refused
// naming its type and place, never dropped.
func TestToolMessageContentParts(t *testing.T) {
	body := func(content string) string {
		return `{"threadId":"t","messages":[{"id":"m1","role":"user","content":"hi"},` +
			`{"id":"t1","role":"tool","toolCallId":"c1","content":` + content + `}]}`
	}
	tests := []struct {
		name, content string
		want          string // the result, when accepted
		refused       string // a piece of the VALIDATION_ERROR, when refused
	}{
		{"string", `"done"`, "done", ""},
		{"one text part", `[{"type":"text","text":"done"}]`, "done", ""},
		{"text parts joined in order", `[{"type":"text","text":"a"},{"type":"text","id":"p2","text":"b"}]`, "ab", ""},
		{"no parts", `[]`, "", ""},
		{"an image part", `[{"type":"text","text":"a"},{"type":"image","source":{"type":"url","value":"https://x/y.png"}}]`, "", `"messages[1].content[1]" is a "image" part`},
		{"a document part", `[{"type":"document","source":{"type":"data","value":"AA==","mimeType":"application/pdf"}}]`, "", `"messages[1].content[0]" is a "document" part`},
		{"a part without a type", `[{"text":"a"}]`, "", `"messages[1].content[0]" is a "" part`},
		{"a text part without text", `[{"type":"text"}]`, "", `text part without a string "text"`},
		{"a part that is not an object", `["a"]`, "", `must be a content part object`},
		{"a number", `5`, "", `must be a string or an array of text parts`},
		{"null", `null`, "", `must be a string or an array of text parts`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			turn, err := agui.ParseRunAgentInput([]byte(body(tt.content)))
			if tt.refused != "" {
				var be *core.BreadError
				if !errors.As(err, &be) || be.Code != core.CodeValidationError || !strings.Contains(be.Message, tt.refused) {
					t.Fatalf("got %v, want VALIDATION_ERROR containing %q", err, tt.refused)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(turn.ToolResults) != 1 || turn.ToolResults[0].ToolCallID != "c1" || turn.ToolResults[0].Content != tt.want {
				t.Errorf("tool results %+v, want c1 %q", turn.ToolResults, tt.want)
			}
		})
	}
}
