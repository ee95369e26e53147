package engine

import (
	"context"

	"github.com/breadai/bread/core"
)

// relay runs a remote agent and passes its crumbs on as if local: each takes
// a local seq, none is logged (the remote owns that run), and hooks and
// local persistence do not apply.
func (in *Instance) relay(ctx context.Context, out sink, agentID string, remote core.RemoteAgent, input any, opts core.RunOptions) (outcome, error) {
	var res outcome
	ended := false
	for c, err := range remote.Run(ctx, agentID, input, opts) {
		if c == nil {
			if err == nil {
				continue
			}
			if ctx.Err() != nil {
				return res, core.AsBreadError(context.Cause(ctx), core.CodeRunCancelled)
			}
			be := core.AsBreadError(err, core.CodeRemoteAgentError)
			if be.Code == core.CodeAgentError {
				be = &core.BreadError{Code: core.CodeRemoteAgentError, Message: "remote agent " + agentID + ": " + be.Message, Cause: err}
			}
			return res, be
		}
		b := c.Base()
		// The remote replica owns this run: its crumbs take local seqs
		// but are never logged here (the choke point checks this mark).
		in.relayed.LoadOrStore(b.RunID, struct{}{})
		b.Seq = 0
		switch v := c.(type) {
		case *core.AgentRunEnd:
			res.output = v.Output
		case *core.HumanRequired:
			res.suspended, res.checkpointID = true, v.CheckpointID
		}
		if err != nil || core.IsTerminal(c.CrumbType()) {
			ended = true
			out.end(c, err)
			if err != nil {
				return res, core.AsBreadError(err, core.CodeRemoteAgentError)
			}
			return res, nil
		}
		if !out.put(c) {
			return res, errConsumerGone
		}
	}
	if ctx.Err() != nil {
		return res, core.AsBreadError(context.Cause(ctx), core.CodeRunCancelled)
	}
	if !ended && !res.suspended {
		return res, &core.BreadError{Code: core.CodeRemoteAgentError, Message: "remote agent " + agentID + " ended its stream without a terminal crumb"}
	}
	return res, nil
}
