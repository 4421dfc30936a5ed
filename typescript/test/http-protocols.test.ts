// The client over Connect and gRPC-web (`protocol`), against in-process fake servers on HTTP/1.1
// (and one on HTTP/2): the README round trip, each batch's events with their own partials,
// malformed events, statuses, cancel, the token, the deadline, the fallback to Stream, and
// connect's own transports.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { clone, create, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import {
  Accumulator,
  AgentContextSchema,
  type AssistantMessage,
  type AssistantMessageEventStream,
  AssistantMessageSchema,
  createModelTransport,
  eventKind,
  getModel,
  listModels,
  type ModelEvent,
  ModelEventSchema,
  ModelSchema,
  StopReason,
  type StreamFailure,
  type StreamRequest,
  StreamRequestSchema,
  streamModel,
  ToolResultMessageSchema,
  textOf,
} from "pi-proto";
import { type FakeServer, hang, play, type Raw, selfSigned, startFakeServer } from "./support/fake-server.js";
import { assistantMessage, eventsOf, TEST_TIMEOUT, text, toolCall, until, userContext } from "./support/messages.js";

const PROTOCOLS = ["connect", "grpc-web"] as const;
const CONTENT_TYPES = { connect: "application/connect+proto", "grpc-web": "application/grpc-web+proto" };
const STREAM = "/pi.ai.v1.ModelService/Stream";
const BATCHED = "/pi.ai.v1.ModelService/StreamBatched";
const HTTP1 = { httpVersion: "1.1" } as const;
const TOKEN = "s3cret-token";

/** The scripted model's answer: read the README first; once its content is there, name the title. */
function answer(request: StreamRequest): AssistantMessage {
  if (request.context?.messages.at(-1)?.role.case === "toolResult") {
    return assistantMessage([text("README 的标题就是项目名：pi-proto。")], { timestamp: 1020n });
  }
  return assistantMessage([text("我先读取项目说明。"), toolCall("call_1", "read", { path: "README.md" })], {
    stopReason: StopReason.TOOL_USE,
    timestamp: 1010n,
  });
}
const EVENTS = eventsOf(answer(create(StreamRequestSchema)), 4);

function scripted(delayMs: number) {
  return (request: StreamRequest, context: HandlerContext): AsyncIterable<ModelEvent> => {
    if (request.model && request.model !== "scripted-v1") {
      throw new ConnectError(`unknown model ${request.model}`, Code.InvalidArgument);
    }
    if (context.requestHeader.get("x-want-token") !== null) {
      if (context.requestHeader.get("authorization") !== `Bearer ${TOKEN}`) {
        throw new ConnectError("missing or invalid bearer token", Code.Unauthenticated);
      }
      context.responseHeader.set("x-served-by", "fake");
      context.responseTrailer.set("x-done", "yes");
    }
    return play(eventsOf(answer(request), 4), context, delayMs);
  };
}

/** Bytes that are no ModelEvent: field 1 says 127 bytes follow, and one does. */
const MALFORMED = Uint8Array.of(0x0a, 0x7f, 0x01);

/** A server that sends the first three events of its answer, then goes quiet until the client leaves. */
function quietAfterThree(): Promise<FakeServer> {
  return startFakeServer(
    async function* (request, context) {
      yield* play(eventsOf(answer(request), 4).slice(0, 3), context);
      await hang(context);
    },
    undefined,
    [],
    "grouped",
    HTTP1,
  );
}

function concat(...parts: Uint8Array[]): Uint8Array {
  return Uint8Array.from(parts.flatMap((part) => [...part]));
}

/** The bytes of a StreamBatchedResponse carrying `events` (ModelEvents, or bytes as they are). */
function batchOf(...events: Array<ModelEvent | Uint8Array>): Uint8Array {
  return concat(
    ...events.map((item) => {
      const bytes = item instanceof Uint8Array ? item : toBinary(ModelEventSchema, item);
      assert.ok(bytes.length < 128); // one byte of length
      return concat(Uint8Array.of(0x0a, bytes.length), bytes);
    }),
  );
}

