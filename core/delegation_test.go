package core_test

import (
	"context"
	"net/http"
	"slices"
	"testing"

	"github.com/breadai/bread/core"
)

// TestDelegationHeader: a remote-agent client states its run's depth, and
// the receiving server starts that deep, bounded; anything else it reads
// as top level.
func TestDelegationHeader(t *testing.T) {
	ctx := core.WithDelegationChain(context.Background(), []string{"a", "b", "a"})
	h := http.Header{}
	core.SetDelegationHeader(ctx, h)
	if got := h.Get(core.DelegationDepthHeader); got != "3" {
		t.Fatalf("header %q, want 3", got)
	}
	top := http.Header{}
	core.SetDelegationHeader(context.Background(), top)
	if _, ok := top[core.DelegationDepthHeader]; ok {
		t.Errorf("a top-level run sets the header: %v", top)
	}
	for _, tt := range []struct {
		value string
		depth int
	}{
		{"3", 3},
		{" 2 ", 2},
		{"64", 64},
		{"65", core.MaxRemoteDelegationDepth},
		{"99999999999999999999", core.MaxRemoteDelegationDepth},
		{"", 0},
		{"0", 0},
		{"-1", 0},
		{"+3", 0},
		{"3.5", 0},
		{"three", 0},
		{"0x10", 0},
	} {
		h := http.Header{}
		if tt.value != "" {
			h.Set(core.DelegationDepthHeader, tt.value)
		}
		chain := core.DelegationChainFrom(core.DelegationFromHeader(context.Background(), h))
		if len(chain) != tt.depth || slices.ContainsFunc(chain, func(s string) bool { return s != core.RemoteDelegation }) {
			t.Errorf("%q: chain %v, want %d remote levels", tt.value, chain, tt.depth)
		}
	}
}
