package typed_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/typed"
)

type pageArgs struct {
	Page int `json:"page" validate:"min=1"`
}

type limitArgs struct {
	Page int `json:"page" validate:"max=10"`
}

// SchemaFor reflects a type once; every caller still gets bytes of its own.
func TestSchemaForIsMemoisedAndCopied(t *testing.T) {
	first := typed.SchemaFor[pageArgs]()
	second := typed.SchemaFor[pageArgs]()
	if string(first) != string(second) || len(first) == 0 {
		t.Fatalf("SchemaFor twice: %s and %s", first, second)
	}
	first[0] = 'X'
	if third := typed.SchemaFor[pageArgs](); third[0] != '{' {
		t.Fatalf("a caller's change reached the memo: %s", third)
	}
	var doc map[string]any
	if err := json.Unmarshal(second, &doc); err != nil || doc["type"] != "object" {
		t.Fatalf("schema %s: %v", second, err)
	}
}

// Tools share one validator: each still checks its own type's rules and
// names the field by its JSON name.
func TestToolsShareOneValidatorAndKeepTheirRules(t *testing.T) {
	page := typed.DefineTool("page", "", func(_ context.Context, a pageArgs, _ core.ToolContext) (int, error) { return a.Page, nil })
	limit := typed.DefineTool("limit", "", func(_ context.Context, a limitArgs, _ core.ToolContext) (int, error) { return a.Page, nil })
	for _, tc := range []struct {
		tool core.Tool
		args string
		ok   bool
	}{
		{page, `{"page":0}`, false},
		{page, `{"page":20}`, true},
		{limit, `{"page":0}`, true},
		{limit, `{"page":20}`, false},
	} {
		_, err := tc.tool.Execute(context.Background(), json.RawMessage(tc.args), core.ToolContext{})
		if (err == nil) != tc.ok {
			t.Errorf("%s(%s) = %v, want ok %v", tc.tool.Name, tc.args, err, tc.ok)
		}
		if err != nil {
			if be := core.AsBreadError(err, ""); be.Code != core.CodeValidationError || be.Context["field"] != "page" {
				t.Errorf("%s(%s) = %v, want VALIDATION_ERROR at field page", tc.tool.Name, tc.args, err)
			}
		}
	}
}

// Tools defined and run from many goroutines at once (runs building their
// built-in tools) share the memo and the validator safely.
func TestDefineToolConcurrently(t *testing.T) {
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			tool := typed.DefineTool("page", "", func(_ context.Context, a pageArgs, _ core.ToolContext) (int, error) { return a.Page, nil })
			if _, err := tool.Execute(context.Background(), json.RawMessage(`{"page":0}`), core.ToolContext{}); err == nil {
				t.Errorf("goroutine %d: page 0 passed validation", i)
			}
			if out, err := tool.Execute(context.Background(), json.RawMessage(`{"page":3}`), core.ToolContext{}); err != nil || out != 3 {
				t.Errorf("goroutine %d: page 3 = %v, %v", i, out, err)
			}
		})
	}
	wg.Wait()
}
