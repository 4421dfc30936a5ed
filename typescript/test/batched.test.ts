// StreamBatched: the events of a batch are applied one at a time, each with its own partial and its
// own index; malformed bytes keep the events in front of them; a server without StreamBatched is
// read through Stream; `batched: false` calls Stream alone.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { clone, toBinary } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import {
  Accumulator,
  type AssistantMessage,
  type AssistantMessageEventStream,
  AssistantMessageSchema,
  eventKind,
  type ModelEvent,
  ModelEventSchema,
  StopReason,
  StreamBatchedViewSchema,
  type StreamFailure,
  StreamRule,
  streamModel,
  textOf,
} from "pi-proto";
import { type Batches, type FakeServer, play, startFakeServer } from "./support/fake-server.js";
import { assistantMessage, eventsOf, TEST_TIMEOUT, text, toolCall, userContext } from "./support/messages.js";

const STREAM = "/pi.ai.v1.ModelService/Stream";
const BATCHED = "/pi.ai.v1.ModelService/StreamBatched";

const ANSWER = assistantMessage([text("我先读取项目说明。"), toolCall("call_1", "read", { path: "README.md" })], {
  stopReason: StopReason.TOOL_USE,
});
const EVENTS = eventsOf(ANSWER, 4);
/** Bytes that are no ModelEvent: field 1 says 127 bytes follow, and one does. */
const MALFORMED = Uint8Array.of(0x0a, 0x7f, 0x01);

