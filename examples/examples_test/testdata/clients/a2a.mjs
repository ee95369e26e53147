// The official A2A JavaScript SDK (@a2a-js/sdk; v0.3 through its opt-in
// compatibility layer, v1.0 natively) against examples/a2a/server served by
// bread: send, get, stream, input-required answered (a bad answer refused,
// a second one too), resubscribe, cancel, and the errors a client meets.
//
//   node a2a.mjs BASE_URL BAKER_CARD_PATH EDITOR_CARD_PATH VERSION BAKER_ANSWER
//   (VERSION is 0.3 or 1.0; BAKER_ANSWER the text the baker's transcript says)
import { Role, TaskState } from "@a2a-js/sdk";
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory } from "@a2a-js/sdk/client";
import { check, main } from "./check.mjs";

const [base, bakerCard, editorCard, version, bakerAnswer] = process.argv.slice(2);

const legacyCompat = { enabled: true };
const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
  cardResolver: new DefaultAgentCardResolver({ legacyCompat }),
  transports: [new JsonRpcTransportFactory({ legacyCompat })],
}));

let seq = 0;
const text = (value) => ({ content: { $case: "text", value } });
const data = (value) => ({ content: { $case: "data", value } });
const message = (parts, taskId) => ({ message: { messageId: `m-${++seq}`, role: Role.ROLE_USER, parts, ...(taskId ? { taskId } : {}) } });

// textOf is the text of a task's artifacts.
const textOf = (task) => (task.artifacts ?? []).flatMap((a) => a.parts).filter((p) => p.content?.$case === "text").map((p) => p.content.value).join("");

// view is what tasks/get must give back of a task: id, context, state,
// status message parts and artifacts (times and message ids aside).
const view = (task) => JSON.stringify({
  id: task.id, contextId: task.contextId, state: task.status?.state,
  message: task.status?.message?.parts ?? null,
  artifacts: (task.artifacts ?? []).map((a) => ({ id: a.artifactId, parts: a.parts })),
});

// folded is the task a stream builds, as a client accumulates it.
function folded(events) {
  let task = null;
  for (const ev of events) {
    const p = ev.payload;
    if (p.$case === "task") task = structuredClone(p.value);
    else if (p.$case === "statusUpdate") task.status = p.value.status;
    else if (p.$case === "artifactUpdate") {
      const a = p.value.artifact;
      const have = (task.artifacts ??= []).find((x) => x.artifactId === a.artifactId);
      if (!have) task.artifacts.push(structuredClone(a));
      else if (!p.value.append) have.parts = structuredClone(a.parts);
      else {
        for (const part of a.parts) {
          const last = have.parts.at(-1);
          if (last?.content?.$case === "text" && part.content?.$case === "text") last.content.value += part.content.value;
          else have.parts.push(structuredClone(part));
        }
      }
    }
  }
  return task;
}

async function collect(stream) {
  const out = [];
  for await (const ev of stream) out.push(ev);
  return out;
}

// refused runs fn, which must fail with the JSON-RPC code.
async function refused(what, code, fn) {
  try {
    await fn();
  } catch (err) {
    const got = err.envelopeCode ?? err.cause?.envelopeCode;
    check(got === code, `${what}: refused with ${code} (got ${got}: ${err.message})`);
    return;
  }
  check(false, `${what}: refused with ${code}, but it succeeded`);
}

async function sameOnGet(client, what, task) {
  const got = view(await client.getTask({ id: task.id }));
  check(got === view(task), `${what}: tasks/get gives back the same task` + (got === view(task) ? "" : `\n  got  ${got}\n  want ${view(task)}`));
}

