// The official AG-UI client (@ag-ui/client HttpAgent) against the shopper
// of examples/ag-ui served by bread: a run given the page's state and a
// frontend tool changes the state (STATE_SNAPSHOT, then STATE_DELTA, which
// the client applies) and calls the tool (TOOL_CALL_START/ARGS/END, then
// RUN_FINISHED); the client answers the tool with a tool message, and the
// next run continues the same bread run (the same runId, from its
// checkpoint) to its answer with the state kept. Each run ends with
// MESSAGES_SNAPSHOT before RUN_FINISHED, after which the client's list is
// the thread as bread keeps it: one user message, the tool calls, the
// page's answer as a tool message, the answer. Every event passes the
// client's own schema check (@ag-ui/core) and ordering rules, or runAgent
// throws.
//
//   node agui-tools.mjs http://127.0.0.1:PORT/ag-ui/shop ANSWER
//   (ANSWER: the text the shopper's transcript ends with)
import { HttpAgent } from "@ag-ui/client";
import { check, main } from "./check.mjs";

main(async () => {
  const [url, answer] = process.argv.slice(2);
  const thread = "shop-" + Math.random().toString(36).slice(2);
  const agent = new HttpAgent({
    url,
    threadId: thread,
    initialState: { items: [] },
    initialMessages: [{ id: "m1", role: "user", content: "One sourdough, please" }],
  });
  const tools = [{
    name: "confirm_order",
    description: "Ask the user to confirm the basket on the page",
    parameters: { type: "object", properties: { summary: { type: "string" } }, required: ["summary"] },
  }];
  const context = [{ description: "page", value: "/basket" }];
  const events = [];
  const runIds = [];
  const seen = {
    onEvent: ({ event }) => {
      events.push(event.type);
      if (event.type === "RUN_STARTED") runIds.push(event.runId);
    },
  };
  // The client's list as role:content:calls, to compare with the thread.
  const shape = () => agent.messages.map((m) => [m.role, typeof m.content === "string" ? m.content : "",
    (m.toolCalls ?? []).map((c) => c.function.name).join(",")].join(":"));
  const ends = (what) => {
    check(events.at(-2) === "MESSAGES_SNAPSHOT" && events.at(-1) === "RUN_FINISHED",
      `${what} ends with MESSAGES_SNAPSHOT then RUN_FINISHED: ${events.join(" ")}`);
  };

  // 1. The state changes, then the page's tool is called and the run ends.
  const first = await agent.runAgent({ runId: "c-1", tools, context, forwardedProps: { locale: "en" } }, seen);
  for (const t of ["RUN_STARTED", "STATE_SNAPSHOT", "STATE_DELTA", "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "RUN_FINISHED"]) {
    check(events.includes(t), `the first run has ${t} (events: ${events.join(" ")})`);
  }
  check(events.indexOf("STATE_SNAPSHOT") < events.indexOf("STATE_DELTA"), "the snapshot comes before the delta");
  check(JSON.stringify(agent.state) === JSON.stringify({ items: [{ name: "sourdough", qty: 1 }] }),
    `the client applied the delta: ${JSON.stringify(agent.state)}`);
  check(agent.pendingInterrupts.length === 0, "a frontend tool is not an interrupt");
  const call = agent.messages.flatMap((m) => (m.role === "assistant" ? m.toolCalls ?? [] : []))
    .find((c) => c.function.name === "confirm_order");
  check(call !== undefined, `the assistant called confirm_order: ${JSON.stringify(agent.messages)}`);
  check(JSON.parse(call.function.arguments).summary === "1 sourdough", `its arguments: ${call.function.arguments}`);
  check(first.result === undefined, "the run waiting on the page has no result yet");
  ends("the first run");
  const afterFirst = shape();
  check(afterFirst.filter((m) => m.startsWith("user:")).length === 1 && afterFirst[0] === "user:One sourdough, please:",
    `the snapshot reconciled the page's user message with the thread's: ${JSON.stringify(afterFirst)}`);
  check(afterFirst.includes("tool:" + JSON.stringify({ state: { items: [{ name: "sourdough", qty: 1 }] } }) + ":"),
    `the state tool's result, which the stream gave as TOOL_CALL_RESULT, is in the client's list: ${JSON.stringify(afterFirst)}`);

  // 2. The page runs the tool and answers with a tool message.
  agent.addMessage({ id: "t1", role: "tool", toolCallId: call.id, content: "confirmed by the user" });
  events.length = 0;
  const done = await agent.runAgent({ runId: "c-2", tools, context }, seen);
  check(events[0] === "RUN_STARTED" && events.at(-1) === "RUN_FINISHED", `the answer streams a whole run: ${events.join(" ")}`);
  check(runIds.length === 2 && runIds[0] === runIds[1],
    `the answer continues the same bread run from its checkpoint: runIds ${JSON.stringify(runIds)}`);
  ends("the continued run");
  check(done.result === answer, `the run finishes with its answer: ${JSON.stringify(done.result)}`);
  check(JSON.stringify(agent.state) === JSON.stringify({ items: [{ name: "sourdough", qty: 1 }] }),
    `the state is kept: ${JSON.stringify(agent.state)}`);
  const lastMsg = agent.messages.at(-1);
  check(lastMsg.role === "assistant" && lastMsg.content === answer, `the answer is the thread's last message: ${JSON.stringify(lastMsg)}`);
  const afterDone = shape();
  check(JSON.stringify(afterDone.slice(-3)) === JSON.stringify(["assistant::confirm_order", "tool:confirmed by the user:", "assistant:" + answer + ":"]),
    `the thread ends with the page's tool call, its answer and the reply: ${JSON.stringify(afterDone)}`);
  check(afterDone.filter((m) => m.startsWith("user:")).length === 1, `one user message: ${JSON.stringify(afterDone)}`);
  const toolMsg = agent.messages.find((m) => m.role === "tool" && m.toolCallId === call.id);
  check(toolMsg !== undefined && toolMsg.id !== "t1", `the page's tool message carries the thread's id after the snapshot: ${JSON.stringify(toolMsg)}`);
});
