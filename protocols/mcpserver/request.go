package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type requestKey struct{}

// RequestFrom returns the MCP tools/call a tool, task or agent run serves,
// from the context the plugin passes down (a tool's Execute, a model's
// Stream); nil outside a call. A Go tool may use it to reach the client's
// session (req.Session: logging, a request of its own) or the HTTP stream
// (req.Extra.CloseSSEStream).
func RequestFrom(ctx context.Context) *mcp.CallToolRequest {
	r, _ := ctx.Value(requestKey{}).(*mcp.CallToolRequest)
	return r
}

func withRequest(ctx context.Context, req *mcp.CallToolRequest) context.Context {
	return context.WithValue(ctx, requestKey{}, req)
}
