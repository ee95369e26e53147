// The official AG-UI client (@ag-ui/client HttpAgent) against examples/ag-ui
// served by bread: a run with reasoning that ends in two interrupts, a bad
// answer refused with the interrupts still pending, then both answered.
// Every event passes the client's own schema check (@ag-ui/core) and
// ordering rules, or runAgent throws.
//
//   node agui.mjs http://127.0.0.1:PORT/ag-ui/run ANSWER
//   (ANSWER: the text the planner's transcript ends with)
import { HttpAgent } from "@ag-ui/client";
import { check, main } from "./check.mjs";

main(async () => {
  const [url, answer] = process.argv.slice(2);
  const thread = "visit-" + Math.random().toString(36).slice(2);
  const agent = new HttpAgent({
    url,
    threadId: thread,
    initialMessages: [{ id: "m1", role: "user", content: "Plan my bakery visit" }],
  });
  const events = [];
  const seen = { onEvent: ({ event }) => { events.push(event.type); } };

  // 1. A run with reasoning, ending in two interrupts.
  await agent.runAgent({ runId: "c-1" }, seen);
  for (const t of ["RUN_STARTED", "REASONING_START", "REASONING_MESSAGE_START", "REASONING_MESSAGE_CONTENT",
    "REASONING_MESSAGE_END", "REASONING_END", "TEXT_MESSAGE_CONTENT", "RUN_FINISHED"]) {
    check(events.includes(t), `the first run has ${t} (events: ${events.join(" ")})`);
  }
  const interrupts = agent.pendingInterrupts;
  check(interrupts.length === 2, `the run ends with two interrupts, got ${JSON.stringify(interrupts)}`);
  check(agent.messages.some((m) => m.role === "reasoning"), "the reasoning is a message of the thread");
  const answers = { "Which day suits you?": { day: "Saturday" }, "Which neighbourhood?": { area: "the market" } };
  for (const i of interrupts) {
    check(answers[i.message] !== undefined, `an interrupt the example asks: ${JSON.stringify(i)}`);
  }

  // 2. A bad answer is refused; nothing is resumed.
  let refused = null;
  try {
    await agent.runAgent({ runId: "c-2", resume: interrupts.map((i) => ({ interruptId: i.id, status: "resolved", payload: { nope: 1 } })) });
  } catch (err) {
    refused = err;
  }
  check(refused !== null, "an answer that does not match the interrupt's schema is refused");
  check(/VALIDATION_ERROR|400/.test(String(refused?.message ?? refused)), `the refusal says why: ${refused}`);

  // 3. Both answered in one request: the run finishes with its answer.
  events.length = 0;
  const done = await agent.runAgent({
    runId: "c-3",
    resume: interrupts.map((i) => ({ interruptId: i.id, status: "resolved", payload: answers[i.message] })),
  }, seen);
  check(events[0] === "RUN_STARTED" && events.at(-1) === "RUN_FINISHED", `the answered run streams a whole run: ${events.join(" ")}`);
  check(agent.pendingInterrupts.length === 0, "no interrupt is left");
  check(done.result === answer, `the run finishes with its answer: ${JSON.stringify(done.result)}`);
});
