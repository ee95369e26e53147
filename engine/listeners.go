package engine

import (
	"context"
	"fmt"

	"github.com/breadai/bread/core"
)

// notify calls every listener with c. Listeners are read from a
// copy-on-write slice so the hot path takes no lock.
func (in *Instance) notify(ctx context.Context, c core.Crumb) {
	ls := in.listeners.Load()
	if ls == nil {
		return
	}
	for _, e := range *ls {
		in.callListener(ctx, e, c)
	}
}

func (in *Instance) callListener(ctx context.Context, e *listenerEntry, c core.Crumb) {
	defer func() {
		if r := recover(); r != nil {
			b := c.Base()
			in.log.Error("bread: crumb listener panicked", append(runAttrs(b.RunID, b.AgentID, b.SessionID), "crumb", c.CrumbType(), "panic", fmt.Sprint(r))...)
		}
	}()
	e.fn(ctx, c)
}
