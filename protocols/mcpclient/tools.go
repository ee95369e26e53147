package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/breadai/bread/core"
)

var (
	camelBoundary = regexp.MustCompile(`([a-z0-9])([A-Z])`)
	notNameChars  = regexp.MustCompile(`[^a-z0-9_]+`)
	underscores   = regexp.MustCompile(`_+`)
)

// SanitizeToolName maps a server's tool name to bread's snake_case:
// list-files and listFiles both become list_files, and a name that does not
// start with a letter gets a t_ prefix. The original name is what a call
// sends.
func SanitizeToolName(original string) string {
	s := camelBoundary.ReplaceAllString(original, "${1}_${2}")
	s = strings.ToLower(s)
	s = notNameChars.ReplaceAllString(s, "_")
	s = underscores.ReplaceAllString(s, "_")
	s = strings.Trim(s, "_")
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		s = "t_" + s
	}
	return strings.TrimRight(s, "_")
}

// maxNameLen keeps the name the model sees, plugin_mcp_client_<name>,
// within 64 bytes: bread's limit on a tool name, and the limit of several
// providers' APIs on a function name.
const maxNameLen = 64 - len("plugin_"+PluginName+"_")

// toolName is <server>__<sanitized>, cut to maxNameLen.
func toolName(server, original string) (string, error) {
	room := maxNameLen - len(server) - 2
	if room < 1 {
		return "", core.Errorf(core.CodeInvalidName, "MCP server name %q leaves no room for tool names (at most %d bytes in all)", server, maxNameLen)
	}
	name := SanitizeToolName(original)
	if len(name) > room {
		name = strings.TrimRight(name[:room], "_")
	}
	return server + "__" + name, nil
}

// buildTools turns a server's listing into bread tools. Two server tools
// that sanitize to one name both keep it: the engine then refuses any run of
// an agent that has them with TOOL_NAME_COLLISION (a permission that denies
// the name lets the agent run without them), rather than one silently
// shadowing the other. The collision is logged naming both originals.
func (c *conn) buildTools(list []*mcp.Tool) ([]core.Tool, error) {
	seen := map[string]string{}
	out := make([]core.Tool, 0, len(list))
	for _, t := range list {
		name, err := toolName(c.cfg.Name, t.Name)
		if err != nil {
			return nil, err
		}
		if prev, dup := seen[name]; dup {
			c.log().Warn("bread: two tools of an MCP server become one name; agents using the server are refused with TOOL_NAME_COLLISION until one is renamed or denied",
				"name", name, "originals", []string{prev, t.Name})
		}
		seen[name] = t.Name
		desc := t.Description
		if desc == "" {
			desc = t.Title
		}
		if desc == "" {
			desc = t.Name
		}
		if name[len(c.cfg.Name)+2:] != t.Name {
			desc += fmt.Sprintf(" (MCP tool %q of server %s)", t.Name, c.cfg.Name)
		}
		out = append(out, core.Tool{
			Name:         name,
			Description:  desc,
			InputSchema:  schemaJSON(t.InputSchema, true),
			OutputSchema: schemaJSON(t.OutputSchema, false),
			Execute:      c.caller(t.Name),
		})
	}
	return out, nil
}

// schemaJSON re-encodes a schema the server sent, unchanged. An input
// schema that is missing or not an object is the empty object schema, so
// one odd tool cannot fail a run's tool assembly.
func schemaJSON(s any, input bool) json.RawMessage {
	if s == nil {
		if input {
			return json.RawMessage(`{"type":"object"}`)
		}
		return nil
	}
	b, err := json.Marshal(s)
	if err != nil || len(b) == 0 || b[0] != '{' {
		if input {
			return json.RawMessage(`{"type":"object"}`)
		}
		return nil
	}
	return b
}

