//lint:file-ignore SA1019 sampling is deprecated from MCP 2026-07-28 on, and still what servers send during the deprecation window and on older revisions

package mcpclient

import (
	"context"
	"path"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/breadai/bread/core"
)

// sample answers a server's sampling/createMessage with the model of the
// agent whose tool call the request belongs to, when that agent's
// configuration lets the server sample (AgentConfig.Sampling); any other
// request is refused with a JSON-RPC error the server reads. The model
// gets the server's system prompt and messages (text only) and no tools.
func (c *conn) sample(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	f := c.p.flights.of(ctx, req.Session)
	if f == nil {
		return nil, rpcRefusal("bread refuses sampling outside one of its agents' tool calls")
	}
	a, ok := c.p.agent(f.agentID)
	if !ok {
		return nil, rpcRefusal("bread refuses sampling: the calling agent is unknown")
	}
	cfg, err := agentConfig(a)
	if err != nil || cfg == nil || !cfg.samples(c.cfg.Name) {
		c.log().Warn("bread: an MCP server asked to sample an agent's model that does not allow it; refused", "agentId", a.ID)
		return nil, rpcRefusal("agent " + a.ID + " does not allow MCP server " + c.cfg.Name + " to use its model (plugins.mcp_client.sampling)")
	}
	p := req.Params
	msgs := make([]core.Message, 0, len(p.Messages))
	for _, m := range p.Messages {
		t, ok := m.Content.(*mcp.TextContent)
		if !ok {
			return nil, rpcRefusal("bread answers sampling with text messages only")
		}
		role := core.RoleUser
		if m.Role == "assistant" {
			role = core.RoleAssistant
		}
		msgs = append(msgs, core.Message{Role: role, Parts: []core.Part{core.TextPart(t.Text)}})
	}
	model, err := core.ResolveModel(a.Model, a.Providers, c.p.providers)
	if err != nil {
		return nil, rpcRefusal("bread could not resolve agent " + a.ID + "'s model: " + core.AsBreadError(err, core.CodeProviderError).Message)
	}
	settings := a.Model.Settings
	if p.MaxTokens > 0 {
		n := int(p.MaxTokens)
		settings.MaxOutputTokens = &n
	}
	if p.Temperature != 0 {
		t := p.Temperature
		settings.Temperature = &t
	}
	if len(p.StopSequences) > 0 {
		settings.StopSequences = p.StopSequences
	}
	var text strings.Builder
	stop := "endTurn"
	for ev, err := range model.Stream(ctx, core.ModelRequest{System: p.SystemPrompt, Messages: msgs, Settings: settings, ProviderOptions: a.Model.ProviderOptions}) {
		if err != nil {
			return nil, rpcRefusal("agent " + a.ID + "'s model failed: " + core.AsBreadError(err, core.CodeProviderError).Message)
		}
		switch ev.Type {
		case core.EventTextDelta:
			text.WriteString(ev.Delta)
		case core.EventFinish:
			if ev.FinishReason == core.FinishLength {
				stop = "maxTokens"
			}
		}
	}
	return &mcp.CreateMessageResult{Content: &mcp.TextContent{Text: text.String()}, Model: a.Model.String(), Role: "assistant", StopReason: stop}, nil
}

// samples reports whether the agent lets server sample its model: a name
// or a glob (path.Match) of AgentConfig.Sampling.
func (cfg *AgentConfig) samples(server string) bool {
	for _, pat := range cfg.Sampling {
		if ok, _ := path.Match(pat, server); ok {
			return true
		}
	}
	return false
}
