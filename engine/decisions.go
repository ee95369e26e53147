package engine

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/typed"
)

// Decide asks the named decider and checks its answer is one of the options:
// an unknown decider is DECIDER_NOT_FOUND naming the configured ones, an
// answer outside the options is DECISION_INVALID.
func (in *Instance) Decide(ctx context.Context, decider string, q core.Question) (core.Decision, error) {
	d, ok := in.cfg.Decisions[decider]
	if !ok || d == nil {
		names := slices.Sorted(maps.Keys(in.cfg.Decisions))
		return core.Decision{}, &core.BreadError{
			Code:    core.CodeDeciderNotFound,
			Message: "decider " + quoteTruncated(decider) + " is not configured; configured: " + strings.Join(names, ", "),
			Context: map[string]any{"decider": decider, "available": names},
		}
	}
	if len(q.Options) == 0 {
		return core.Decision{}, &core.BreadError{Code: core.CodeValidationError, Message: "a question needs at least one option"}
	}
	ans, err := d.Decide(ctx, q)
	if err != nil {
		return core.Decision{}, core.AsBreadError(err, core.CodeProviderError)
	}
	if !slices.Contains(q.Options, ans.Choice) {
		return core.Decision{}, &core.BreadError{
			Code:    core.CodeDecisionInvalid,
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
func (in *Instance) decideTool() core.Tool {
	names := slices.Sorted(maps.Keys(in.cfg.Decisions))
	return typed.DefineTool("decide", "Ask a fast decider to pick one of a few options. Deciders: "+strings.Join(names, ", ")+".",
		func(ctx context.Context, a decideArgs, _ core.ToolContext) (core.Decision, error) {
			var input any
			if len(a.Input) > 0 {
				input = a.Input
			}
			return in.Decide(ctx, a.Decider, core.Question{Prompt: a.Prompt, Options: a.Options, Input: input})
		})
}