main(async () => {
  const baker = await factory.createFromUrl(base, bakerCard);
  const editor = await factory.createFromUrl(base, editorCard);
  check(baker.protocolVersion === version && editor.protocolVersion === version, `the cards speak ${version} (${baker.protocolVersion}, ${editor.protocolVersion})`);

  // Send, then get.
  const sent = await baker.sendMessage(message([text("Why does sourdough rise?")]));
  check(sent.status.state === TaskState.TASK_STATE_COMPLETED && textOf(sent) === bakerAnswer, `message/send completes with the answer: ${JSON.stringify(sent)}`);
  await sameOnGet(baker, "message/send", sent);

  // Stream, then get.
  const events = await collect(baker.sendMessageStream(message([text("Why does sourdough rise?")])));
  const kinds = events.map((e) => e.payload.$case);
  check(kinds[0] === "task" && kinds.includes("artifactUpdate") && kinds.at(-1) === "statusUpdate", `message/stream: the task, artifact updates, a final status (${kinds.join(" ")})`);
  const streamed = folded(events);
  check(streamed.status.state === TaskState.TASK_STATE_COMPLETED && textOf(streamed) === bakerAnswer, `the stream builds the completed task: ${textOf(streamed)}`);
  await sameOnGet(baker, "message/stream", streamed);

  // Input required, over a stream.
  const asked = folded(await collect(editor.sendMessageStream(message([text("Title my post on sourdough.")]))));
  check(asked.status.state === TaskState.TASK_STATE_INPUT_REQUIRED, `the editor's task waits for input: ${JSON.stringify(asked.status)}`);
  const request = asked.status.message?.parts ?? [];
  check(request.some((p) => p.content?.$case === "text" && p.content.value === "Which title should the post get?"), "the input request carries the prompt");
  check(request.some((p) => p.content?.$case === "data" && p.content.value?.checkpointId), "the input request carries the checkpoint and the answer's schema");
  await sameOnGet(editor, "an input-required stream", asked);

  // Resubscribe to the waiting task: its state, then the request again.
  const again = await collect(editor.resubscribeTask({ id: asked.id }));
  const last = again.at(-1)?.payload;
  check(again[0]?.payload.$case === "task" && last?.$case === "statusUpdate" && last.value.status.state === TaskState.TASK_STATE_INPUT_REQUIRED,
    `tasks/resubscribe gives the task, then its input request (${again.map((e) => e.payload.$case).join(" ")})`);

  // A bad answer is refused and the task still waits; the answer completes it.
  await refused("an answer that fails the schema", -32602, () => editor.sendMessage(message([data({ nope: 1 })], asked.id)));
  check((await editor.getTask({ id: asked.id })).status.state === TaskState.TASK_STATE_INPUT_REQUIRED, "the task still waits after a refused answer");
  const answered = await editor.sendMessage(message([data({ title: "Why sourdough rises" })], asked.id));
  check(answered.id === asked.id && answered.status.state === TaskState.TASK_STATE_COMPLETED && textOf(answered).includes("The post is titled as you chose."),
    `the answer completes the task: ${JSON.stringify(answered.status)} ${textOf(answered)}`);
  await sameOnGet(editor, "the answered task", answered);
  await refused("a second answer", -32602, () => editor.sendMessage(message([data({ title: "Again" })], asked.id)));

  // Cancel a task that waits for input.
  const waiting = await editor.sendMessage(message([text("Title another post.")]));
  check(waiting.status.state === TaskState.TASK_STATE_INPUT_REQUIRED, `a second editor task waits for input: ${JSON.stringify(waiting.status)}`);
  const canceled = await editor.cancelTask({ id: waiting.id });
  check(canceled.status.state === TaskState.TASK_STATE_CANCELED, `tasks/cancel answers canceled: ${JSON.stringify(canceled.status)}`);
  check((await editor.getTask({ id: waiting.id })).status.state === TaskState.TASK_STATE_CANCELED, "tasks/get says canceled");
  await refused("an answer to a canceled task", -32602, () => editor.sendMessage(message([data({ title: "Late" })], waiting.id)));

  // ListTasks (v1.0; v0.3 has no tasks/list): the baker's tasks, newest
  // first, a page at a time (the v0.3 run's tasks, on the same server and
  // agent, are older).
  if (version === "1.0") {
    // A ListTasksRequest in full, as its TypeScript type asks: an omitted
    // status would go out as "UNRECOGNIZED".
    const list = (fields) => baker.listTasks({ tenant: "", contextId: "", status: TaskState.TASK_STATE_UNSPECIFIED, pageToken: "", ...fields });
    const first = await list({ pageSize: 1 });
    check(first.totalSize >= 2 && first.tasks.length === 1 && first.tasks[0].id === streamed.id && first.nextPageToken !== "",
      `ListTasks' first page: the newest task and a token (${JSON.stringify({ total: first.totalSize, ids: first.tasks.map((t) => t.id), next: first.nextPageToken })})`);
    const second = await list({ pageSize: 1, pageToken: first.nextPageToken });
    check(second.tasks.length === 1 && second.tasks[0].id === sent.id && (second.nextPageToken === "") === (first.totalSize === 2), "ListTasks' second page: the task sent before");
    const done = await list({ status: TaskState.TASK_STATE_COMPLETED });
    check(done.tasks.length === first.totalSize && done.tasks.every((t) => t.status.state === TaskState.TASK_STATE_COMPLETED), "ListTasks by state");
    await refused("ListTasks with a page size over 100", -32602, () => list({ pageSize: 101 }));
  }

  // The errors a client meets.
  await refused("tasks/get of an unknown task", -32001, () => baker.getTask({ id: "no-such-task" }));
  await refused("tasks/cancel of a completed task", -32002, () => baker.cancelTask({ id: sent.id }));
  await refused("tasks/resubscribe to a completed task", -32004, () => collect(baker.resubscribeTask({ id: sent.id })));
  await refused("a task of another agent", -32001, () => editor.getTask({ id: sent.id }));
});
