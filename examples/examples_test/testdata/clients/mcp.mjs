// The official MCP TypeScript client (@modelcontextprotocol/sdk) against
// examples/mcp served by bread, over Streamable HTTP or over stdio (bread
// mcp): the handshake, the tool list, a call with progress notifications,
// a call with input that fails the tool's schema, and an unknown tool.
//
//   node mcp.mjs http URL ANSWER
//   node mcp.mjs stdio ANSWER -- COMMAND ARGS...   (env is passed through)
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { check, main } from "./check.mjs";

main(async () => {
  const [mode, ...rest] = process.argv.slice(2);
  let transport, answer;
  if (mode === "http") {
    const [url, text] = rest;
    transport = new StreamableHTTPClientTransport(new URL(url));
    answer = text;
  } else {
    const cut = rest.indexOf("--");
    answer = rest[0];
    const [command, ...args] = rest.slice(cut + 1);
    transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
  }
  const client = new Client({ name: "bread-contract", version: "1.0.0" });
  await client.connect(transport);
  check(client.getServerVersion()?.name !== undefined, `${mode}: initialized with ${JSON.stringify(client.getServerVersion())}`);

  const { tools } = await client.listTools();
  const baker = tools.find((t) => t.name === "baker");
  check(tools.length === 1 && baker, `${mode}: the tool list is the baker agent (${tools.map((t) => t.name).join(", ")})`);
  check(baker.inputSchema?.type === "object" && baker.outputSchema?.type === "object", `${mode}: the tool has input and output schemas`);

  const progress = [];
  const res = await client.callTool({ name: "baker", arguments: { input: "How do I make focaccia?" } }, undefined, {
    onprogress: (p) => progress.push(p),
  });
  check(!res.isError && typeof res.structuredContent?.output === "string" && res.structuredContent.output.includes(answer),
    `${mode}: the call answers the transcript's text: ${JSON.stringify(res.structuredContent)}`);
  check(res.content?.some((c) => c.type === "text" && c.text.includes(answer)), `${mode}: the answer is a text block too`);
  const messages = progress.map((p) => p.message);
  // Over stdio the client can drop the last notifications: it runs a
  // notification's handler in a microtask but forgets the call's progress
  // handler as soon as it reads the result, so notifications that arrive
  // in the same chunk as the result are lost (the SDK's Protocol
  // _onnotification and _onresponse). The run's end is checked over HTTP.
  const ended = mode === "http" ? messages.includes("agent:run:end") : true;
  check(messages[0] === "agent:run:start" && ended && messages.some((m) => m?.startsWith("tool:call ")),
    `${mode}: progress notifications follow the run (${messages.length}: ${messages.join(" | ")})`);
  check(progress.every((p, i) => i === 0 || p.progress > progress[i - 1].progress), `${mode}: progress only grows`);

  const bad = await client.callTool({ name: "baker", arguments: { input: 42 } }).catch((err) => ({ thrown: err }));
  check(bad.thrown || bad.isError, `${mode}: input that fails the schema is refused: ${JSON.stringify(bad.thrown?.message ?? bad.content)}`);

  const unknown = await client.callTool({ name: "nope", arguments: {} }).catch((err) => ({ thrown: err }));
  check(unknown.thrown || unknown.isError, `${mode}: an unknown tool is refused: ${JSON.stringify(unknown.thrown?.message ?? unknown.content)}`);

  await client.close();
});
