package core

import (
	"context"
	"iter"
)

// RemoteAgent runs an agent on another bread. Config.RemoteAgents maps local
// ids to remote agents; a remote id shadows a local agent of the same id. The
// runner relays the remote crumbs: each takes a local seq, none is logged,
// and local hooks and persistence are bypassed.
//
// A remote agent may implement Starter and io.Closer to hold connections for
// the Instance's lifetime.
type RemoteAgent interface {
	Run(ctx context.Context, agentID string, input any, opts RunOptions) iter.Seq2[Crumb, error]
}
