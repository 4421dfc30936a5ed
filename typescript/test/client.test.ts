// The gRPC client against an in-process fake server: the README round trip, the partial at each
// step, cancellation, deadlines, statuses and servers that are gone.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { clone, create } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import {
  AgentContextSchema,
  type AssistantMessage,
  type AssistantMessageEventStream,
  AssistantMessageSchema,
  createModelTransport,
  DEFAULT_TIMEOUT_MS,
  eventKind,
  type ModelEvent,
  StopReason,
  type StreamFailure,
  type StreamModelOptions,
  type StreamRequest,
  streamModel,
  ToolResultMessageSchema,
  textOf,
} from "pi-proto";
import { type FakeServer, hang, play, startFakeServer } from "./support/fake-server.js";
import { assistantMessage, eventsOf, TEST_TIMEOUT, text, toolCall, until, userContext } from "./support/messages.js";

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
const MODEL = "scripted-v1";

/** The scripted model's answer: read the README first; once its content is there, name the title. */
function answer(request: StreamRequest): AssistantMessage {
  const last = request.context?.messages.at(-1)?.role;
  if (last?.case === "toolResult") {
    return assistantMessage([text("README 的标题就是项目名：pi-proto。")], { timestamp: 1020n });
  }
  return assistantMessage([text("我先读取项目说明。"), toolCall("call_1", "read", { path: "README.md" })], {
    stopReason: StopReason.TOOL_USE,
    timestamp: 1010n,
  });
}

function scripted(delayMs: number) {
  return (request: StreamRequest, context: HandlerContext): AsyncIterable<ModelEvent> => {
    if (request.model && request.model !== MODEL) {
      throw new ConnectError(`unknown model ${request.model}: this server plays ${MODEL}`, Code.InvalidArgument);
    }
    return play(eventsOf(answer(request), 8), context, delayMs);
  };
}

let fast: FakeServer; // the README round trip, deltas of 8 characters, no delay
let slow: FakeServer; // the same, 40 ms before each event

before(async () => {
  [fast, slow] = await Promise.all([startFakeServer(scripted(0)), startFakeServer(scripted(40))]);
});

after(async () => {
  await Promise.all([fast?.close(), slow?.close()]);
});

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

function statusOf(failure: StreamFailure | undefined): string | undefined {
  return failure?.kind === "status" ? failure.statusCode : undefined;
}

test("the README example", { timeout: TEST_TIMEOUT }, async () => {
  const target = fast.target;
  // README example: begin
  const events = streamModel(target, {
    messages: [
      { role: { case: "user", value: { content: [{ block: { case: "text", value: { text: "请读取 README" } } }] } } },
    ],
  });
  const kinds: string[] = [];
  for await (const event of events) {
    // never throws: failures arrive as an "error" event
    kinds.push(eventKind(event)); // "start", "text_start", "text_delta", ..., "done"
  }
  const message = await events.result(); // the AssistantMessage the terminal event carries
  // README example: end
  assert.deepEqual(kinds, README_KINDS);
  assert.equal(textOf(message), "我先读取项目说明。");
  assert.equal(events.failure, undefined);
});

test("the terminal event carries the result, and every event its partial", { timeout: TEST_TIMEOUT }, async () => {
  const [seen, message] = await drain(streamModel(fast.target, userContext("hi")));
  assert.deepEqual(seen.map(eventKind), README_KINDS);
  assert.ok(seen.every((event) => event.partial !== undefined));
  const last = seen.at(-1)!.event;
  assert.ok(last.case === "done");
  assert.equal(last.value.message, message);
  assert.equal(seen.at(-1)!.partial, message);
  assert.equal(message.stopReason, StopReason.TOOL_USE);
  const call = toolCallOf(message, 1);
  assert.deepEqual([call.id, call.name], ["call_1", "read"]);
  assert.deepEqual(JSON.parse(call.argumentsJson!), { path: "README.md" });
});

