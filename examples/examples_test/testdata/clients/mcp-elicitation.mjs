// The official MCP TypeScript client (@modelcontextprotocol/sdk) answers a
// bread approval through elicitation: examples/mcp-approval's publisher
// calls a tool gated by permissions.ask, the server asks the client
// (elicitation/create) within the tools/call, and the run's result comes
// back in the same call. ACTION is accept (approve) or decline.
//
//   node mcp-elicitation.mjs URL ACTION ANSWER
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { check, main } from "./check.mjs";

main(async () => {
  const [url, action, answer] = process.argv.slice(2);
  const client = new Client({ name: "bread-elicitation", version: "1.0.0" }, { capabilities: { elicitation: { form: {} } } });
  const asked = [];
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    asked.push(req.params);
    return action === "accept" ? { action: "accept", content: { approved: true, reason: "looks good" } } : { action: "decline" };
  });
  const transport = new StreamableHTTPClientTransport(new URL(url));
  await client.connect(transport);
  check(transport.sessionId, `${action}: the initialize opened a session (${transport.sessionId})`);

  const progress = [];
  const res = await client.callTool({ name: "publisher", arguments: { input: "publish a post on why sourdough rises" } }, undefined, {
    onprogress: (p) => progress.push(p.message),
  });
  check(asked.length === 1, `${action}: one elicitation (${asked.length})`);
  const q = asked[0];
  check(q.message.includes("tool_publish") && q.requestedSchema?.properties?.approved?.type === "boolean",
    `${action}: it asks to approve tool_publish: ${q.message.slice(0, 80)}… ${JSON.stringify(q.requestedSchema)}`);
  check(!res.isError && res.structuredContent?.output?.includes(answer),
    `${action}: the same tools/call returns the run's result: ${JSON.stringify(res.structuredContent ?? res.content)}`);
  const ran = progress.includes("tool:result tool_publish");
  check(progress.some((m) => m === "human:required tool_publish") && progress.includes("human:resumed") && progress.at(-1) === "agent:run:end",
    `${action}: the progress notifications follow the run through the wait (${progress.join(" | ")})`);
  check(action === "accept" ? ran : !ran, `${action}: the tool ${action === "accept" ? "ran" : "did not run"}`);
  await client.close();
});
