package core

import (
	"context"
	"net/http"
	"strconv"
	"strings"
)

// DelegationDepthHeader carries, on a run request one bread server makes
// of another (a remote agent reached over HTTP or A2A), how many
// delegations deep the calling run already is. The receiving server starts
// its run that deep (DelegationFromHeader), so agents that delegate to each
// other across servers still meet the delegation limit instead of
// restarting it at every hop.
const DelegationDepthHeader = "Bread-Delegation-Depth"

// MaxRemoteDelegationDepth bounds the depth a server takes from
// DelegationDepthHeader: a value over it is read as it, so a client cannot
// make a server hold an arbitrary chain; the engine's own limit (8 by
// default) is far below it.
const MaxRemoteDelegationDepth = 64

// RemoteDelegation is how a level a run inherited from another server
// (DelegationDepthHeader) appears in its delegation chain: that server's
// agent ids stay its own.
const RemoteDelegation = "(remote)"

// delegationKey carries the chain of agents that delegated down to a run:
// empty at top level, one id more at each supervisor delegation or loop
// iteration.
type delegationKey struct{}

// WithDelegationChain returns ctx carrying chain, the agents that
// delegated down to the runs started under it (the engine adds one level
// at each delegation; a remote-agent ingress seeds it from
// DelegationDepthHeader).
func WithDelegationChain(ctx context.Context, chain []string) context.Context {
	return context.WithValue(ctx, delegationKey{}, chain)
}

// DelegationChainFrom returns the chain WithDelegationChain put in ctx; nil
// at top level.
func DelegationChainFrom(ctx context.Context) []string {
	c, _ := ctx.Value(delegationKey{}).([]string)
	return c
}

// SetDelegationHeader sets DelegationDepthHeader on h to the depth of the
// run of ctx, and leaves h alone at top level: what a remote-agent client
// calls on each request it makes for a run.
func SetDelegationHeader(ctx context.Context, h http.Header) {
	if n := len(DelegationChainFrom(ctx)); n > 0 {
		h.Set(DelegationDepthHeader, strconv.Itoa(n))
	}
}

// DelegationFromHeader returns ctx carrying the depth the request's
// DelegationDepthHeader states, as that many RemoteDelegation levels (at
// most MaxRemoteDelegationDepth); a missing header, or one that is not a
// positive decimal number, leaves ctx as it is (top level).
func DelegationFromHeader(ctx context.Context, h http.Header) context.Context {
	raw := strings.TrimSpace(h.Get(DelegationDepthHeader))
	if raw == "" || len(raw) > 6 {
		if len(raw) > 6 && strings.Trim(raw, "0123456789") == "" {
			return WithDelegationChain(ctx, remoteLevels(MaxRemoteDelegationDepth))
		}
		return ctx
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < 1 || raw[0] == '+' {
		return ctx
	}
	return WithDelegationChain(ctx, remoteLevels(min(n, MaxRemoteDelegationDepth)))
}

func remoteLevels(n int) []string {
	chain := make([]string, n)
	for i := range chain {
		chain[i] = RemoteDelegation
	}
	return chain
}
