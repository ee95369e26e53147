// Package mcpserver is a bread plugin that serves selected agents, agent and
// skill pairs, tasks and tools as Model Context Protocol tools, over stdio
// (`bread mcp`) and over Streamable HTTP mounted on bread's server (stateful
// sessions for initialize, stateless for the rest), on the official Go SDK. A
// run that waits for a human asks the client through elicitation. It is for
// exposing a bread project to MCP clients; to let bread's agents call MCP
// servers, use protocols/mcpclient instead.
//
// The HTTP route is registered under ActionRequest ("mcp.request"), so the
// server's auth and Authorize gate it like every route; the plugin adds Host
// and Origin validation against DNS rebinding.
package mcpserver
