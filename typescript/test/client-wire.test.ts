// The client against a server that sends what a correct one never does: a stream without a
// terminal event, events after it, undecodable bytes, events out of place and bare statuses.

import assert from "node:assert/strict";
import { test } from "node:test";
import { toBinary } from "@bufbuild/protobuf";
import { type ModelEvent, ModelEventSchema, StopReason, eventKind, streamModel, textOf } from "pi-proto";
import { TEST_TIMEOUT, assistantMessage, event, eventsOf, text, userContext } from "./support/messages.js";
import { type Status, startRawServer } from "./support/raw-server.js";

function wire(events: ModelEvent[]): Uint8Array[] {
  return events.map((item) => toBinary(ModelEventSchema, item));
}

async function play(messages: Uint8Array[], status?: Status) {
  const server = await startRawServer(messages, status);
  try {
    const events = streamModel(server.target, userContext("hi"));
    const kinds: string[] = [];
    for await (const item of events) kinds.push(eventKind(item));
    return { kinds, message: await events.result() };
  } finally {
    await server.close();
  }
}

test("a stream closed without a terminal event is an ERROR event", { timeout: TEST_TIMEOUT }, async () => {
  const { kinds, message } = await play(wire(eventsOf(assistantMessage([text("kept")])).slice(0, 3)));
  assert.deepEqual(kinds, ["start", "text_start", "text_delta", "error"]);
  assert.equal(message.stopReason, StopReason.ERROR);
  assert.equal(message.errorMessage, "stream ended without a terminal event");
  assert.equal(textOf(message), "kept");
});

test("events after the terminal event are ignored", { timeout: TEST_TIMEOUT }, async () => {
  const events = eventsOf(assistantMessage([text("ok")]));
  const late = event({ case: "textDelta", value: { delta: "late" } });
  const { kinds, message } = await play(wire([...events, late, late]));
  assert.deepEqual(kinds, events.map(eventKind));
  assert.equal(kinds.at(-1), "done");
  assert.equal(message.stopReason, StopReason.STOP);
  assert.equal(textOf(message), "ok");
});

test("an undecodable event becomes one ERROR event naming its index", { timeout: TEST_TIMEOUT }, async () => {
  const start = wire(eventsOf(assistantMessage([])).slice(0, 1));
  const { kinds, message } = await play([...start, new Uint8Array([0x0a, 0x05, 0x61, 0x62])]);
  assert.deepEqual(kinds, ["start", "error"]);
  assert.equal(message.stopReason, StopReason.ERROR);
  assert.equal(message.errorMessage, "event 1: cannot decode ModelEvent: premature EOF");
});

test("an event out of place becomes one ERROR event naming the rule", { timeout: TEST_TIMEOUT }, async () => {
  const start = eventsOf(assistantMessage([])).slice(0, 1);
  const orphan = event({ case: "textDelta", value: { contentIndex: 4, delta: "x" } });
  const { kinds, message } = await play(wire([...start, orphan]));
  assert.deepEqual(kinds, ["start", "error"]);
  assert.equal(message.stopReason, StopReason.ERROR);
  assert.equal(
    message.errorMessage,
    "event 1 (text_delta) breaks rule 'block-exists': content_index 4 refers to no block (the message has 0)",
  );
});

test("a status that looks like a decoding failure is reported as sent", { timeout: TEST_TIMEOUT }, async () => {
  const { kinds, message } = await play([], { code: 13, message: "parse binary: the server says so" });
  assert.deepEqual(kinds, ["error"]);
  assert.equal(message.errorMessage, "parse binary: the server says so");
});

test("a status without a message is reported by its code name", { timeout: TEST_TIMEOUT }, async () => {
  const start = wire(eventsOf(assistantMessage([])).slice(0, 1));
  const { kinds, message } = await play(start, { code: 8 });
  assert.deepEqual(kinds, ["start", "error"]);
  assert.equal(message.stopReason, StopReason.ERROR);
  assert.equal(message.errorMessage, "RESOURCE_EXHAUSTED");
});

test("calls to the same host:port share one connection", { timeout: TEST_TIMEOUT }, async () => {
  const server = await startRawServer(wire(eventsOf(assistantMessage([text("ok")]))));
  try {
    for (let call = 0; call < 3; call += 1) {
      assert.equal(textOf(await streamModel(server.target, userContext("hi")).result()), "ok");
    }
    assert.equal(server.connections(), 1);
  } finally {
    await server.close();
  }
});
