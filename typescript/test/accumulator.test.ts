// The accumulator rebuilds the partial message exactly as the seed's event table describes, and
// rejects events that do not fit the stream with the same messages as the Python runtime.

import assert from "node:assert/strict";
import { test } from "node:test";
import { clone, create, toBinary } from "@bufbuild/protobuf";
import {
  Accumulator,
  AssistantContentSchema,
  type AssistantMessage,
  AssistantMessageSchema,
  type ModelEvent,
  ModelEventSchema,
  StopReason,
  StreamProtocolError,
  eventKind,
  textOf,
} from "../src/index.js";
import { TEST_TIMEOUT, assistantMessage, event, eventsOf, text, thinking, toolCall } from "./support/messages.js";

function readmeTurn(): AssistantMessage {
  return assistantMessage([text("我先读取项目说明。"), toolCall("call_1", "read", { path: "README.md" })], {
    stopReason: StopReason.TOOL_USE,
    timestamp: 1010n,
  });
}

function sample(): AssistantMessage {
  return assistantMessage(
    [
      thinking("让我想想 🤔", "sig-Ω", false),
      text("我先读取项目说明。", '{"id":"msg_1"}'),
      toolCall("call_1", "read", { path: "README.md" }, { rawArguments: '{"path": "README.md"}', thoughtSignature: "c2ln" }),
    ],
    { stopReason: StopReason.TOOL_USE },
  );
}

function callAt(message: AssistantMessage, index: number) {
  const block = message.content[index]!.block;
  assert.equal(block.case, "toolCall");
  return block.value;
}

test("the partial at each step of the seed's event table", { timeout: TEST_TIMEOUT }, () => {
  const accumulator = new Accumulator();
  const steps = new Map<string, AssistantMessage>();
  for (const item of eventsOf(readmeTurn(), 100)) {
    const applied = accumulator.apply(item);
    assert.equal(applied, item);
    assert.equal(item.partial, accumulator.partial);
    steps.set(eventKind(item), clone(AssistantMessageSchema, item.partial!)); // the partial changes in place
  }
  const at = (kind: string): AssistantMessage => steps.get(kind)!;

  assert.deepEqual(at("start").content, []);
  assert.deepEqual([at("start").provider, at("start").model], ["scripted", "scripted-v1"]);
  assert.equal(textOf(at("text_delta")), "我先读取项目说明。");

  const streaming = callAt(at("toolcall_delta"), 1);
  assert.deepEqual([streaming.id, streaming.name], ["call_1", "read"]);
  assert.equal(streaming.argumentsJson, "{}");
  assert.equal(streaming.rawArguments, '{"path":"README.md"}');

  assert.deepEqual(JSON.parse(callAt(at("toolcall_end"), 1).argumentsJson), { path: "README.md" });
  assert.deepEqual(at("done"), readmeTurn());
});

test("rebuilding a message from its events gives its content back", { timeout: TEST_TIMEOUT }, () => {
  const message = sample();
  for (const size of [1, 3, 1000]) {
    const accumulator = new Accumulator();
    for (const item of eventsOf(message, size)) {
      if (item.event.case !== "done") accumulator.apply(item);
    }
    const rebuilt = accumulator.partial;
    // Content and header are rebuilt; usage and stop reason arrive with the terminal event.
    assert.deepEqual(rebuilt.content, message.content);
    assert.deepEqual(
      [rebuilt.api, rebuilt.provider, rebuilt.model, rebuilt.timestamp],
      [message.api, message.provider, message.model, message.timestamp],
    );
  }
});

test("start copies the header and leaves it untouched", { timeout: TEST_TIMEOUT }, () => {
  const header = assistantMessage([]);
  const before = toBinary(AssistantMessageSchema, header);
  const accumulator = new Accumulator();
  accumulator.apply(event({ case: "start", value: { header } }));
  accumulator.apply(event({ case: "textStart", value: { contentIndex: 0 } }));
  assert.notEqual(accumulator.partial, header);
  assert.equal(accumulator.partial.content.length, 1);
  assert.deepEqual(toBinary(AssistantMessageSchema, header), before);
});

