package core

import (
	"context"
	"time"
)

// HookScope says what kind of run a hook observes.
type HookScope string

// The hook scopes.
const (
	HookAgent HookScope = "agent"
	HookTask  HookScope = "task"
	HookTool  HookScope = "tool"
)

// HookContext describes the run a hook fires for. Scope tells a global hook
// which kind of run it sees; TaskName and ToolName are set for those scopes.
type HookContext struct {
	Scope     HookScope
	AgentID   string
	RunID     string
	SessionID string
	Skill     string
	TaskName  string
	ToolName  string
	// Credentials resolves secrets for task and tool scopes.
	Credentials CredentialProvider
	// Store is set for task scopes so a hook can do its own I/O.
	Store BreadStore
}

// Hooks observe and steer runs. Every field is optional. One shape serves
// every scope (agent, task, tool, global); a run resolves its chain as the
// scoped hooks, then plugin hooks in registration order, then Config.Hooks.
//
// A hook that returns an error stops its chain and fails the run with that
// error.
type Hooks struct {
	// BeforeRun may replace the input or short-circuit the run with an
	// output. A nil result means no opinion. A short-circuited run is still
	// persisted and still followed by AfterRun.
	BeforeRun func(ctx context.Context, hc HookContext, input any) (*BeforeRunResult, error)
	// AfterRun may replace the output; the chain passes each replacement on.
	AfterRun func(ctx context.Context, hc HookContext, input, output any, d time.Duration) (*AfterRunResult, error)
	// OnError may recover with an output, ask for a retry (bounded by the
	// scope's ErrorHandling.Retry), or fail with a replacement error. A nil
	// result means no opinion; the first opinion wins.
	OnError func(ctx context.Context, hc HookContext, input any, err *BreadError) (*OnErrorResult, error)
	// OnSuspend observes a run suspending for a human.
	OnSuspend func(ctx context.Context, hc HookContext, toolName, checkpointID string)
}

// BeforeAction is what a BeforeRun hook decided.
type BeforeAction string

// The BeforeRun actions.
const (
	Continue     BeforeAction = "continue"
	ShortCircuit BeforeAction = "shortCircuit"
)

// BeforeRunResult is a BeforeRun decision: Continue with Input, or
// ShortCircuit with Output.
type BeforeRunResult struct {
	Action BeforeAction
	Input  any
	Output any
}

// AfterRunResult replaces a run's output.
type AfterRunResult struct {
	Output any
}

// ErrorAction is what an OnError hook decided.
type ErrorAction string

// The OnError actions.
const (
	Recover ErrorAction = "recover"
	Retry   ErrorAction = "retry"
	Fail    ErrorAction = "fail"
)

// OnErrorResult is an OnError decision: Recover with Output, Retry, or Fail
// with Error.
type OnErrorResult struct {
	Action ErrorAction
	Output any
	Error  *BreadError
}

// ErrorHandling bounds retries for a scope.
type ErrorHandling struct {
	Retry *RetryPolicy `json:"retry,omitempty"`
}

// RetryPolicy is an exponential backoff: Attempts tries in all, waiting
// BackoffMs (default 500), then BackoffMs*BackoffMultiplier (default 2), ...
// between them.
type RetryPolicy struct {
	Attempts          int     `json:"attempts"`
	BackoffMs         int     `json:"backoffMs,omitempty"`
	BackoffMultiplier float64 `json:"backoffMultiplier,omitempty"`
}