/** The partial after each event, applying them one by one as a receiver does. */
function partialsOf(events: readonly ModelEvent[]): AssistantMessage[] {
  const accumulator = new Accumulator();
  return events.map((item) => clone(AssistantMessageSchema, accumulator.apply(clone(ModelEventSchema, item)).partial!));
}

async function consume(events: AssistantMessageEventStream, pauseMs = 0) {
  const kinds: string[] = [];
  const partials: AssistantMessage[] = [];
  for await (const event of events) {
    if (pauseMs > 0) await sleep(pauseMs); // a slow consumer: the next event must not be applied meanwhile
    kinds.push(eventKind(event));
    partials.push(clone(AssistantMessageSchema, event.partial!));
  }
  return { kinds, partials, message: await events.result() };
}

function ruleOf(failure: StreamFailure | undefined): [number, string] | undefined {
  return failure?.kind === "rule" ? [failure.eventIndex, failure.ruleId] : undefined;
}

/** An HTTP/1.1 server whose StreamBatched sends `batches` (and whose Stream sends `stream`), then `status`. */
function serving(batches: Uint8Array[], status?: Code, stream?: Uint8Array[]): Promise<FakeServer> {
  const raw =
    (messages: Uint8Array[]): Raw =>
    () => ({ messages, status });
  return startFakeServer(scripted(0), undefined, [], raw(batches), { ...HTTP1, stream: stream && raw(stream) });
}

let fast: FakeServer; // HTTP/1.1, the README round trip, deltas of 4 characters, grouped in batches
let slow: FakeServer; // the same, 40 ms before each event
let older: FakeServer; // no StreamBatched
let h2: FakeServer; // HTTP/2

before(async () => {
  [fast, slow, older, h2] = await Promise.all([
    startFakeServer(scripted(0), undefined, [], "grouped", HTTP1),
    startFakeServer(scripted(40), undefined, [], "grouped", HTTP1),
    startFakeServer(scripted(0), undefined, [], "unimplemented", HTTP1),
    startFakeServer(scripted(0)),
  ]);
});

after(async () => {
  await Promise.all([fast?.close(), slow?.close(), older?.close(), h2?.close()]);
});

