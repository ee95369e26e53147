package engine

import (
	"encoding/json"
	"testing"

	"github.com/breadai/bread/core"
)

// FuzzCheckResponse: whatever a client sends as a resume answer, checking it
// never panics, and an approval passes only in its one well-formed shape.
func FuzzCheckResponse(f *testing.F) {
	for _, seed := range []string{`{"approved":true}`, `{"approved":false,"reason":"no"}`, `{}`, `"yes"`, `42`, `null`, `{"approved":"true"}`, `{"ok":true}`, `[`, `{"approved":true,"x":1}`} {
		f.Add([]byte(seed))
	}
	rt, err := compileAgent(&core.Agent{ID: "a", HumanTools: []core.HumanToolDef{
		{Name: "confirm", Schema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`)},
	}})
	if err != nil {
		f.Fatal(err)
	}
	approval := core.CheckpointRecord{ID: "cp", ToolName: "tool_publish", Kind: core.HumanApproval}
	input := core.CheckpointRecord{ID: "cp", ToolName: "human_confirm", Kind: core.HumanInput}
	f.Fuzz(func(t *testing.T, body []byte) {
		response := json.RawMessage(body)
		err := rt.checkResponse(approval, response)
		var v struct {
			Approved *bool `json:"approved"`
		}
		if err == nil && (json.Unmarshal(body, &v) != nil || v.Approved == nil) {
			t.Fatalf("an approval without a boolean approved passed: %q", body)
		}
		if err != nil && err.(*core.BreadError).Code != core.CodeValidationError {
			t.Fatalf("code %v", err)
		}
		_ = rt.checkResponse(input, response)
	})
}
