package mcpclient

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// clientOptions declares what this client answers, and nothing more: no
// roots; elicitation when the server's declaration turns it on; sampling
// when an agent using the server allows it. The SDK infers each capability
// from its handler.
func (c *conn) clientOptions() *mcp.ClientOptions {
	o := &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{},
		ToolListChangedHandler: func(_ context.Context, req *mcp.ToolListChangedRequest) {
			go c.refresh(req.Session)
		},
	}
	if c.cfg.Elicitation {
		o.ElicitationHandler = c.elicit
	}
	if c.p.samplers[c.cfg.Name] {
		//lint:ignore SA1019 sampling is deprecated from 2026-07-28 on; servers still send it
		o.CreateMessageHandler = c.sample
	}
	return o
}
