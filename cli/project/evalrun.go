package project

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/breadai/bread/core"
)

// Evaluator runs eval cases and scores their outputs. Run and Dir are
// required; Judge scores llmJudge scorers (nil fails them).
type Evaluator struct {
	// Run runs an agent to completion and returns its output.
	Run func(ctx context.Context, agentID string, input any, opts core.RunOptions) (any, error)
	// Dir is the project directory, where custom scorers run.
	Dir string
	// Judge scores an llmJudge scorer against the output as text.
	Judge func(ctx context.Context, sc Scorer, out string) (bool, string)
}

// Case runs one case of suite s.
func (e Evaluator) Case(ctx context.Context, s *EvalSuite, c EvalCase) core.EvalResult {
	start := time.Now()
	res := core.EvalResult{Suite: s.File, Type: s.Type, Case: c.Name}
	out, err := e.Run(ctx, s.AgentID, EvalInput(c.Input), core.RunOptions{Skill: c.Skill})
	if err != nil {
		res.Problems = append(res.Problems, "run failed: "+core.Sanitize(err).Error())
	} else {
		res.Output = out
		for _, sc := range c.Scorers {
			if ok, why := e.Score(ctx, sc, out); !ok {
				res.Problems = append(res.Problems, why)
			}
		}
	}
	res.Passed = len(res.Problems) == 0
	res.DurationMs = time.Since(start).Milliseconds()
	return res
}

// Suites runs every case of suites in order, calling each (when not nil)
// as a case finishes; it stops early when ctx ends.
func (e Evaluator) Suites(ctx context.Context, suites []*EvalSuite, each func(core.EvalResult)) []core.EvalResult {
	var out []core.EvalResult
	for _, s := range suites {
		for _, c := range s.Cases {
			r := e.Case(ctx, s, c)
			out = append(out, r)
			if each != nil {
				each(r)
			}
			if ctx.Err() != nil {
				return out
			}
		}
	}
	return out
}

// EvalInput is a case's input as a run takes it: a JSON string as a Go
// string, anything else as raw JSON, nothing as "".
func EvalInput(raw json.RawMessage) any {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return raw
}

// EvalText is an output as scorers compare it: a string as is, anything
// else as compact JSON.
func EvalText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// Score checks output against sc and says why it fails.
func (e Evaluator) Score(ctx context.Context, sc Scorer, output any) (bool, string) {
	out := EvalText(output)
	switch sc.Type {
	case "exact":
		return out == sc.Expected, fmt.Sprintf("exact: got %q, want %q", clip(out), sc.Expected)
	case "contains":
		return strings.Contains(out, sc.Expected), fmt.Sprintf("contains: %q not in %q", sc.Expected, clip(out))
	case "regex":
		return sc.Pattern.MatchString(out), fmt.Sprintf("regex: %s does not match %q", sc.Pattern, clip(out))
	case "custom":
		return e.custom(ctx, sc, output)
	case "llmJudge":
		if e.Judge == nil {
			return false, "llmJudge: no judge configured"
		}
		return e.Judge(ctx, sc, out)
	}
	return false, "unknown scorer " + sc.Type
}

// custom runs the scorer's program with the output as JSON on stdin; exit 0
// passes.
func (e Evaluator) custom(ctx context.Context, sc Scorer, output any) (bool, string) {
	payload, _ := json.Marshal(output)
	cmd := exec.CommandContext(ctx, sc.Command[0], sc.Command[1:]...)
	cmd.Dir = e.Dir
	cmd.Stdin = bytes.NewReader(payload)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return false, fmt.Sprintf("custom: %s: %v %s", sc.Command[0], err, strings.TrimSpace(stderr.String()))
	}
	return true, ""
}

func clip(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}
