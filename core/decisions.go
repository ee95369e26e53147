package core

import (
	"context"
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