test("end events keep signatures only when they carry one", { timeout: TEST_TIMEOUT }, () => {
  const accumulator = new Accumulator();
  for (const item of [
    event({ case: "start", value: {} }),
    event({ case: "textStart", value: { contentIndex: 0 } }),
    event({ case: "textEnd", value: { contentIndex: 0 } }),
    event({ case: "thinkingStart", value: { contentIndex: 1 } }),
    event({ case: "thinkingEnd", value: { contentIndex: 1, thinkingSignature: "sig", redacted: true } }),
  ]) {
    accumulator.apply(item);
  }
  const [first, second] = accumulator.partial.content;
  assert.equal(first!.block.case === "text" && first!.block.value.textSignature, undefined);
  assert.ok(second!.block.case === "thinking");
  assert.equal(second!.block.value.thinkingSignature, "sig");
  assert.equal(second!.block.value.redacted, true);
});

const START = event({ case: "start", value: { header: assistantMessage([]) } });
const TEXT_START = event({ case: "textStart", value: { contentIndex: 0 } });
const TEXT_END = event({ case: "textEnd", value: { contentIndex: 0 } });
const CALL_START = event({ case: "toolcallStart", value: { contentIndex: 0, id: "call_1", name: "read" } });

function done(message: AssistantMessage, reason: StopReason = StopReason.STOP): ModelEvent {
  return event({ case: "done", value: { reason, message } });
}

function call(id: string, name: string, argumentsJson: string): AssistantMessage {
  return assistantMessage([
    create(AssistantContentSchema, { block: { case: "toolCall", value: { id, name, argumentsJson } } }),
  ]);
}