/** The bytes of a StreamBatchedResponse carrying `events` (ModelEvents, or bytes as they are). */
function batchOf(...events: Array<ModelEvent | Uint8Array>): Uint8Array {
  const encoded = events.map((item) => (item instanceof Uint8Array ? item : toBinary(ModelEventSchema, item)));
  return toBinary(StreamBatchedViewSchema, { $typeName: "pi.ai.v1.StreamBatchedView", events: encoded });
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((total, part) => total + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** The partial after each event, applying them one by one as a receiver does. */
function partialsOf(events: readonly ModelEvent[]): AssistantMessage[] {
  const accumulator = new Accumulator();
  return events.map((item) => clone(AssistantMessageSchema, accumulator.apply(clone(ModelEventSchema, item)).partial!));
}

/** A server whose StreamBatched sends `messages`, then `status`. */
function serving(messages: Uint8Array[], status?: Code): Promise<FakeServer> {
  return startFakeServer(scripted, undefined, [], () => ({ messages, status }));
}

function scripted(_request: unknown, context: Parameters<typeof play>[1]): AsyncIterable<ModelEvent> {
  return play(EVENTS, context);
}

/** Every event with a copy of its partial as it was when the event was consumed; `pauseMs` between events. */
async function consume(
  events: AssistantMessageEventStream,
  pauseMs = 0,
): Promise<{ kinds: string[]; partials: AssistantMessage[]; message: AssistantMessage }> {
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

let grouped: FakeServer; // StreamBatched plays EVENTS in groups of the events that are ready together
let older: FakeServer; // no StreamBatched: Stream alone

before(async () => {
  [grouped, older] = await Promise.all([
    startFakeServer(scripted),
    startFakeServer(scripted, undefined, [], "unimplemented" satisfies Batches),
  ]);
});

after(async () => {
  await Promise.all([grouped?.close(), older?.close()]);
});

test("a batch of several events yields each with its own partial", { timeout: TEST_TIMEOUT }, async () => {
  const server = await serving([batchOf(...EVENTS)]); // the whole answer in one message
  try {
    const expected = partialsOf(EVENTS);
    for (const pauseMs of [0, 5]) {
      const { kinds, partials, message } = await consume(streamModel(server.target, userContext("hi")), pauseMs);
      assert.deepEqual(kinds, EVENTS.map(eventKind));
      assert.deepEqual(partials, expected, `a consumer pausing ${pauseMs} ms`);
      assert.equal(textOf(message), "我先读取项目说明。");
      assert.equal(message.stopReason, StopReason.TOOL_USE);
    }
    assert.deepEqual(server.paths, [BATCHED, BATCHED]);
  } finally {
    await server.close();
  }
});

test("a server that groups the ready events gives the same events and partials", {
  timeout: TEST_TIMEOUT,
}, async () => {
  const sent = grouped.batchSizes.length;
  const { kinds, partials } = await consume(streamModel(grouped.target, userContext("hi")));
  assert.deepEqual(kinds, EVENTS.map(eventKind));
  assert.deepEqual(partials, partialsOf(EVENTS));
  assert.equal(grouped.paths.at(-1), BATCHED);
  const sizes = grouped.batchSizes.slice(sent);
  assert.equal(
    sizes.reduce((total, size) => total + size, 0),
    EVENTS.length,
  );
  assert.ok(sizes.length < EVENTS.length, `events in each message: ${sizes.join(", ")}`);
});

test("fields other than the events are skipped, whatever their wire type", { timeout: TEST_TIMEOUT }, async () => {
  const noise = concat(
    Uint8Array.of(0x10, 0x96, 0x01), // field 2, varint 150
    Uint8Array.of(0x1d, 1, 2, 3, 4), // field 3, fixed32
    Uint8Array.of(0x21, 1, 2, 3, 4, 5, 6, 7, 8), // field 4, fixed64
    Uint8Array.of(0x2a, 0x01, 0x00), // field 5, length-delimited
  );
  const server = await serving([concat(noise, batchOf(...EVENTS.slice(0, 3)), noise), batchOf(...EVENTS.slice(3))]);
  try {
    const { kinds, message } = await consume(streamModel(server.target, userContext("hi")));
    assert.deepEqual(kinds, EVENTS.map(eventKind));
    assert.equal(message.stopReason, StopReason.TOOL_USE);
  } finally {
    await server.close();
  }
});

test("a malformed event keeps the good ones in front of it and fails at its own index", {
  timeout: TEST_TIMEOUT,
}, async () => {
  // Indexes count events, not messages: the malformed event is the fourth (index 3).
  const server = await serving([batchOf(...EVENTS.slice(0, 2)), batchOf(EVENTS[2]!, MALFORMED, EVENTS[3]!)]);
  try {
    const events = streamModel(server.target, userContext("hi"));
    const { kinds, partials, message } = await consume(events);
    assert.deepEqual(kinds, ["start", "text_start", "text_delta", "error"]);
    assert.deepEqual(partials.slice(0, 3), partialsOf(EVENTS.slice(0, 3)));
    assert.equal(message.stopReason, StopReason.ERROR);
    assert.equal(textOf(message), "我先读取"); // the delta in front of the malformed event is kept
    assert.deepEqual(ruleOf(events.failure), [3, "event-decode"]);
    assert.equal(events.failure?.kind === "rule" && events.failure.rule, StreamRule.EVENT_DECODE);
  } finally {
    await server.close();
  }
});

test("a batch that does not parse fails whole, at the index of its first event", {
  timeout: TEST_TIMEOUT,
}, async () => {
  const good = batchOf(...EVENTS.slice(0, 2));
  const tails: Array<[string, Uint8Array]> = [
    ["a length past the end", Uint8Array.of(0x0a, 0x40, 0x08)], // 64 bytes said, 1 sent
    ["a key cut short", Uint8Array.of(0x80)],
    ["a varint cut short", Uint8Array.of(0x10, 0x80)],
    ["a fixed32 cut short", Uint8Array.of(0x1d, 1, 2)],
    ["field 0", Uint8Array.of(0x02, 0x00)],
    ["wire type 7", Uint8Array.of(0x0f)],
    ["events as a varint", Uint8Array.of(0x08, 0x01)],
  ];
  for (const [name, tail] of tails) {
    // The first batch is whole; the second, its own two events in front of the tail, is not.
    const server = await serving([good, concat(batchOf(...EVENTS.slice(2, 4)), tail)]);
    try {
      const events = streamModel(server.target, userContext("hi"));
      const { kinds, message } = await consume(events);
      assert.deepEqual(kinds, ["start", "text_start", "error"], name);
      assert.equal(textOf(message), "", name); // none of the second batch's events is applied
      assert.deepEqual(ruleOf(events.failure), [2, "event-decode"], name);
    } finally {
      await server.close();
    }
  }
});

test("a stream rule broken inside a batch names the event's own index", { timeout: TEST_TIMEOUT }, async () => {
  const stray = EVENTS[2]!; // a text delta sent again after its block has ended
  const server = await serving([batchOf(...EVENTS.slice(0, 5)), batchOf(EVENTS[5]!, stray)]);
  try {
    const events = streamModel(server.target, userContext("hi"));
    const { kinds } = await consume(events);
    assert.equal(kinds.length, 7);
    assert.equal(kinds.at(-1), "error");
    assert.deepEqual(ruleOf(events.failure), [6, "block-open"]);
  } finally {
    await server.close();
  }
});

test("events after the terminal event of a batch are ignored", { timeout: TEST_TIMEOUT }, async () => {
  const server = await serving([batchOf(...EVENTS, EVENTS[1]!, MALFORMED)]);
  try {
    const events = streamModel(server.target, userContext("hi"));
    const { kinds, message } = await consume(events);
    assert.deepEqual(kinds, EVENTS.map(eventKind));
    assert.equal(message.stopReason, StopReason.TOOL_USE);
    assert.equal(events.failure, undefined);
  } finally {
    await server.close();
  }
});

test("UNIMPLEMENTED after an event is the stream's status, not a reason to call Stream", {
  timeout: TEST_TIMEOUT,
}, async () => {
  const server = await serving([batchOf(EVENTS[0]!)], Code.Unimplemented);
  try {
    const events = streamModel(server.target, userContext("hi"));
    const { kinds } = await consume(events);
    assert.deepEqual(kinds, ["start", "error"]);
    assert.deepEqual(events.failure, { kind: "status", statusCode: "UNIMPLEMENTED", detail: "said the test" });
    assert.deepEqual(server.paths, [BATCHED]);
  } finally {
    await server.close();
  }
});

test("a server without StreamBatched is read through Stream, within the same deadline", {
  timeout: TEST_TIMEOUT,
}, async () => {
  const before = older.paths.length;
  const events = streamModel(older.target, userContext("hi"), { timeoutMs: 5000 });
  const { kinds, partials, message } = await consume(events);
  assert.deepEqual(kinds, EVENTS.map(eventKind));
  assert.deepEqual(partials.at(-1), partialsOf(EVENTS).at(-1));
  assert.equal(message.stopReason, StopReason.TOOL_USE);
  assert.equal(events.failure, undefined);
  assert.deepEqual(older.paths.slice(before), [BATCHED, STREAM]);
  const [first, second] = older.deadlines.slice(before);
  assert.equal(first, 5000);
  // What is left of the first call's deadline, not one of its own: less, by however long the
  // first call took.
  assert.ok(second !== undefined && second < 5000, `the fallback's deadline: ${second}`);
});

test("batched: false calls Stream alone", { timeout: TEST_TIMEOUT }, async () => {
  const before = grouped.paths.length;
  const { kinds, message } = await consume(streamModel(grouped.target, userContext("hi"), { batched: false }));
  assert.deepEqual(kinds, EVENTS.map(eventKind));
  assert.equal(message.stopReason, StopReason.TOOL_USE);
  assert.deepEqual(grouped.paths.slice(before), [STREAM]);
});

test("over a transport of someone else's, each event of a batch is decoded alone too", {
  timeout: TEST_TIMEOUT,
}, async () => {
  const foreign = (server: FakeServer) => createGrpcTransport({ baseUrl: `http://${server.target}` });
  const whole = await consume(streamModel(foreign(grouped), userContext("hi")));
  assert.deepEqual(whole.kinds, EVENTS.map(eventKind));
  assert.deepEqual(whole.partials, partialsOf(EVENTS));

  const fallback = await consume(streamModel(foreign(older), userContext("hi")));
  assert.deepEqual(fallback.kinds, EVENTS.map(eventKind));

  const malformed = await serving([batchOf(...EVENTS.slice(0, 2)), batchOf(EVENTS[2]!, MALFORMED)]);
  const cut = await serving([batchOf(EVENTS[0]!), concat(batchOf(EVENTS[1]!), Uint8Array.of(0x0a, 0x40))]);
  try {
    const events = streamModel(foreign(malformed), userContext("hi"));
    assert.deepEqual((await consume(events)).kinds, ["start", "text_start", "text_delta", "error"]);
    assert.deepEqual(ruleOf(events.failure), [3, "event-decode"]);
    // A batch that does not parse fails whole, at its first event.
    const whole = streamModel(foreign(cut), userContext("hi"));
    assert.deepEqual((await consume(whole)).kinds, ["start", "error"]);
    assert.deepEqual(ruleOf(whole.failure), [1, "event-decode"]);
  } finally {
    await Promise.all([malformed.close(), cut.close()]);
  }
});

test("result() alone reads a long stream to its end, batched or not", { timeout: TEST_TIMEOUT }, async () => {
  const long = assistantMessage([text("0123456789".repeat(400))]); // 500 deltas: far past highWater
  const server = await startFakeServer((_request, context) => play(eventsOf(long, 8), context));
  try {
    for (const batched of [true, false]) {
      const message = await streamModel(server.target, userContext("hi"), { batched }).result();
      assert.equal(textOf(message), textOf(long));
      assert.equal(message.stopReason, StopReason.STOP);
    }
  } finally {
    await server.close();
  }
});
