// The gRPC client against Python's `pi-proto serve`: the README round trip, cancellation,
// deadlines, status errors and servers that are gone.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { clone, create, toJson } from "@bufbuild/protobuf";
import {
  AgentContextSchema,
  type AssistantMessage,
  AssistantMessageSchema,
  type AssistantMessageEventStream,
  type ModelEvent,
  ModelEventSchema,
  StopReason,
  ToolResultMessageSchema,
  createModelTransport,
  eventKind,
  streamModel,
  textOf,
} from "pi-proto";
import { TEST_TIMEOUT, userContext } from "./support/messages.js";
import { type Server, runPiProto, startServer } from "./support/server.js";

const README_KINDS = [
  "start",
  "text_start",
  "text_delta",
  "text_delta",
  "text_end",
  "toolcall_start",
  "toolcall_delta",
  "toolcall_delta",
  "toolcall_delta",
  "toolcall_end",
  "done",
];

let fast: Server; // the README round trip, deltas of 8 characters, no delay
let slow: Server; // the same, 0.3 s before each event

before(async () => {
  [fast, slow] = await Promise.all([startServer(), startServer("--delay", "0.3")]);
}, { timeout: TEST_TIMEOUT });

after(async () => {
  await Promise.all([fast?.stop(), slow?.stop()]);
}, { timeout: TEST_TIMEOUT });

async function drain(events: AssistantMessageEventStream): Promise<[ModelEvent[], AssistantMessage]> {
  const seen: ModelEvent[] = [];
  for await (const event of events) seen.push(event);
  return [seen, await events.result()];
}

function toolCallOf(message: AssistantMessage, index: number) {
  const block = message.content[index]?.block;
  assert.equal(block?.case, "toolCall");
  return block.value;
}

test("the README example", { timeout: TEST_TIMEOUT }, async () => {
  const target = fast.target;
  // README example: begin
  const events = streamModel(target, {
    messages: [{ role: { case: "user", value: { content: [{ block: { case: "text", value: { text: "请读取 README" } } }] } } }],
  });
  const kinds: string[] = [];
  for await (const event of events) {            // never throws: failures arrive as an "error" event
    kinds.push(eventKind(event));                // "start", "text_start", "text_delta", ..., "done"
  }
  const message = await events.result();         // the AssistantMessage the terminal event carries
  // README example: end
  assert.deepEqual(kinds, README_KINDS);
  assert.equal(textOf(message), "我先读取项目说明。");
});

test("the README round trip: the same events as pi-proto stream --json", { timeout: TEST_TIMEOUT }, async () => {
  const [[seen, message], printed] = await Promise.all([
    drain(streamModel(fast.target, userContext("hi"))),
    runPiProto("stream", "--json", "--target", fast.target, "hi"),
  ]);

  assert.deepEqual(seen.map(eventKind), README_KINDS);
  const wire = seen.map((event) => toJson(ModelEventSchema, { ...event, partial: undefined }));
  const python = printed.trimEnd().split("\n").map((line) => JSON.parse(line) as unknown);
  assert.deepEqual(wire, python);

  assert.ok(seen.every((event) => event.partial !== undefined));
  const last = seen.at(-1)!.event;
  assert.ok(last.case === "done");
  assert.equal(last.value.message, message);
  assert.equal(seen.at(-1)!.partial, message);
  assert.equal(message.stopReason, StopReason.TOOL_USE);
  assert.equal(textOf(message), "我先读取项目说明。");
  const call = toolCallOf(message, 1);
  assert.deepEqual([call.id, call.name], ["call_1", "read"]);
  assert.deepEqual(JSON.parse(call.argumentsJson), { path: "README.md" });
});

test("the partial is rebuilt at every step", { timeout: TEST_TIMEOUT }, async () => {
  // Paced events, so each one is read before the next arrives and changes the live partial.
  const steps: Array<[string, AssistantMessage]> = [];
  for await (const event of streamModel(slow.target, userContext("hi"))) {
    steps.push([eventKind(event), clone(AssistantMessageSchema, event.partial!)]);
  }
  assert.deepEqual(steps.map(([kind]) => kind), README_KINDS);
  const partial = (index: number): AssistantMessage => steps[index]![1];

  assert.deepEqual(partial(0).content, []);
  assert.equal(partial(0).model, "scripted-v1");
  assert.equal(textOf(partial(2)), "我先读取项目说明");
  assert.equal(textOf(partial(3)), "我先读取项目说明。");
  const raw = [6, 7, 8].map((index) => {
    const call = toolCallOf(partial(index), 1);
    assert.deepEqual([call.id, call.name, call.argumentsJson], ["call_1", "read", "{}"]);
    return call.rawArguments;
  });
  assert.deepEqual(raw, ['{"path":', '{"path":"README.', '{"path":"README.md"}']);
  assert.equal(toolCallOf(partial(9), 1).argumentsJson, '{"path":"README.md"}');
  assert.equal(partial(10).stopReason, StopReason.TOOL_USE);
});

