package decisions

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/breadai/bread/core"
)

// Error codes of this package, in the style of core's catalogue.
const (
	// CodeDecisionInvalid: the decider answered outside the allowed
	// options (or unreadably), even after its one retry.
	CodeDecisionInvalid = core.CodeDecisionInvalid
	// CodeDeciderNotFound: the registry has no decider by that name.
	CodeDeciderNotFound = core.CodeDeciderNotFound
	// CodeDecisionTimeout: the decider did not answer in time.
	CodeDecisionTimeout = "DECISION_TIMEOUT"
)

// Question, Decision and Decider are core's port, so every decider here is
// a core.Decider that engine.Config.Decisions takes as is.
type (
	// Question is one bounded choice: Prompt, the allowed Options, and the
	// Input the decision is about.
	Question = core.Question
	// Decision is a decider's answer: Choice (one of the options),
	// Confidence in [0,1] when known, and a short Reason.
	Decision = core.Decision
	// Decider makes bounded choices.
	Decider = core.Decider
)

// DeciderFunc adapts a function to Decider.
type DeciderFunc func(ctx context.Context, q Question) (Decision, error)

// Decide implements Decider.
func (f DeciderFunc) Decide(ctx context.Context, q Question) (Decision, error) { return f(ctx, q) }

// Registry names deciders, as Config.Decisions will hold them.
type Registry map[string]Decider

// Names returns the registered names, sorted.
func (r Registry) Names() []string { return slices.Sorted(maps.Keys(r)) }

// Decide asks the named decider. An unknown name is DECIDER_NOT_FOUND
// naming the registered ones; a malformed question is VALIDATION_ERROR; an
// answer outside the options is DECISION_INVALID whatever the decider.
func (r Registry) Decide(ctx context.Context, name string, q Question) (Decision, error) {
	d, ok := r[name]
	if !ok || d == nil {
		return Decision{}, &core.BreadError{Code: CodeDeciderNotFound, Message: "no decider named " + quote(name) + "; registered: " + strings.Join(r.Names(), ", "), Context: map[string]any{"decider": name, "registered": r.Names()}}
	}
	if err := Validate(q); err != nil {
		return Decision{}, err
	}
	dec, err := d.Decide(ctx, q)
	if err != nil {
		return Decision{}, err
	}
	if !slices.Contains(q.Options, dec.Choice) {
		return Decision{}, invalidChoice(dec.Choice, q.Options)
	}
	return dec, nil
}

// Validate checks that a question has a well-formed option list: at least
// one option, none empty, no duplicates.
func Validate(q Question) error {
	if len(q.Options) == 0 {
		return &core.BreadError{Code: core.CodeValidationError, Message: "a decision needs at least one option"}
	}
	seen := make(map[string]bool, len(q.Options))
	for _, o := range q.Options {
		if strings.TrimSpace(o) == "" {
			return &core.BreadError{Code: core.CodeValidationError, Message: "decision options must not be empty"}
		}
		if seen[o] {
			return &core.BreadError{Code: core.CodeValidationError, Message: "decision option " + quote(o) + " is listed twice"}
		}
		seen[o] = true
	}
	return nil
}

func invalidChoice(choice string, options []string) *core.BreadError {
	return &core.BreadError{Code: CodeDecisionInvalid, Message: "the decider chose " + quote(choice) + ", which is not one of: " + strings.Join(options, ", "), Context: map[string]any{"choice": choice, "options": options}}
}

func quote(s string) string {
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return `"` + s + `"`
}