// The same cases and messages as the Python runtime's accumulator tests, and a few more.
const BROKEN_RULES: Array<[string, ModelEvent[], string]> = [
  ["event-kind", [create(ModelEventSchema)], "event 0 breaks rule 'event-kind': no event kind is set"],
  ["start-first", [TEXT_START], "event 0 (text_start) breaks rule 'start-first': a stream opens with start"],
  ["start-once", [START, START], "event 1 (start) breaks rule 'start-once': start must be the first event"],
  [
    "next-index",
    [START, event({ case: "textStart", value: { contentIndex: 1 } })],
    "event 1 (text_start) breaks rule 'next-index': content_index 1 must open the next block, 0",
  ],
  [
    "block-exists",
    [START, event({ case: "textDelta", value: { contentIndex: 0, delta: "x" } })],
    "event 1 (text_delta) breaks rule 'block-exists': content_index 0 refers to no block (the message has 0)",
  ],
  [
    "block-kind",
    [START, TEXT_START, event({ case: "toolcallDelta", value: { contentIndex: 0, delta: "{" } })],
    "event 2 (toolcall_delta) breaks rule 'block-kind': block 0 is not a tool call block",
  ],
  [
    "block-kind",
    [START, CALL_START, event({ case: "thinkingEnd", value: { contentIndex: 0 } })],
    "event 2 (thinking_end) breaks rule 'block-kind': block 0 is not a thinking block",
  ],
  [
    "block-open",
    [START, TEXT_START, TEXT_END, event({ case: "textDelta", value: { contentIndex: 0, delta: "late" } })],
    "event 3 (text_delta) breaks rule 'block-open': block 0 has already ended",
  ],
  [
    "tool-call-id",
    [START, CALL_START, event({ case: "toolcallEnd", value: { toolCall: { id: "call_2", name: "read" } } })],
    "event 2 (toolcall_end) breaks rule 'tool-call-id': tool call 0 started as 'call_1' but ends as 'call_2'",
  ],
  [
    "tool-call-id",
    [START, CALL_START, event({ case: "toolcallEnd", value: { toolCall: { id: "it's\n", name: "read" } } })],
    `event 2 (toolcall_end) breaks rule 'tool-call-id': tool call 0 started as 'call_1' but ends as "it's\\n"`,
  ],
  [
    "terminal-message",
    [START, event({ case: "done", value: { reason: StopReason.STOP } })],
    "event 1 (done) breaks rule 'terminal-message': carries no message",
  ],
  [
    "terminal-reason",
    [START, done(assistantMessage([], { stopReason: StopReason.ERROR }), StopReason.ERROR)],
    "event 1 (done) breaks rule 'terminal-reason': reason ERROR with a message stopped by ERROR; " +
      "done takes STOP, LENGTH, TOOL_USE, equal in both",
  ],
  [
    "terminal-reason",
    [START, done(assistantMessage([], { stopReason: StopReason.STOP }), StopReason.LENGTH)],
    "event 1 (done) breaks rule 'terminal-reason': reason LENGTH with a message stopped by STOP; " +
      "done takes STOP, LENGTH, TOOL_USE, equal in both",
  ],
  [
    "terminal-reason",
    [event({ case: "error", value: { reason: StopReason.STOP, message: assistantMessage([]) } })],
    "event 0 (error) breaks rule 'terminal-reason': reason STOP with a message stopped by STOP; " +
      "error takes ERROR, ABORTED, equal in both",
  ],
  [
    "terminal-agrees",
    [START, TEXT_START, done(call("c", "read", "{}"))],
    "event 2 (done) breaks rule 'terminal-agrees': the message has blocks ['tool_call'], the stream built ['text']",
  ],
  [
    "message-valid",
    [done(call("c", "read", "[1]"))],
    "event 0 (done) breaks rule 'message-valid': message.content[0].tool_call.arguments_json: " +
      "must be a JSON object, got list",
  ],
  [
    "message-valid",
    [done(call("", "read", "{}"))],
    "event 0 (done) breaks rule 'message-valid': message.content[0].tool_call.id: must not be empty",
  ],
  [
    "message-valid",
    [done(call("c", "read", `{"a":${"[".repeat(64)}${"]".repeat(64)}}`))],
    "event 0 (done) breaks rule 'message-valid': message.content[0].tool_call.arguments_json: " +
      "JSON nested deeper than the limit of 64",
  ],
  [
    "message-valid",
    [done(assistantMessage([create(AssistantContentSchema, { block: { case: "text", value: { extraJson: "7" } } })]))],
    "event 0 (done) breaks rule 'message-valid': message.content[0].text.extra_json: must be a JSON object, got number",
  ],
];

for (const [rule, events, message] of BROKEN_RULES) {
  test(`rule ${rule}: ${message}`, { timeout: TEST_TIMEOUT }, () => {
    const accumulator = new Accumulator();
    const bad = events.at(-1)!;
    for (const fine of events.slice(0, -1)) accumulator.apply(fine);
    assert.throws(
      () => accumulator.apply(bad),
      (error) => error instanceof StreamProtocolError && error.message === message,
    );
  });
}

test("a terminal event alone is a valid stream", { timeout: TEST_TIMEOUT }, () => {
  const failed = assistantMessage([], { stopReason: StopReason.ERROR, errorMessage: "socket reset" });
  const item = new Accumulator().apply(event({ case: "error", value: { reason: StopReason.ERROR, message: failed } }));
  assert.equal(item.partial, failed);
});

test("the JSON limits are the accumulator's to set", { timeout: TEST_TIMEOUT }, () => {
  const big = call("c", "read", JSON.stringify({ path: "x".repeat(100) }));
  assert.throws(
    () => new Accumulator({ maxJsonBytes: 64, maxJsonDepth: 64 }).apply(done(big)),
    (error) =>
      error instanceof StreamProtocolError &&
      error.message ===
        "event 0 (done) breaks rule 'message-valid': message.content[0].tool_call.arguments_json: " +
          "111 bytes of JSON, above the limit of 64",
  );
  assert.equal(new Accumulator().apply(done(big)).partial, big);
});