test("the partial is rebuilt at every step", { timeout: TEST_TIMEOUT }, async () => {
  // Paced events, so each one is read before the next arrives and changes the live partial.
  const steps: Array<[string, AssistantMessage]> = [];
  for await (const event of streamModel(slow.target, userContext("hi"))) {
    steps.push([eventKind(event), clone(AssistantMessageSchema, event.partial!)]);
  }
  assert.deepEqual(
    steps.map(([kind]) => kind),
    README_KINDS,
  );
  const partial = (index: number): AssistantMessage => steps[index]![1];

  assert.deepEqual(partial(0).content, []);
  assert.equal(partial(0).model, MODEL);
  assert.equal(textOf(partial(2)), "我先读取项目说明");
  assert.equal(textOf(partial(3)), "我先读取项目说明。");
  const streamed = [6, 7, 8].map((index) => {
    const call = toolCallOf(partial(index), 1);
    assert.deepEqual([call.id, call.name], ["call_1", "read"]);
    return [call.rawArguments, call.argumentsJson];
  });
  // The text so far, and its completion into a JSON object.
  assert.deepEqual(streamed, [
    ['{"path":', "{}"],
    ['{"path":"README.', '{"path":"README."}'],
    ['{"path":"README.md"}', '{"path":"README.md"}'],
  ]);
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
  assert.deepEqual(rest.map(eventKind), ["error"]);
  assert.equal(message.stopReason, StopReason.ABORTED);
  assert.equal(message.errorMessage, "cancelled");
  assert.equal(message.model, MODEL); // the header received before the cancellation is kept
  assert.equal(events.failure, undefined); // a cancel is the caller's, not a failure
});

