package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/breadai/bread/core"
)

// elicit answers a server's elicitation/create: it hands the question to
// the tool call it belongs to, whose execution returns it to the engine as
// a core.ToolQuestion (the run suspends with human:required), and waits
// for the human's answer, which the resumed execution delivers.
func (c *conn) elicit(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	if req.Params.Mode == "url" {
		// Only form elicitation is declared: a URL is not something a bread
		// approval UI opens for a server.
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	f := c.p.flights.of(ctx, req.Session)
	if f == nil {
		c.log().Warn("bread: an MCP server asked a question that belongs to no single tool call of bread's; declining it")
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	a := &ask{params: req.Params, reply: make(chan *mcp.ElicitResult, 1)}
	select {
	case f.events <- flightEvent{ask: a}:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-f.ctx.Done():
		return nil, f.ctx.Err()
	}
	select {
	case res := <-a.reply:
		return res, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-f.ctx.Done():
		// The request ended (timeout, plugin closed): the server's
		// question goes unanswered with it.
		return &mcp.ElicitResult{Action: "cancel"}, nil
	}
}

// question is the core.ToolQuestion of an elicitation: the server's
// requested schema and message.
func (a *ask) question(server string) *core.ToolQuestion {
	schema := json.RawMessage(`{"type":"object"}`)
	if a.params.RequestedSchema != nil {
		if b, err := json.Marshal(a.params.RequestedSchema); err == nil && len(b) > 0 && b[0] == '{' {
			schema = b
		}
	}
	prompt := a.params.Message
	if prompt == "" {
		prompt = "MCP server " + server + " asks for input"
	}
	return &core.ToolQuestion{Schema: schema, Prompt: prompt}
}

// elicitResult reads a human's answer to an elicitation:
//
//   - {"action": "decline"} or {"action": "cancel"} (that key alone)
//     declines or cancels;
//   - {"action": "accept", "content": {...}} (those keys alone) accepts
//     with the content;
//   - any other object accepts with the object as the content.
//
// The SDK checks accepted content against the server's requested schema
// before sending it; content that does not match fails the server's
// request, and the server decides what its tool answers.
func elicitResult(answer json.RawMessage) (*mcp.ElicitResult, error) {
	var obj map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(answer))
	if err := dec.Decode(&obj); err != nil || obj == nil {
		return nil, &core.BreadError{Code: core.CodeValidationError, Message: `an answer to an MCP server's question is an object: the content, or {"action": "decline"|"cancel"}`}
	}
	var action string
	if raw, ok := obj["action"]; ok && json.Unmarshal(raw, &action) == nil {
		switch {
		case len(obj) == 1 && (action == "decline" || action == "cancel"):
			return &mcp.ElicitResult{Action: action}, nil
		case action == "accept" && len(obj) <= 2:
			var content map[string]any
			if raw, ok := obj["content"]; ok {
				if err := json.Unmarshal(raw, &content); err != nil {
					return nil, &core.BreadError{Code: core.CodeValidationError, Message: "the content of an accepted MCP question is an object: " + err.Error()}
				}
			} else if len(obj) == 2 {
				break
			}
			return &mcp.ElicitResult{Action: "accept", Content: content}, nil
		}
	}
	var content map[string]any
	if err := json.Unmarshal(answer, &content); err != nil {
		return nil, fmt.Errorf("decoding an elicitation answer: %w", err)
	}
	return &mcp.ElicitResult{Action: "accept", Content: content}, nil
}

// rpcRefusal is a JSON-RPC error a server reads when bread refuses its
// request.
func rpcRefusal(msg string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: msg}
}