for (const protocol of PROTOCOLS) {
  test(`${protocol}: the README round trip, each event with its own partial`, { timeout: TEST_TIMEOUT }, async () => {
    const sent = fast.batchSizes.length;
    const request = userContext("请读取 README");
    const events = streamModel(fast.target, request, { protocol });
    const { kinds, partials, message } = await consume(events);
    assert.deepEqual(kinds, EVENTS.map(eventKind));
    assert.deepEqual(partials, partialsOf(EVENTS));
    assert.equal(textOf(message), "我先读取项目说明。");
    assert.equal(message.stopReason, StopReason.TOOL_USE);
    assert.equal(events.failure, undefined);
    assert.equal(fast.paths.at(-1), BATCHED);
    assert.equal(fast.contentTypes.at(-1), CONTENT_TYPES[protocol]);
    const sizes = fast.batchSizes.slice(sent);
    assert.ok(sizes.length < EVENTS.length, `events in each message: ${sizes.join(", ")}`);

    // Turn two, over a transport of one's own, answers the tool result; a slow consumer sees the same partials.
    const transport = createModelTransport(fast.target, { protocol });
    const block = message.content[1]!.block;
    assert.ok(block.case === "toolCall");
    const result = create(ToolResultMessageSchema, {
      toolCallId: block.value.id,
      toolName: block.value.name,
      content: [{ block: { case: "text", value: { text: "# pi-proto" } } }],
    });
    const context = create(AgentContextSchema, {
      messages: [
        ...request.messages,
        { role: { case: "assistant", value: message } },
        { role: { case: "toolResult", value: result } },
      ],
    });
    const second = await consume(streamModel(transport, context), 5);
    assert.equal(textOf(second.message), "README 的标题就是项目名：pi-proto。");
    assert.equal(second.message.stopReason, StopReason.STOP);
  });

  test(`${protocol}: a malformed event keeps the events in front of it`, { timeout: TEST_TIMEOUT }, async () => {
    const [a, b, c, d] = EVENTS as [ModelEvent, ModelEvent, ModelEvent, ModelEvent];
    const cut = concat(batchOf(c, d), Uint8Array.of(0x0a, 0x40, 0x08)); // 64 bytes said, 1 sent
    const servers = await Promise.all([
      serving([batchOf(a, b), batchOf(c, MALFORMED, d)]),
      serving([batchOf(a, b), cut]),
      serving([], undefined, [toBinary(ModelEventSchema, a), toBinary(ModelEventSchema, b), MALFORMED]),
    ]);
    try {
      const [malformed, shortened, stream] = servers;
      const events = streamModel(malformed.target, userContext("hi"), { protocol });
      const { kinds, partials, message } = await consume(events);
      assert.deepEqual(kinds, ["start", "text_start", "text_delta", "error"]);
      assert.deepEqual(partials.slice(0, 3), partialsOf(EVENTS.slice(0, 3)));
      assert.equal(message.stopReason, StopReason.ERROR);
      assert.equal(textOf(message), "我先读取"); // the delta in front of the malformed bytes is kept
      assert.deepEqual(ruleOf(events.failure), [3, "event-decode"]);
      // A batch that does not parse fails whole, at the index of its first event.
      const whole = streamModel(shortened.target, userContext("hi"), { protocol });
      assert.deepEqual((await consume(whole)).kinds, ["start", "text_start", "error"]);
      assert.deepEqual(ruleOf(whole.failure), [2, "event-decode"]);
      // Stream: one event a message, the third malformed.
      const single = streamModel(stream.target, userContext("hi"), { protocol, batched: false });
      assert.deepEqual((await consume(single)).kinds, ["start", "text_start", "error"]);
      assert.deepEqual(ruleOf(single.failure), [2, "event-decode"]);
      assert.deepEqual(stream.paths, [STREAM]);
    } finally {
      await Promise.all(servers.map((server) => server.close()));
    }
  });

  test(`${protocol}: a status, before or after the first event, is one ERROR event`, {
    timeout: TEST_TIMEOUT,
  }, async () => {
    const refused = streamModel(fast.target, userContext("hi"), { protocol, model: "gpt-9" });
    const before = await consume(refused);
    assert.deepEqual(before.kinds, ["error"]);
    assert.equal(before.message.stopReason, StopReason.ERROR);
    assert.equal(before.message.errorMessage, "unknown model gpt-9");
    assert.deepEqual(refused.failure, {
      kind: "status",
      statusCode: "INVALID_ARGUMENT",
      detail: "unknown model gpt-9",
    });

    const server = await serving([batchOf(EVENTS[0]!)], Code.ResourceExhausted);
    try {
      const events = streamModel(server.target, userContext("hi"), { protocol });
      const { kinds, message } = await consume(events);
      assert.deepEqual(kinds, ["start", "error"]);
      assert.equal(message.errorMessage, "said the test");
      assert.deepEqual(events.failure, { kind: "status", statusCode: "RESOURCE_EXHAUSTED", detail: "said the test" });
    } finally {
      await server.close();
    }

    const gone = await startFakeServer(scripted(0), undefined, [], "grouped", HTTP1);
    await gone.close();
    const nobody = streamModel(gone.target, userContext("hi"), { protocol });
    assert.deepEqual((await consume(nobody)).kinds, ["error"]);
    assert.equal(nobody.failure?.kind === "status" && nobody.failure.statusCode, "UNAVAILABLE");
  });

  test(`${protocol}: a connection cut mid-stream is UNAVAILABLE; the server's own ABORTED stays ABORTED`, {
    timeout: TEST_TIMEOUT,
  }, async () => {
    for (const options of [HTTP1, { httpVersion: "2" } as const]) {
      const server = await startFakeServer(scripted(40), undefined, [], "grouped", options);
      try {
        const events = streamModel(server.target, userContext("hi"), { protocol, httpVersion: options.httpVersion });
        assert.equal(eventKind((await events.next()).value!), "start");
        server.drop(); // as a server that crashes, or is killed
        const { kinds, message } = await consume(events);
        assert.equal(kinds.at(-1), "error");
        assert.equal(message.stopReason, StopReason.ERROR);
        // connect-node reads a reset connection as ABORTED, a lost HTTP/2 session as CANCELED.
        assert.equal(
          events.failure?.kind === "status" && events.failure.statusCode,
          "UNAVAILABLE",
          options.httpVersion,
        );
      } finally {
        await server.close();
      }
    }
    const aborting = await serving([batchOf(EVENTS[0]!)], Code.Aborted);
    try {
      const events = streamModel(aborting.target, userContext("hi"), { protocol });
      assert.deepEqual((await consume(events)).kinds, ["start", "error"]);
      assert.equal(events.failure?.kind === "status" && events.failure.statusCode, "ABORTED");
    } finally {
      await aborting.close();
    }
  });

  test(`${protocol}: cancel() and the caller's signal end the stream with ABORTED`, {
    timeout: TEST_TIMEOUT,
  }, async () => {
    const events = streamModel(slow.target, userContext("hi"), { protocol });
    assert.equal(eventKind((await events.next()).value!), "start");
    events.cancel();
    const { kinds, message } = await consume(events);
    assert.deepEqual(kinds, ["error"]);
    assert.equal(message.stopReason, StopReason.ABORTED);
    assert.equal(message.errorMessage, "cancelled");
    assert.equal(message.model, "scripted-v1"); // the header received before the cancellation is kept
    assert.equal(events.failure, undefined);

    // From another task, while the consumer waits on a server that has gone quiet.
    const hanging = await quietAfterThree();
    try {
      const controller = new AbortController();
      const waiting = streamModel(hanging.target, userContext("hi"), { protocol, signal: controller.signal });
      const consumed = consume(waiting);
      // Once the consumer has taken the three events, it waits for the next (it asks for it in the
      // same turn as it takes the third; this task runs after that turn).
      await until(() => waiting.received === 3 && waiting.queued === 0);
      controller.abort();
      const quiet = await consumed;
      assert.deepEqual(quiet.kinds, ["start", "text_start", "text_delta", "error"]);
      assert.equal(quiet.message.stopReason, StopReason.ABORTED);
      assert.equal(textOf(quiet.message), "我先读取");
    } finally {
      await hanging.close();
    }
  });

  test(`${protocol}: the token, the response metadata and the deadline`, { timeout: TEST_TIMEOUT }, async () => {
    const headers = { "x-want-token": "1" };
    const denied = streamModel(fast.target, userContext("hi"), { protocol, headers, token: "wrong" });
    assert.deepEqual((await consume(denied)).kinds, ["error"]);
    assert.equal(denied.failure?.kind === "status" && denied.failure.statusCode, "UNAUTHENTICATED");

    const events = streamModel(fast.target, userContext("hi"), { protocol, headers, token: TOKEN, timeoutMs: 5000 });
    const first = await events.next();
    assert.equal(eventKind(first.value!), "start");
    assert.equal(events.headers.get("x-served-by"), "fake"); // with the first event
    const { kinds } = await consume(events);
    assert.equal(kinds.at(-1), "done");
    assert.equal(events.trailers.get("x-done"), "yes"); // with the terminal event
    assert.equal(fast.lastHeaders?.get("authorization"), `Bearer ${TOKEN}`);
    assert.equal(fast.deadlines.at(-1), 5000);

    // A server that goes quiet after three events until the client goes away: the deadline passes
    // before the end, however busy the machine.
    const quiet = await quietAfterThree();
    try {
      const late = streamModel(quiet.target, userContext("hi"), { protocol, timeoutMs: 100 });
      const { kinds: cut, message } = await consume(late);
      assert.equal(cut.at(-1), "error");
      assert.ok(cut.length <= 4);
      assert.equal(message.stopReason, StopReason.ERROR);
      assert.equal(late.failure?.kind === "status" && late.failure.statusCode, "DEADLINE_EXCEEDED");
    } finally {
      await quiet.close();
    }
  });

  test(`${protocol}: a server without StreamBatched is read through Stream; batched: false calls Stream alone`, {
    timeout: TEST_TIMEOUT,
  }, async () => {
    const from = older.paths.length;
    const events = streamModel(older.target, userContext("hi"), { protocol, timeoutMs: 5000 });
    const { kinds, partials } = await consume(events);
    assert.deepEqual(kinds, EVENTS.map(eventKind));
    assert.deepEqual(partials, partialsOf(EVENTS));
    assert.deepEqual(older.paths.slice(from), [BATCHED, STREAM]);
    const [first, second] = older.deadlines.slice(from);
    assert.equal(first, 5000);
    // What is left of the first call's deadline, not one of its own: less, by however long the
    // first call took.
    assert.ok(second !== undefined && second < 5000, `the fallback's deadline: ${second}`);

    const alone = fast.paths.length;
    const unbatched = await consume(streamModel(fast.target, userContext("hi"), { protocol, batched: false }));
    assert.deepEqual(unbatched.kinds, EVENTS.map(eventKind));
    assert.deepEqual(fast.paths.slice(alone), [STREAM]);
  });

  test(`${protocol}: calls share connections, over HTTP/1.1 and over HTTP/2`, { timeout: TEST_TIMEOUT }, async () => {
    const server = await startFakeServer(scripted(0), undefined, [], "grouped", HTTP1);
    try {
      for (let call = 0; call < 3; call += 1) {
        assert.equal(
          textOf(await streamModel(server.target, userContext("hi"), { protocol }).result()),
          "我先读取项目说明。",
        );
      }
      assert.equal(server.connections, 1);
    } finally {
      await server.close();
    }
    const transport = createModelTransport(h2.target, { protocol, httpVersion: "2" });
    const from = h2.connections;
    for (const batched of [true, false]) {
      const { kinds } = await consume(streamModel(transport, userContext("hi"), { batched }));
      assert.deepEqual(kinds, EVENTS.map(eventKind));
    }
    assert.equal(h2.connections - from, 1);
    assert.deepEqual(h2.contentTypes.slice(-2), [CONTENT_TYPES[protocol], CONTENT_TYPES[protocol]]);
  });

  test(`${protocol}: the model catalog`, { timeout: TEST_TIMEOUT }, async () => {
    const opus = create(ModelSchema, { id: "claude-opus-4-5", provider: "anthropic" });
    const server = await startFakeServer(scripted(0), undefined, [opus], "grouped", HTTP1);
    try {
      const models = await listModels(server.target, "", { protocol });
      assert.deepEqual(
        models.map((model) => model.id),
        ["claude-opus-4-5"],
      );
      assert.equal((await getModel(server.target, "claude-opus-4-5", "", { protocol })).provider, "anthropic");
      await assert.rejects(getModel(server.target, "gpt-9", "", { protocol }), {
        name: "CallError",
        statusCode: "NOT_FOUND",
      });
    } finally {
      await server.close();
    }
  });
}