test("cancel() from another task while the consumer waits for the next event", { timeout: TEST_TIMEOUT }, async () => {
  const hanging = await startFakeServer(async function* (request, context) {
    yield* play(eventsOf(answer(request)).slice(0, 3), context);
    await hang(context);
  });
  try {
    const events = streamModel(hanging.target, userContext("hi"));
    const waiting = events.result(); // another task waits for the final message
    const kinds: string[] = [];
    const consumer = (async () => {
      for await (const event of events) kinds.push(eventKind(event)); // blocks after three events
    })();
    // Another task, once the consumer has the three events and so waits for the next (for await
    // asks for it in the same turn as it takes the third).
    await until(() => kinds.length === 3);
    events.cancel();
    await consumer;
    assert.deepEqual(kinds, ["start", "text_start", "text_delta", "error"]);
    const message = await waiting;
    assert.equal(message.stopReason, StopReason.ABORTED);
    assert.equal(textOf(message), "我先读取项目说明");
    assert.equal(events.failure, undefined);
  } finally {
    await hanging.close();
  }
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

test("a deadline that passes ends the stream with ERROR, DEADLINE_EXCEEDED", { timeout: TEST_TIMEOUT }, async () => {
  // A server that goes quiet after three events until the client goes away: the deadline passes
  // before the end, however busy the machine.
  const quiet = await startFakeServer(async function* (request, context) {
    yield* play(eventsOf(answer(request)).slice(0, 3), context);
    await hang(context);
  });
  try {
    const events = streamModel(quiet.target, userContext("hi"), { timeoutMs: 100 });
    const [seen, message] = await drain(events);
    assert.equal(seen.at(-1)!.event.case, "error");
    assert.ok(seen.length <= 4);
    assert.equal(message.stopReason, StopReason.ERROR);
    assert.ok(message.errorMessage);
    assert.equal(statusOf(events.failure), "DEADLINE_EXCEEDED");
  } finally {
    await quiet.close();
  }
});

test("a call without a deadline of its own gets 15 minutes", { timeout: TEST_TIMEOUT }, async () => {
  await streamModel(fast.target, userContext("hi")).result();
  await streamModel(fast.target, userContext("hi"), { timeoutMs: 5000 }).result();
  await streamModel(fast.target, userContext("hi"), { timeoutMs: Infinity }).result();
  assert.equal(DEFAULT_TIMEOUT_MS, 15 * 60 * 1000);
  assert.deepEqual(fast.deadlines.slice(-3), [DEFAULT_TIMEOUT_MS, 5000, undefined]);
});

test("a status becomes one ERROR event with the status message and code", { timeout: TEST_TIMEOUT }, async () => {
  const events = streamModel(fast.target, userContext("hi"), { model: "gpt-9" });
  const [seen, message] = await drain(events);
  assert.deepEqual(seen.map(eventKind), ["error"]);
  assert.equal(message.stopReason, StopReason.ERROR);
  assert.equal(message.errorMessage, `unknown model gpt-9: this server plays ${MODEL}`);
  assert.equal(statusOf(events.failure), "INVALID_ARGUMENT");
});

test("a status that reads like a decoding failure is still the server's status", {
  timeout: TEST_TIMEOUT,
}, async () => {
  const server = await startFakeServer(() => {
    throw new ConnectError("parse binary: the server says so", Code.Internal);
  });
  try {
    const events = streamModel(server.target, userContext("hi"));
    const [seen, message] = await drain(events);
    assert.deepEqual(seen.map(eventKind), ["error"]);
    assert.equal(message.errorMessage, "parse binary: the server says so");
    assert.equal(statusOf(events.failure), "INTERNAL");
  } finally {
    await server.close();
  }
});

test("no server is an ERROR event, not an exception", { timeout: TEST_TIMEOUT }, async () => {
  const gone = await startFakeServer(scripted(0));
  await gone.close();
  const events = streamModel(gone.target, userContext("hi"));
  const [seen, message] = await drain(events);
  assert.deepEqual(seen.map(eventKind), ["error"]);
  assert.equal(message.stopReason, StopReason.ERROR);
  assert.ok(message.errorMessage);
  assert.equal(statusOf(events.failure), "UNAVAILABLE");
});

test("a connection cut mid-stream gives the client an ERROR event, UNAVAILABLE", {
  timeout: TEST_TIMEOUT,
}, async () => {
  const server = await startFakeServer(scripted(40));
  try {
    const events = streamModel(server.target, userContext("hi"));
    assert.equal(eventKind((await events.next()).value!), "start");
    server.drop(); // as a server that crashes, or is killed
    const [rest, message] = await drain(events);
    assert.equal(eventKind(rest.at(-1)!), "error");
    assert.equal(message.stopReason, StopReason.ERROR);
    assert.ok(message.errorMessage);
    // connect-node calls the streams of the lost session CANCELED, though nobody cancelled them.
    assert.equal(statusOf(events.failure), "UNAVAILABLE");
  } finally {
    await server.close();
  }
});

test("a server's own CANCELLED or ABORTED status keeps its code", { timeout: TEST_TIMEOUT }, async () => {
  for (const [code, name] of [
    [Code.Canceled, "CANCELED"],
    [Code.Aborted, "ABORTED"],
  ] as const) {
    const server = await startFakeServer(async function* (request, context) {
      yield* play(eventsOf(answer(request)).slice(0, 1), context);
      throw new ConnectError("said the server", code);
    });
    try {
      const events = streamModel(server.target, userContext("hi"));
      const [seen, message] = await drain(events);
      assert.equal(eventKind(seen.at(-1)!), "error");
      assert.equal(message.errorMessage, "said the server");
      assert.equal(statusOf(events.failure), name);
    } finally {
      await server.close();
    }
  }
});

test("options it cannot use end the stream with INVALID_ARGUMENT; streamModel never throws", {
  timeout: TEST_TIMEOUT,
}, async () => {
  const server = await startFakeServer(scripted(0));
  try {
    const cases: Array<[string | undefined, StreamModelOptions, RegExp]> = [
      ["", {}, /target "": expected host:port or a base URL/],
      ["nohost:abc", {}, /target "nohost:abc"/],
      [undefined, { protocol: "sse" as never }, /protocol "sse"/],
      [undefined, { token: "a\nb" }, /invalid header value/],
      [undefined, { headers: { "x-trace": "a\rb" } }, /invalid header value/],
      [undefined, { timeoutMs: NaN }, /timeoutMs NaN/],
      [undefined, { maxMessageBytes: NaN }, /maxMessageBytes NaN/],
      [undefined, { maxMessageBytes: -1 }, /maxMessageBytes -1/],
    ];
    for (const [target, options, detail] of cases) {
      let events: AssistantMessageEventStream | undefined;
      assert.doesNotThrow(() => (events = streamModel(target ?? server.target, userContext("hi"), options)));
      const [seen, message] = await drain(events!);
      assert.deepEqual(seen.map(eventKind), ["error"]);
      assert.equal(message.stopReason, StopReason.ERROR);
      assert.match(message.errorMessage ?? "", /^invalid options: /);
      assert.match(message.errorMessage ?? "", detail);
      assert.equal(statusOf(events!.failure), "INVALID_ARGUMENT");
    }
    assert.equal(server.calls, 0);
    assert.equal(server.connections, 0);
  } finally {
    await server.close();
  }
});

test("a deadline of 0 or less has passed on every transport; others are whole milliseconds", {
  timeout: TEST_TIMEOUT,
}, async () => {
  const server = await startFakeServer(scripted(0));
  try {
    const own = createGrpcTransport({ baseUrl: `http://${server.target}` }); // connect reads 0 as none
    for (const target of [server.target, own]) {
      for (const timeoutMs of [0, -1, -Infinity]) {
        for (const batched of [true, false]) {
          const events = streamModel(target, userContext("hi"), { timeoutMs, batched });
          const [seen, message] = await drain(events);
          assert.deepEqual(seen.map(eventKind), ["error"], `timeoutMs ${timeoutMs}`);
          assert.equal(message.stopReason, StopReason.ERROR);
          assert.equal(statusOf(events.failure), "DEADLINE_EXCEEDED");
        }
      }
    }
    assert.equal(server.calls, 0);
    // `grpc-timeout: 1234.5m` would be malformed, and a server may refuse every later call on the
    // connection for it; a timer longer than 2^31 - 1 ms would fire at once.
    for (const timeoutMs of [1234.5, 1e300, 2 ** 31]) {
      const message = await streamModel(server.target, userContext("hi"), { timeoutMs }).result();
      assert.equal(message.stopReason, StopReason.TOOL_USE, `timeoutMs ${timeoutMs}`);
    }
    assert.deepEqual(server.deadlines, [1235, 99_999_999, 99_999_999]);
  } finally {
    await server.close();
  }
  // The fallback to Stream gets what is left of the capped deadline.
  const older = await startFakeServer(scripted(0), undefined, [], "unimplemented");
  try {
    const message = await streamModel(older.target, userContext("hi"), { timeoutMs: 1e300 }).result();
    assert.equal(message.stopReason, StopReason.TOOL_USE);
    const [batched, plain] = older.deadlines;
    assert.equal(batched, 99_999_999);
    assert.ok(plain !== undefined && plain > 99_000_000 && plain <= 99_999_999, `${plain}`);
  } finally {
    await older.close();
  }
});

test("deltas beyond maxMessageBytes end the stream (rule size-limit)", { timeout: TEST_TIMEOUT }, async () => {
  const events = streamModel(fast.target, userContext("hi"), { maxMessageBytes: 40 });
  const [seen, message] = await drain(events);
  // "我先读取项目说明" is 24 bytes of UTF-8; the next delta, "。", takes the text to 27, the tool
  // call's id and name to 37, and the first 8 characters of its arguments past 40.
  assert.deepEqual(seen.map(eventKind), [...README_KINDS.slice(0, 6), "error"]);
  assert.equal(message.stopReason, StopReason.ERROR);
  const failure = events.failure;
  assert.ok(failure?.kind === "rule");
  assert.deepEqual([failure.eventIndex, failure.ruleId], [6, "size-limit"]);
});