test("one transport carries a conversation: turn two answers the tool result", { timeout: TEST_TIMEOUT }, async () => {
  const transport = createModelTransport(fast.target);
  const request = userContext("请读取 README");
  const first = await streamModel(transport, request).result();
  const call = toolCallOf(first, 1);
  const result = create(ToolResultMessageSchema, {
    toolCallId: call.id,
    toolName: call.name,
    content: [{ block: { case: "text", value: { text: "# pi-proto" } } }],
  });
  const context = create(AgentContextSchema, {
    messages: [
      ...request.messages,
      { role: { case: "assistant", value: first } },
      { role: { case: "toolResult", value: result } },
    ],
  });
  const second = await streamModel(transport, context).result();
  assert.equal(second.stopReason, StopReason.STOP);
  assert.equal(textOf(second), "README 的标题就是项目名：pi-proto。");
});

test("cancel() after the first event ends the stream with ABORTED", { timeout: TEST_TIMEOUT }, async () => {
  const events = streamModel(slow.target, userContext("hi"));
  const first = await events.next();
  assert.equal(first.done, false);
  assert.equal(eventKind(first.value!), "start");
  events.cancel();
  const [rest, message] = await drain(events);
  assert.equal(eventKind(rest.at(-1)!), "error");
  assert.equal(message.stopReason, StopReason.ABORTED);
  assert.equal(message.errorMessage, "cancelled");
  assert.equal(message.model, "scripted-v1"); // the header received before the cancellation is kept
});

test("aborting the caller's signal ends the stream with ABORTED", { timeout: TEST_TIMEOUT }, async () => {
  const controller = new AbortController();
  const events = streamModel(slow.target, userContext("hi"), { signal: controller.signal });
  const first = await events.next();
  assert.equal(eventKind(first.value!), "start");
  controller.abort();
  const [, message] = await drain(events);
  assert.equal(message.stopReason, StopReason.ABORTED);
  assert.equal(message.errorMessage, "cancelled");

  const aborted = await streamModel(slow.target, userContext("hi"), { signal: AbortSignal.abort() }).result();
  assert.equal(aborted.stopReason, StopReason.ABORTED);
});

test("a deadline that passes ends the stream with ERROR", { timeout: TEST_TIMEOUT }, async () => {
  const [seen, message] = await drain(streamModel(slow.target, userContext("hi"), { timeoutMs: 100 }));
  assert.deepEqual(seen.map(eventKind), ["error"]);
  assert.equal(message.stopReason, StopReason.ERROR);
  assert.ok(message.errorMessage);
});

test("a status error becomes an ERROR event with the raw status message", { timeout: TEST_TIMEOUT }, async () => {
  const [seen, message] = await drain(streamModel(fast.target, userContext("hi"), { model: "gpt-9" }));
  assert.deepEqual(seen.map(eventKind), ["error"]);
  assert.equal(message.stopReason, StopReason.ERROR);
  assert.equal(message.errorMessage, "unknown model 'gpt-9': this server plays 'scripted-v1'");
});

test("no server is an ERROR event, not an exception", { timeout: TEST_TIMEOUT }, async () => {
  const gone = await startServer();
  await gone.stop();
  const [seen, message] = await drain(streamModel(gone.target, userContext("hi")));
  assert.deepEqual(seen.map(eventKind), ["error"]);
  assert.equal(message.stopReason, StopReason.ERROR);
  assert.ok(message.errorMessage);
});

test("a server killed mid-stream gives the client an ERROR event", { timeout: TEST_TIMEOUT }, async () => {
  const server = await startServer("--delay", "0.3");
  try {
    const events = streamModel(server.target, userContext("hi"));
    assert.equal(eventKind((await events.next()).value!), "start");
    await server.stop("SIGKILL");
    const [rest, message] = await drain(events);
    assert.equal(eventKind(rest.at(-1)!), "error");
    assert.equal(message.stopReason, StopReason.ERROR);
    assert.ok(message.errorMessage);
  } finally {
    await server.stop("SIGKILL");
  }
});

test("a server shutting down mid-stream ends it with ABORTED", { timeout: TEST_TIMEOUT }, async () => {
  const server = await startServer("--delay", "0.3");
  try {
    const events = streamModel(server.target, userContext("hi"));
    assert.equal(eventKind((await events.next()).value!), "start");
    const stopped = server.stop("SIGTERM");
    const [rest, message] = await drain(events);
    await stopped;
    assert.equal(eventKind(rest.at(-1)!), "error");
    assert.equal(message.stopReason, StopReason.ABORTED);
    assert.equal(message.errorMessage, "the server is shutting down");
  } finally {
    await server.stop("SIGKILL");
  }
});
