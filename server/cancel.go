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

type instanceCanceller struct{ inst core.Runtime }

func (c instanceCanceller) Cancel(_ context.Context, runID string) (bool, error) {
	return c.inst.Cancel(runID), nil
}
