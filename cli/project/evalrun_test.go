package project_test

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/breadai/bread/cli/project"
	"github.com/breadai/bread/core"
)

func TestEvaluatorScoresCases(t *testing.T) {
	outputs := map[string]any{"hi": "Hello, Ada!", "obj": map[string]any{"n": 1}}
	e := project.Evaluator{
		Dir: t.TempDir(),
		Run: func(_ context.Context, agentID string, input any, opts core.RunOptions) (any, error) {
			if agentID != "greeter" {
				t.Errorf("ran %q", agentID)
			}
			if input == "boom" {
				return nil, errors.New("model down")
			}
			if s, ok := input.(string); ok {
				return outputs[s], nil
			}
			return outputs["obj"], nil
		},
		Judge: func(_ context.Context, sc project.Scorer, out string) (bool, string) {
			return strings.Contains(out, "Ada"), "judge: " + sc.Prompt
		},
	}
	suite := &project.EvalSuite{File: "agents/greeter/evals/basic.eval.yaml", AgentID: "greeter", Type: "functional", Cases: []project.EvalCase{
		{Name: "exact", Input: json.RawMessage(`"hi"`), Scorers: []project.Scorer{{Type: "exact", Expected: "Hello, Ada!"}}},
		{Name: "contains fails", Input: json.RawMessage(`"hi"`), Scorers: []project.Scorer{{Type: "contains", Expected: "Bob"}}},
		{Name: "regex", Input: json.RawMessage(`"hi"`), Scorers: []project.Scorer{{Type: "regex", Pattern: regexp.MustCompile(`^Hello`)}}},
		{Name: "json output", Input: json.RawMessage(`{"x":1}`), Scorers: []project.Scorer{{Type: "exact", Expected: `{"n":1}`}}},
		{Name: "custom", Input: json.RawMessage(`"hi"`), Scorers: []project.Scorer{{Type: "custom", Command: []string{"sh", "-c", `grep -q Ada`}}}},
		{Name: "judge", Input: json.RawMessage(`"hi"`), Scorers: []project.Scorer{{Type: "llmJudge", Prompt: "names Ada"}}},
		{Name: "run fails", Input: json.RawMessage(`"boom"`), Scorers: []project.Scorer{{Type: "exact", Expected: "x"}}},
	}}
	var seen int
	res := e.Suites(context.Background(), []*project.EvalSuite{suite}, func(core.EvalResult) { seen++ })
	if len(res) != 7 || seen != 7 {
		t.Fatalf("%d results, %d callbacks", len(res), seen)
	}
	want := []bool{true, false, true, true, true, true, false}
	for i, r := range res {
		if r.Passed != want[i] || r.Suite != suite.File || r.Type != "functional" || r.Case != suite.Cases[i].Name {
			t.Errorf("case %d = %+v", i, r)
		}
		if !r.Passed && len(r.Problems) == 0 {
			t.Errorf("case %d failed without a reason", i)
		}
	}
	if !strings.Contains(res[1].Problems[0], `"Bob" not in`) || !strings.HasPrefix(res[6].Problems[0], "run failed:") || res[6].Output != nil {
		t.Errorf("problems: %q %q", res[1].Problems, res[6].Problems)
	}

	e.Judge = nil
	r := e.Case(context.Background(), suite, suite.Cases[5])
	if r.Passed || r.Problems[0] != "llmJudge: no judge configured" {
		t.Errorf("no judge = %+v", r)
	}
}
