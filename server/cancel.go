package server

import (
	"context"

	"github.com/breadai/bread/core"
)

// Canceller cancels a run by id. It reports whether the run was found. The
// default cancels runs of this instance; a deployment with replicas can
// forward the request to whichever replica runs it.
type Canceller interface {
	Cancel(ctx context.Context, runID string) (bool, error)
}

// StreamAuthorizer is implemented by transports that guard access to runs
// (httpchunked and httpsse, through their AuthorizeStream option). The
// cancel route consults it after the action grant, as the run stream does.
type StreamAuthorizer interface {
	AuthorizeStream(ctx context.Context, identity *core.AuthIdentity, runID string) bool
}

type instanceCanceller struct{ inst core.Runtime }

func (c instanceCanceller) Cancel(_ context.Context, runID string) (bool, error) {
	return c.inst.Cancel(runID), nil
}
