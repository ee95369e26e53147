package httpstream

import "github.com/breadai/bread/core"

// ClientSafe returns c as a client may see it: the errors of agent:error and
// tool:error crumbs are reduced to code and message. Crumbs are shared with
// the log and the listeners, so a crumb that needs changing is copied, never
// modified; every other crumb is returned as it is.
func ClientSafe(c core.Crumb) core.Crumb {
	switch v := c.(type) {
	case *core.AgentError:
		cp := *v
		cp.Error = safeError(v.Error)
		return &cp
	case *core.ToolError:
		cp := *v
		cp.Error = safeError(v.Error)
		return &cp
	}
	return c
}

func safeError(e *core.BreadError) *core.BreadError {
	if e == nil {
		return &core.BreadError{Code: core.CodeInternalError, Message: "internal server error"}
	}
	return e.ClientSafe()
}

// failure builds the synthetic agent:error crumb that reports a failure
// before or outside a run, client-safe.
func failure(agentID string, err error) *core.AgentError {
	ce := core.Sanitize(err)
	return &core.AgentError{
		CrumbBase: core.CrumbBase{AgentID: agentID, Timestamp: core.NowMillis()},
		Error:     &core.BreadError{Code: ce.Code, Message: ce.Message},
	}
}
