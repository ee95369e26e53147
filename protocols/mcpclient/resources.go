package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/breadai/bread/core"
)

// The tools a server's resources and prompts become, under <server>__ like
// its own tools: the MCP method with its slash as an underscore.
const (
	toolResourcesList = "resources_list"
	toolResourcesRead = "resources_read"
	toolPromptsList   = "prompts_list"
	toolPromptsGet    = "prompts_get"
)

// featureTools are the tools of the server's resources and prompts, for
// each the declaration turns on (Resources, Prompts) and the server
// declares.
func (c *conn) featureTools(sess *mcp.ClientSession) []core.Tool {
	var caps *mcp.ServerCapabilities
	if ir := sess.InitializeResult(); ir != nil {
		caps = ir.Capabilities
	}
	if caps == nil {
		return nil
	}
	var out []core.Tool
	if c.cfg.Resources && caps.Resources != nil {
		out = append(out,
			core.Tool{
				Name:        c.cfg.Name + "__" + toolResourcesList,
				Description: "List the resources (and resource templates) of MCP server " + c.cfg.Name + ": their URIs, names, descriptions and MIME types.",
				InputSchema: json.RawMessage(`{"type":"object","properties":{}}`),
				Execute:     c.listResources,
			},
			core.Tool{
				Name:        c.cfg.Name + "__" + toolResourcesRead,
				Description: "Read one resource of MCP server " + c.cfg.Name + " by its URI.",
				InputSchema: json.RawMessage(`{"type":"object","properties":{"uri":{"type":"string","description":"the resource's URI, as resources_list gives it"}},"required":["uri"]}`),
				Execute:     c.readResource,
			})
	}
	if c.cfg.Prompts && caps.Prompts != nil {
		out = append(out,
			core.Tool{
				Name:        c.cfg.Name + "__" + toolPromptsList,
				Description: "List the prompts of MCP server " + c.cfg.Name + ", with their arguments.",
				InputSchema: json.RawMessage(`{"type":"object","properties":{}}`),
				Execute:     c.listPrompts,
			},
			core.Tool{
				Name:        c.cfg.Name + "__" + toolPromptsGet,
				Description: "Get one prompt of MCP server " + c.cfg.Name + " filled with its arguments: its messages.",
				InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","description":"the prompt's name, as prompts_list gives it"},"arguments":{"type":"object","additionalProperties":{"type":"string"},"description":"the prompt's arguments"}},"required":["name"]}`),
				Execute:     c.getPrompt,
			})
	}
	kept := out[:0]
	for _, t := range out {
		if len(t.Name) > maxNameLen {
			c.log().Warn("bread: the server's name is too long for its resource and prompt tools; they are left out", "tool", t.Name, "max", maxNameLen)
			continue
		}
		kept = append(kept, t)
	}
	return kept
}

func (c *conn) listResources(ctx context.Context, _ json.RawMessage, _ core.ToolContext) (any, error) {
	sess, err := c.live()
	if err != nil {
		return nil, err
	}
	resources := []*mcp.Resource{}
	for r, err := range sess.Resources(ctx, nil) {
		if err != nil {
			return nil, c.rpcFailure(ctx, sess, "resources/list", err)
		}
		resources = append(resources, r)
	}
	out := map[string]any{"resources": resources}
	var templates []*mcp.ResourceTemplate
	for rt, err := range sess.ResourceTemplates(ctx, nil) {
		if err != nil {
			// A server without templates may answer method-not-found:
			// the resources alone answer the call.
			templates = nil
			break
		}
		templates = append(templates, rt)
	}
	if len(templates) > 0 {
		out["resourceTemplates"] = templates
	}
	return out, nil
}

func (c *conn) readResource(ctx context.Context, args json.RawMessage, _ core.ToolContext) (any, error) {
	var a struct {
		URI string `json:"uri"`
	}
	if err := json.Unmarshal(args, &a); err != nil || a.URI == "" {
		return nil, core.Errorf(core.CodeValidationError, "%s needs a uri", toolResourcesRead)
	}
	sess, err := c.live()
	if err != nil {
		return nil, err
	}
	res, err := sess.ReadResource(ctx, &mcp.ReadResourceParams{URI: a.URI})
	if err != nil {
		return nil, c.rpcFailure(ctx, sess, "resources/read", err)
	}
	// One text content is its text; anything else (several, binary) the
	// contents in MCP wire form (blobs base64).
	if len(res.Contents) == 1 && res.Contents[0].Blob == nil {
		return res.Contents[0].Text, nil
	}
	return map[string]any{"contents": res.Contents}, nil
}

func (c *conn) listPrompts(ctx context.Context, _ json.RawMessage, _ core.ToolContext) (any, error) {
	sess, err := c.live()
	if err != nil {
		return nil, err
	}
	prompts := []*mcp.Prompt{}
	for p, err := range sess.Prompts(ctx, nil) {
		if err != nil {
			return nil, c.rpcFailure(ctx, sess, "prompts/list", err)
		}
		prompts = append(prompts, p)
	}
	return map[string]any{"prompts": prompts}, nil
}

func (c *conn) getPrompt(ctx context.Context, args json.RawMessage, _ core.ToolContext) (any, error) {
	var a struct {
		Name      string            `json:"name"`
		Arguments map[string]string `json:"arguments"`
	}
	if err := json.Unmarshal(args, &a); err != nil || a.Name == "" {
		return nil, core.Errorf(core.CodeValidationError, "%s needs a name and string arguments", toolPromptsGet)
	}
	sess, err := c.live()
	if err != nil {
		return nil, err
	}
	res, err := sess.GetPrompt(ctx, &mcp.GetPromptParams{Name: a.Name, Arguments: a.Arguments})
	if err != nil {
		return nil, c.rpcFailure(ctx, sess, "prompts/get", err)
	}
	out := map[string]any{"messages": res.Messages}
	if res.Description != "" {
		out["description"] = res.Description
	}
	return out, nil
}

// live is the current session, or the TOOL_ERROR of a server that is
// down.
func (c *conn) live() (*mcp.ClientSession, error) {
	sess := c.current()
	if sess == nil {
		c.poke()
		return nil, c.unavailable()
	}
	return sess, nil
}

// rpcFailure maps a failed request: a JSON-RPC error is the server's
// refusal; anything else is the transport, which drops the session.
func (c *conn) rpcFailure(ctx context.Context, sess *mcp.ClientSession, method string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		return &core.BreadError{
			Code:    core.CodeToolError,
			Message: fmt.Sprintf("MCP server %s refused %s: %s", c.cfg.Name, method, we.Message),
			Context: map[string]any{"server": c.cfg.Name, "method": method, "rpcCode": we.Code},
		}
	}
	c.broken(sess, err)
	return &core.BreadError{
		Code:    core.CodeToolError,
		Message: fmt.Sprintf("MCP server %s is unreachable (reconnecting)", c.cfg.Name),
		Context: map[string]any{"server": c.cfg.Name, "method": method},
		Cause:   err,
	}
}
