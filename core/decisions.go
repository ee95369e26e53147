package core

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
)

// Decider is a fast, bounded-choice model call ("System One"): route,
// classify, yes/no. Config.Decisions names deciders; an agent calls them
// through the core_decide tool, a pipeline through a route step, and a hook
// through Instance.Decide. providers/decisions has implementations over any
// LanguageModel and over an HTTP classifier.
type Decider interface {
	Decide(ctx context.Context, q Question) (Decision, error)
}

// Question is what a decider is asked: pick one of Options for Input.
type Question struct {
	Prompt  string   `json:"prompt"`
	Options []string `json:"options"`
	Input   any      `json:"input,omitempty"`
}

// Decision is a decider's answer.
type Decision struct {
	Choice     string  `json:"choice"`
	Confidence float64 `json:"confidence,omitempty"`
	Reason     string  `json:"reason,omitempty"`
}

// Decide asks the named decider and checks its answer is one of the options:
// an unknown decider is DECIDER_NOT_FOUND naming the configured ones, an
// answer outside the options is DECISION_INVALID.
func (in *Instance) Decide(ctx context.Context, decider string, q Question) (Decision, error) {
	d, ok := in.cfg.Decisions[decider]
	if !ok || d == nil {
		names := slices.Sorted(maps.Keys(in.cfg.Decisions))
		return Decision{}, &BreadError{
			Code:    CodeDeciderNotFound,
			Message: "decider " + quoteTruncated(decider) + " is not configured; configured: " + strings.Join(names, ", "),
			Context: map[string]any{"decider": decider, "available": names},
		}
	}
	if len(q.Options) == 0 {
		return Decision{}, &BreadError{Code: CodeValidationError, Message: "a question needs at least one option"}
	}
	ans, err := d.Decide(ctx, q)
	if err != nil {
		return Decision{}, AsBreadError(err, CodeProviderError)
	}
	if !slices.Contains(q.Options, ans.Choice) {
		return Decision{}, &BreadError{
			Code:    CodeDecisionInvalid,
			Message: "decider " + decider + " chose " + quoteTruncated(ans.Choice) + ", which is not one of " + strings.Join(q.Options, ", "),
			Context: map[string]any{"decider": decider, "choice": ans.Choice, "options": q.Options},
		}
	}
	return ans, nil
}

type decideArgs struct {
	Decider string          `json:"decider" validate:"required" jsonschema:"description=Name of the configured decider"`
	Prompt  string          `json:"prompt" validate:"required" jsonschema:"description=The question"`
	Options []string        `json:"options" validate:"required,min=1" jsonschema:"description=The allowed answers"`
	Input   json.RawMessage `json:"input,omitempty" jsonschema:"description=What to decide about"`
}

// decideTool is core_decide: a bounded-choice decision by a fast decider.
func (in *Instance) decideTool() Tool {
	names := slices.Sorted(maps.Keys(in.cfg.Decisions))
	return DefineTool("decide", "Ask a fast decider to pick one of a few options. Deciders: "+strings.Join(names, ", ")+".",
		func(ctx context.Context, a decideArgs, _ ToolContext) (Decision, error) {
			var input any
			if len(a.Input) > 0 {
				input = a.Input
			}
			return in.Decide(ctx, a.Decider, Question{Prompt: a.Prompt, Options: a.Options, Input: input})
		})
}
