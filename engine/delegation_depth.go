package engine

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/breadai/bread/core"
)

// DefaultMaxDelegationDepth is the deepest a chain of delegations goes when
// Config.MaxDelegationDepth is zero.
const DefaultMaxDelegationDepth = 8

// delegationKey carries, in a run's context, the chain of agents that
// delegated down to it: empty at top level, one id more at each
// supervisor delegation or loop iteration.
type delegationKey struct{}

func delegationChain(ctx context.Context) []string {
	c, _ := ctx.Value(delegationKey{}).([]string)
	return c
}

// delegating returns the context a delegation from the run of agent from
// runs its agents in (to names them, for the error), one level deeper; or
// DELEGATION_DEPTH_EXCEEDED when that level is past the instance's
// maximum. Agents that delegate to each other (a → b → a, or an agent to
// itself through its loop pool) would otherwise recurse until the client
// went away, and a background run for ever.
func (in *Instance) delegating(ctx context.Context, from, to string) (context.Context, error) {
	chain := append(slices.Clone(delegationChain(ctx)), from)
	if max := in.maxDelegationDepth(); len(chain) > max {
		return nil, &core.BreadError{
			Code: core.CodeDelegationDepth,
			Message: "delegation depth limit reached: " + quoteTruncated(from) + " delegating to " + quoteTruncated(to) +
				" would run " + strconv.Itoa(len(chain)) + " levels deep, past the maximum of " + strconv.Itoa(max) +
				" (agents that delegate to each other, or a limit to raise); chain: " + strings.Join(append(chain, to), " → "),
			Context: map[string]any{"agentId": from, "subAgentId": to, "maxDepth": max, "chain": append(chain, to)},
		}
	}
	return context.WithValue(ctx, delegationKey{}, chain), nil
}

func (in *Instance) maxDelegationDepth() int {
	if in.cfg.MaxDelegationDepth > 0 {
		return in.cfg.MaxDelegationDepth
	}
	return DefaultMaxDelegationDepth
}

// depthExceeded returns the first DELEGATION_DEPTH_EXCEEDED among a
// turn's tool outcomes: it ends the run rather than go back to the model,
// whose answer would be to delegate again, at every level of the chain.
func depthExceeded(results []toolOutcome) *core.BreadError {
	for _, o := range results {
		if o.err != nil && o.err.Code == core.CodeDelegationDepth {
			return o.err
		}
	}
	return nil
}