// caller is the Execute of one tool: it calls the original name on the
// session current at call time. A question the server asks during the call
// (elicitation) ends this execution with a core.ToolQuestion while the
// server's request stays open; the resumed execution (tc.Answer set)
// answers it and waits for the call's result. When nothing is parked for
// the call (bread restarted, the resume reached another replica, the wait
// timed out), the tool is called again from the start and the server asks
// again.
func (c *conn) caller(original string) func(ctx context.Context, args json.RawMessage, tc core.ToolContext) (any, error) {
	return func(ctx context.Context, args json.RawMessage, tc core.ToolContext) (any, error) {
		if tc.Answer != nil {
			if p := c.p.flights.take(flightKey(tc)); p != nil {
				res, err := elicitResult(tc.Answer)
				if err != nil {
					// The server's question stays parked for a valid answer
					// would be nicer, but the checkpoint is spent: decline it.
					p.a.reply <- &mcp.ElicitResult{Action: "decline"}
					c.p.flights.done(p.f)
					return nil, err
				}
				p.a.reply <- res
				return c.await(ctx, p.f, original)
			}
			c.log().Info("bread: an answer to an MCP server's question found no request waiting for it (bread restarted, another replica asked, or the wait timed out); calling the tool again", "tool", original, "runId", tc.RunID, "toolCallId", tc.ToolCallID)
		}
		sess := c.current()
		if sess == nil {
			c.poke()
			return nil, c.unavailable()
		}
		var arguments any = map[string]any{}
		if len(args) > 0 && string(args) != "null" {
			arguments = args
		}
		f := c.p.flights.start(c.ctx, sess, tc, &mcp.CallToolParams{Name: original, Arguments: arguments})
		return c.await(ctx, f, original)
	}
}

// await waits for a flight's next event: a question parks the flight and
// suspends the run; the result ends it.
func (c *conn) await(ctx context.Context, f *flight, original string) (any, error) {
	select {
	case <-ctx.Done():
		c.p.flights.done(f)
		return nil, ctx.Err()
	case ev := <-f.events:
		if ev.ask != nil {
			p := c.p.flights.park(f, ev.ask, c.p.opts.ElicitationTimeout, c.p.opts.ConnectTimeout, func() {
				c.log().Warn("bread: nobody answered an MCP server's question in time; cancelled it at the server", "tool", original, "timeout", c.p.opts.ElicitationTimeout.String())
			})
			go c.p.watchRun(p)
			return nil, ev.ask.question(c.cfg.Name)
		}
		c.p.flights.done(f)
		return c.callResult(ctx, f.sess, original, ev.res, ev.err)
	}
}

// callResult maps the outcome of tools/call.
func (c *conn) callResult(ctx context.Context, sess *mcp.ClientSession, original string, res *mcp.CallToolResult, err error) (any, error) {
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var we *jsonrpc.Error
		if errors.As(err, &we) {
			return nil, &core.BreadError{
				Code:    core.CodeToolError,
				Message: fmt.Sprintf("MCP server %s refused the call to %s: %s", c.cfg.Name, original, we.Message),
				Context: map[string]any{"server": c.cfg.Name, "tool": original, "rpcCode": we.Code},
			}
		}
		// The transport failed: drop the session so the connection
		// loop reconnects, and let the model see why this call failed.
		c.broken(sess, err)
		return nil, &core.BreadError{
			Code:    core.CodeToolError,
			Message: fmt.Sprintf("MCP server %s is unreachable (reconnecting)", c.cfg.Name),
			Context: map[string]any{"server": c.cfg.Name, "tool": original},
			Cause:   err,
		}
	}
	return toolResult(c.cfg.Name, original, res)
}

// toolResult maps an MCP result to a bread tool result:
//
//   - isError is a TOOL_ERROR whose message is the text content, with every
//     block and the structured content in its context (the tool:error
//     crumb carries them);
//   - text only, with structured content: the structured content;
//   - text only: the text (several blocks joined by newlines);
//   - anything else (images, audio, resource links, embedded resources):
//     {"content": [blocks in MCP wire form], "structuredContent": ...}.
func toolResult(server, tool string, res *mcp.CallToolResult) (any, error) {
	var texts []string
	onlyText := true
	blocks := make([]json.RawMessage, 0, len(res.Content))
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, t.Text)
		} else {
			onlyText = false
		}
		b, err := json.Marshal(c)
		if err != nil {
			return nil, core.Errorf(core.CodeToolError, "MCP server %s: a content block of %s is not JSON: %v", server, tool, err)
		}
		blocks = append(blocks, b)
	}
	if res.IsError {
		msg := strings.Join(texts, "\n")
		if msg == "" {
			msg = "the MCP tool reported an error"
		}
		ctx := map[string]any{"server": server, "tool": tool}
		if !onlyText {
			ctx["content"] = blocks
		}
		if res.StructuredContent != nil {
			ctx["structuredContent"] = res.StructuredContent
		}
		return nil, &core.BreadError{Code: core.CodeToolError, Message: msg, Context: ctx}
	}
	switch {
	case onlyText && res.StructuredContent != nil:
		return res.StructuredContent, nil
	case onlyText:
		return strings.Join(texts, "\n"), nil
	}
	out := map[string]any{"content": blocks}
	if res.StructuredContent != nil {
		out["structuredContent"] = res.StructuredContent
	}
	return out, nil
}
