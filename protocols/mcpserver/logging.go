//lint:file-ignore SA1019 logging is deprecated from MCP 2026-07-28 on (SEP-2577), and still part of it during the deprecation window and on older revisions, which clients speak

package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/breadai/bread/core"
)

// capabilities are what the server declares: tools, logging, prompts, and
// resources with subscriptions (completions follow from the handler). The
// lists change when an Endpoint's plugin is replaced (a `bread dev`
// reload), so each declares listChanged.
func capabilities() *mcp.ServerCapabilities {
	return &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}, Logging: &mcp.LoggingCapabilities{},
		Prompts: &mcp.PromptCapabilities{ListChanged: true}, Resources: &mcp.ResourceCapabilities{Subscribe: true, ListChanged: true}}
}

// progress returns what reports a crumb to the client: a
// notifications/progress when the request carries a progress token
// (progress counts the crumbs, so it only grows; the message names the
// crumb), and a notifications/message at the crumb's level when the client
// set a log level (logging/setLevel on a session, or the 2026-07-28
// request's own _meta). A 2025-11-25 request without a session never set
// one, so it gets no log messages (the SDK would assume info).
func progress(ctx context.Context, req *mcp.CallToolRequest) func(core.Crumb) {
	if req == nil || req.Session == nil {
		return func(core.Crumb) {}
	}
	token := req.Params.GetProgressToken()
	logs := true
	if req.Extra != nil && req.Extra.Header != nil && req.Extra.Header.Get(statelessHeader) != "" {
		ip := req.Session.InitializeParams()
		logs = ip != nil && ip.ProtocolVersion >= roundTripVersion
	}
	n := 0
	return func(c core.Crumb) {
		msg := progressMessage(c)
		if token != nil {
			n++
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(n), Message: msg})
		}
		if logs {
			b := c.Base()
			_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: logLevel(c), Logger: "bread", Data: map[string]any{
				"type": c.CrumbType(), "agentId": b.AgentID, "runId": b.RunID, "message": msg,
			}})
		}
	}
}

// logLevel is the level a crumb is logged at: failures are errors, a run
// waiting for a human is a notice, the streamed pieces (text, reasoning,
// partial results) are debug, and the rest of a run's course is info.
func logLevel(c core.Crumb) mcp.LoggingLevel {
	switch c.(type) {
	case *core.AgentError, *core.ToolError:
		return "error"
	case *core.HumanRequired:
		return "notice"
	case *core.TextDelta, *core.ReasoningDelta, *core.ToolResultPartial:
		return "debug"
	}
	return "info"
}
