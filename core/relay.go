package core

import "context"

// relay runs a remote agent and passes its crumbs on as if local: each takes
// a local seq, none is logged (the remote owns that run), and hooks and
// local persistence do not apply.
func (in *Instance) relay(ctx context.Context, out sink, agentID string, remote RemoteAgent, input any, opts RunOptions) (outcome, error) {
	var res outcome
	ended := false
	for c, err := range remote.Run(ctx, agentID, input, opts) {
		if c == nil {
			if err == nil {
				continue
			}
			if ctx.Err() != nil {
				return res, AsBreadError(context.Cause(ctx), CodeRunCancelled)
			}
			be := AsBreadError(err, CodeRemoteAgentError)
			if be.Code == CodeAgentError {
				be = &BreadError{Code: CodeRemoteAgentError, Message: "remote agent " + agentID + ": " + be.Message, Cause: err}
			}
			return res, be
		}
		b := c.Base()
		b.relayed = true
		b.Seq = 0
		switch v := c.(type) {
		case *AgentRunEnd:
			res.output = v.Output
		case *HumanRequired:
			res.suspended, res.checkpointID = true, v.CheckpointID
		}
		if err != nil || IsTerminal(c.CrumbType()) {
			ended = true
			out.end(c, err)
			if err != nil {
				return res, AsBreadError(err, CodeRemoteAgentError)
			}
			return res, nil
		}
		if !out.put(c) {
			return res, errConsumerGone
		}
	}
	if ctx.Err() != nil {
		return res, AsBreadError(context.Cause(ctx), CodeRunCancelled)
	}
	if !ended && !res.suspended {
		return res, &BreadError{Code: CodeRemoteAgentError, Message: "remote agent " + agentID + " ended its stream without a terminal crumb"}
	}
	return res, nil
}
