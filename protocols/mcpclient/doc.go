// Package mcpclient is a bread plugin that gives agents the tools of Model
// Context Protocol servers, over stdio or Streamable HTTP, on the official Go
// SDK. It is for projects whose agents call MCP servers; to serve bread's own
// agents over MCP, use protocols/mcpserver instead.
//
// Servers are declared once (Options.Servers, or bread.yaml's plugin entry)
// or inline on one agent (http only, connected on first use). An agent opts
// in under Agent.Plugins["mcp_client"]; each tool is named
// <server>__<tool>, so the model sees plugin_mcp_client_<server>__<tool> and
// permission selectors address plugin:mcp_client/<server>__<tool>.
//
// What a server asks back is bread's business too: a question
// (elicitation, Server.Elicitation) suspends the run with human:required
// and the resume answers it; sampling is answered with the calling agent's
// model when AgentConfig.Sampling allows the server; a server's resources
// and prompts become tools (Server.Resources, Server.Prompts).
package mcpclient
