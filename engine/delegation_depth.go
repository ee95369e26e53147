package engine

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/breadai/bread/core"
)

// DefaultMaxDelegationDepth is the deepest a chain of delegations goes when
// Config.MaxDelegationDepth is zero.
const DefaultMaxDelegationDepth = 8

// delegationChain is the chain of agents that delegated down to the run of
// ctx (core.DelegationChainFrom): empty at top level, one id more at each
// supervisor delegation or loop iteration.
func delegationChain(ctx context.Context) []string {
	return core.DelegationChainFrom(ctx)
}

// delegationMetaKey keeps, on a suspended run's checkpoints, the chain of
// agents that delegated down to it, so the resumed run (another run value,
// maybe in another process) goes on at the depth it suspended at instead
// of starting the limit again.
const delegationMetaKey = "bread.delegation"

// withDelegationMeta adds the chain of the run of ctx to meta; a top-level
// run adds nothing.
func withDelegationMeta(ctx context.Context, meta map[string]string) map[string]string {
	chain := delegationChain(ctx)
	if len(chain) == 0 {
		return meta
	}
	raw, err := json.Marshal(chain)
	if err != nil {
		return meta
	}
	meta = maps.Clone(meta)
	if meta == nil {
		meta = map[string]string{}
	}
	meta[delegationMetaKey] = string(raw)
	return meta
}

// delegationFromMeta returns ctx at the depth a checkpoint's meta records
// (withDelegationMeta): the chain it holds, or top level when it holds
// none. It replaces whatever chain ctx carried, which is the resumer's or
// a delegated child's, not the suspended run's. A malformed value is read
// as top level; a chain is never longer than the limit that let it form.
func (in *Instance) delegationFromMeta(ctx context.Context, meta map[string]string) context.Context {
	var chain []string
	if raw, ok := meta[delegationMetaKey]; ok && json.Unmarshal([]byte(raw), &chain) != nil {
		chain = nil
	}
	if max := in.maxDelegationDepth(); len(chain) > max {
		chain = chain[:max]
	}
	return core.WithDelegationChain(ctx, chain)
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
	return core.WithDelegationChain(ctx, chain), nil
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
