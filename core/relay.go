package core

import "context"

// relay runs a remote agent and passes its crumbs on as if local: each takes
// a local seq, none is logged (the remote owns that run), and hooks and
// local persistence do not apply.
func (in *Instance) relay(ctx context.Context, e *emitter, agentID string, remote RemoteAgent, input any, opts RunOptions) error {
	sawCrumb := false
	for c, err := range remote.Run(ctx, agentID, input, opts) {
		if c == nil {
			if err == nil {
				continue
			}
			if ctx.Err() != nil {
				return AsBreadError(context.Cause(ctx), CodeRunCancelled)
			}
			be := AsBreadError(err, CodeRemoteAgentError)
			if be.Code == CodeAgentError {
				be = &BreadError{Code: CodeRemoteAgentError, Message: "remote agent " + agentID + ": " + be.Message, Cause: err}
			}
			return be
		}
		sawCrumb = true
		b := c.Base()
		b.relayed = true
		b.Seq = 0
		if err != nil || IsTerminal(c.CrumbType()) {
			e.terminal = true
			e.cp.process(e.ctx, c)
			if !e.stopped && !e.yield(c, err) {
				e.stopped = true
			}
			return nil
		}
		if !e.emit(c) {
			return nil
		}
	}
	if ctx.Err() != nil {
		return AsBreadError(context.Cause(ctx), CodeRunCancelled)
	}
	if !sawCrumb || !e.terminal {
		return &BreadError{Code: CodeRemoteAgentError, Message: "remote agent " + agentID + " ended its stream without a terminal crumb"}
	}
	return nil
}