test("TLS over HTTP/1.1: `ca` trusts the server's certificate", { timeout: TEST_TIMEOUT }, async (t) => {
  const certificate = await selfSigned();
  if (certificate === undefined) return t.skip("no openssl to make a certificate");
  const secure = await startFakeServer(scripted(0), certificate, [], "grouped", HTTP1);
  try {
    for (const protocol of PROTOCOLS) {
      const trusted = streamModel(secure.target, userContext("hi"), { protocol, ca: certificate.cert });
      const { kinds, message } = await consume(trusted);
      assert.deepEqual(kinds, EVENTS.map(eventKind), protocol);
      assert.equal(textOf(message), "我先读取项目说明。", protocol);
      const untrusted = await streamModel(`https://${secure.target}`, userContext("hi"), { protocol }).result();
      assert.equal(untrusted.stopReason, StopReason.ERROR, protocol);
      assert.match(untrusted.errorMessage ?? "", /certificate/, protocol);
    }
  } finally {
    await secure.close();
  }
});

test("connect's own Connect and gRPC-web transports work too, read the same way", {
  timeout: TEST_TIMEOUT,
}, async () => {
  const transports: Array<[string, (server: FakeServer) => Transport]> = [
    ["connect", (server) => createConnectTransport({ baseUrl: `http://${server.target}`, httpVersion: "1.1" })],
    ["grpc-web", (server) => createGrpcWebTransport({ baseUrl: `http://${server.target}`, httpVersion: "1.1" })],
  ];
  const [a, b, c] = EVENTS as [ModelEvent, ModelEvent, ModelEvent];
  const malformed = await serving([batchOf(a, b), batchOf(c, MALFORMED)]);
  const cut = await serving([batchOf(a), concat(batchOf(b), Uint8Array.of(0x0a, 0x40))]);
  const unlucky = await startFakeServer(
    () => {
      throw new ConnectError("parse binary: the server says so", Code.Internal);
    },
    undefined,
    [],
    "grouped",
    HTTP1,
  );
  try {
    for (const [name, foreign] of transports) {
      const whole = await consume(streamModel(foreign(fast), userContext("hi")));
      assert.deepEqual(whole.kinds, EVENTS.map(eventKind), name);
      assert.deepEqual(whole.partials, partialsOf(EVENTS), name);
      const fallback = await consume(streamModel(foreign(older), userContext("hi")));
      assert.deepEqual(fallback.kinds, EVENTS.map(eventKind), name);

      const events = streamModel(foreign(malformed), userContext("hi"));
      assert.deepEqual((await consume(events)).kinds, ["start", "text_start", "text_delta", "error"], name);
      assert.deepEqual(ruleOf(events.failure), [3, "event-decode"], name);
      // A batch that does not parse fails whole, at its first event.
      const shortened = streamModel(foreign(cut), userContext("hi"));
      assert.deepEqual((await consume(shortened)).kinds, ["start", "error"], name);
      assert.deepEqual(ruleOf(shortened.failure), [1, "event-decode"], name);
      // A status that reads like a decoding failure is still the server's status.
      for (const batched of [true, false]) {
        const status = streamModel(foreign(unlucky), userContext("hi"), { batched });
        assert.deepEqual((await consume(status)).kinds, ["error"], name);
        assert.equal(status.failure?.kind === "status" && status.failure.statusCode, "INTERNAL", name);
      }
    }
  } finally {
    await Promise.all([malformed.close(), cut.close(), unlucky.close()]);
  }
});

test("createModelTransport refuses a protocol it does not know, and gRPC over HTTP/1.1", () => {
  assert.throws(() => createModelTransport("127.0.0.1:1", { protocol: "grpc", httpVersion: "1.1" }), {
    name: "TypeError",
    message: "gRPC needs HTTP/2, not HTTP/1.1",
  });
  assert.throws(() => createModelTransport("127.0.0.1:1", { protocol: "sse" as never }), {
    name: "TypeError",
    message: 'protocol "sse": expected one of grpc, connect, grpc-web',
  });
});
