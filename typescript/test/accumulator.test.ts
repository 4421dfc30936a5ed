// The accumulator rebuilds the partial message exactly as the seed's event table describes, and
// rejects events that do not fit the stream with a structured error. (The corpus's stream cases
// pin every rule; these tests show the API.)

import assert from "node:assert/strict";
import { test } from "node:test";
import { clone, create, toBinary } from "@bufbuild/protobuf";
import {
  Accumulator,
  AssistantContentSchema,
  type AssistantMessage,
  AssistantMessageSchema,
  completeJson,
  contentSha256,
  DEFAULT_MAX_MESSAGE_BYTES,
  eventKind,
  type ModelEvent,
  ModelEventSchema,
  StopReason,
  StreamProtocolError,
  StreamRule,
  StreamRuleSchema,
  streamRuleId,
  ToolCallSchema,
  textOf,
  UsageSchema,
} from "../src/index.js";
import { assistantMessage, event, eventsOf, TEST_TIMEOUT, text, thinking, toolCall } from "./support/messages.js";

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
      toolCall(
        "call_1",
        "read",
        { path: "README.md" },
        { rawArguments: '{"path": "README.md"}', thoughtSignature: "c2ln" },
      ),
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
  assert.equal(streaming.argumentsJson, '{"path":"README.md"}'); // the text so far, completed
  assert.equal(streaming.rawArguments, '{"path":"README.md"}');

  assert.deepEqual(JSON.parse(callAt(at("toolcall_end"), 1).argumentsJson!), { path: "README.md" });
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

function refusal(events: ModelEvent[], accumulator = new Accumulator()): StreamProtocolError {
  try {
    for (const item of events) accumulator.apply(item);
  } catch (error) {
    assert.ok(error instanceof StreamProtocolError);
    return error;
  }
  assert.fail("every event fit");
}

test("a broken rule names the event and the rule", { timeout: TEST_TIMEOUT }, () => {
  const orphan = event({ case: "textDelta", value: { contentIndex: 4, delta: "x" } });
  const error = refusal([START, TEXT_START, orphan]);
  assert.deepEqual([error.eventIndex, error.ruleId, error.violations], [2, "block-exists", []]);
  assert.ok(error.detail.length > 0);

  assert.equal(refusal([create(ModelEventSchema)]).ruleId, "event-kind");
  assert.equal(refusal([TEXT_START]).ruleId, "start-first");
  assert.equal(refusal([START, START]).ruleId, "start-once");
  assert.equal(refusal([START, TEXT_START, TEXT_END, TEXT_END]).ruleId, "block-open");
  const renamed = event({ case: "toolcallEnd", value: { contentIndex: 0, toolCall: { id: "call_2", name: "read" } } });
  assert.equal(refusal([START, CALL_START, renamed]).ruleId, "tool-call-id");
  assert.equal(refusal([START, CALL_START, renamed]).rule, StreamRule.TOOL_CALL_ID);
});

test("a rule's text id is its enum value's name, without the prefix, in lower case with hyphens", () => {
  const ids = StreamRuleSchema.values.filter((value) => value.number !== 0).map((value) => streamRuleId(value.number));
  assert.deepEqual(ids, [
    "event-kind",
    "start-first",
    "start-once",
    "next-index",
    "block-exists",
    "block-kind",
    "block-open",
    "tool-call-id",
    "terminal-valid",
    "terminal-agrees",
    "size-limit",
    "terminal-missing",
    "event-decode",
    "sequence",
    "terminal-digest",
  ]);
  assert.equal(streamRuleId(StreamRule.UNSPECIFIED), "unspecified");
  assert.equal(streamRuleId(99 as StreamRule), "99"); // a rule of a newer schema, by its number
  const error = new StreamProtocolError(3, StreamRule.BLOCK_OPEN, "why");
  assert.deepEqual(
    [error.rule, error.ruleId, error.message],
    [StreamRule.BLOCK_OPEN, "block-open", "event 3 breaks rule block-open: why"],
  );
});

test("a terminal event is validated whole: its violations have paths from the event", { timeout: TEST_TIMEOUT }, () => {
  const error = refusal([START, CALL_START, done(call("", "read", "[1]"), StopReason.LENGTH)]);
  assert.deepEqual([error.eventIndex, error.ruleId], [2, "terminal-valid"]);
  // Every protovalidate rule the event breaks; the JSON text rules wait until those hold.
  assert.deepEqual(error.violations.map((item) => [item.fieldPath, item.ruleId]).sort(), [
    ["done", "done.reason_matches_message"],
    ["done.message.content[0].tool_call.id", "string.min_len"],
  ]);
  const bad = refusal([START, CALL_START, done(call("call_1", "read", "[1]"), StopReason.STOP)]);
  assert.deepEqual(
    bad.violations.map((item) => [item.fieldPath, item.ruleId]),
    [["done.message.content[0].tool_call.arguments_json", "json.object"]],
  );
  // Then the blocks must be the ones streamed.
  assert.equal(refusal([START, TEXT_START, done(call("call_1", "read", "{}"))]).ruleId, "terminal-agrees");
});

test("size-limit counts the UTF-8 bytes of every delta", { timeout: TEST_TIMEOUT }, () => {
  const delta = (contentIndex: number, value: string) =>
    event({ case: contentIndex === 0 ? "textDelta" : "toolcallDelta", value: { contentIndex, delta: value } });
  const callStart = event({ case: "toolcallStart", value: { contentIndex: 1, id: "c", name: "n" } });
  const fits = new Accumulator(10);
  for (const item of [START, TEXT_START, delta(0, "é"), callStart, delta(1, '{"a":1')]) fits.apply(item);
  assert.equal(fits.receivedBytes, 10); // "é" is two bytes, and the call's id and name count
  const error = refusal([START, TEXT_START, delta(0, "é"), callStart, delta(1, '{"a":12')], new Accumulator(10));
  assert.deepEqual([error.eventIndex, error.ruleId], [4, "size-limit"]);
  assert.equal(new Accumulator().maxMessageBytes, DEFAULT_MAX_MESSAGE_BYTES);
  assert.equal(DEFAULT_MAX_MESSAGE_BYTES, 64 * 1024 * 1024);
});

/** Apply `events` to `accumulator`, then `last`, which must break size-limit and change nothing. */
function refusedForSize(accumulator: Accumulator, events: ModelEvent[], last: ModelEvent): number {
  for (const item of events) accumulator.apply(item);
  const [before, partial] = [accumulator.receivedBytes, toBinary(AssistantMessageSchema, accumulator.partial)];
  const error = refusal([last], accumulator);
  assert.equal(error.ruleId, "size-limit");
  assert.deepEqual(
    [accumulator.receivedBytes, toBinary(AssistantMessageSchema, accumulator.partial)],
    [before, partial],
  );
  return error.eventIndex;
}

test("size-limit counts a tool call's id and name, and the signatures of end events", { timeout: TEST_TIMEOUT }, () => {
  const callStart = event({ case: "toolcallStart", value: { contentIndex: 0, id: "call_é", name: "write" } }); // 7 + 5
  const fits = new Accumulator(12);
  for (const item of [START, callStart]) fits.apply(item);
  assert.equal(fits.receivedBytes, 12);
  assert.equal(refusedForSize(new Accumulator(11), [START], callStart), 1);

  const textEnd = event({ case: "textEnd", value: { contentIndex: 0, textSignature: "sig-é" } }); // 6
  const hi = event({ case: "textDelta", value: { contentIndex: 0, delta: "hi" } });
  const signed = new Accumulator(8);
  for (const item of [START, TEXT_START, hi, textEnd]) signed.apply(item);
  assert.equal(signed.receivedBytes, 8);
  assert.equal(refusedForSize(new Accumulator(7), [START, TEXT_START, hi], textEnd), 3);
  const thinkingStart = event({ case: "thinkingStart", value: { contentIndex: 0 } });
  const thinkingEnd = event({ case: "thinkingEnd", value: { contentIndex: 0, thinkingSignature: "abcdef" } });
  assert.equal(refusedForSize(new Accumulator(5), [START, thinkingStart], thinkingEnd), 2);

  // Endless calls with 8 KiB ids and no arguments: each holds 8,195 bytes once ended, so the eighth
  // start passes 64 KiB.
  const long = "x".repeat(8192);
  const endless = new Accumulator(64 * 1024);
  const calls = Array.from({ length: 7 }, (_, contentIndex) => [
    event({ case: "toolcallStart", value: { contentIndex, id: long, name: "n" } }),
    event({ case: "toolcallEnd", value: { contentIndex, toolCall: { id: long, name: "n", argumentsJson: "{}" } } }),
  ]).flat();
  const eighth = event({ case: "toolcallStart", value: { contentIndex: 7, id: long, name: "n" } });
  assert.equal(refusedForSize(endless, [START, ...calls], eighth), 15);
  assert.equal(endless.receivedBytes, 7 * 8195);
});

test("size-limit counts what an ended tool call holds beyond the streamed one", { timeout: TEST_TIMEOUT }, () => {
  const opening = [
    START,
    event({ case: "toolcallStart", value: { contentIndex: 0, id: "c", name: "n" } }),
    event({ case: "toolcallDelta", value: { contentIndex: 0, delta: '{"a":1}' } }),
  ];
  // The call as it streamed (1 + 1 + 7 bytes) is not counted twice.
  const same = new Accumulator(9);
  const sameEnd = event({ case: "toolcallEnd", value: { toolCall: { id: "c", name: "n", argumentsJson: '{"a":1}' } } });
  for (const item of [...opening, sameEnd]) same.apply(item);
  assert.equal(same.receivedBytes, 9);
  // Beyond it: raw arguments (7), a signature (3) and a field the schema does not know (4 bytes).
  const more = create(ToolCallSchema, { id: "c", name: "n", argumentsJson: '{"a":1}', thoughtSignature: "sig" });
  more.rawArguments = '{"a":1}';
  more.$unknown = [{ no: 100, wireType: 2, data: new Uint8Array([1, 0x78]) }];
  const end = event({ case: "toolcallEnd", value: { toolCall: more } });
  const fits = new Accumulator(23);
  for (const item of [...opening, end]) fits.apply(item);
  assert.equal(fits.receivedBytes, 23);
  assert.equal(refusedForSize(new Accumulator(22), opening, end), 3);
});

test("a terminal event alone is a valid stream", { timeout: TEST_TIMEOUT }, () => {
  const failed = assistantMessage([], { stopReason: StopReason.ERROR, errorMessage: "socket reset" });
  const item = new Accumulator().apply(event({ case: "error", value: { reason: StopReason.ERROR, message: failed } }));
  assert.equal(item.partial, failed);
});

// --- live arguments and usage ---------------------------------------------------------------------

function argumentsAfter(deltas: readonly string[]): Array<[string | undefined, string | undefined]> {
  const accumulator = new Accumulator();
  accumulator.apply(START);
  accumulator.apply(CALL_START);
  return deltas.map((delta) => {
    accumulator.apply(event({ case: "toolcallDelta", value: { contentIndex: 0, delta } }));
    const streaming = callAt(accumulator.partial, 0);
    return [streaming.rawArguments, streaming.argumentsJson];
  });
}

test("while a tool call streams, its arguments so far are completed into an object", { timeout: TEST_TIMEOUT }, () => {
  assert.deepEqual(argumentsAfter(['{"path": "src/ma', 'in.ts", "li', 'mit": 12.', '5, "all": tr', "ue}"]), [
    ['{"path": "src/ma', '{"path": "src/ma"}'],
    ['{"path": "src/main.ts", "li', '{"path": "src/main.ts"}'],
    ['{"path": "src/main.ts", "limit": 12.', '{"path": "src/main.ts", "limit": 12}'],
    ['{"path": "src/main.ts", "limit": 12.5, "all": tr', '{"path": "src/main.ts", "limit": 12.5, "all": true}'],
    ['{"path": "src/main.ts", "limit": 12.5, "all": true}', '{"path": "src/main.ts", "limit": 12.5, "all": true}'],
  ]);
  // Text that cannot become an object shows as an empty one, and stays so.
  assert.deepEqual(
    argumentsAfter(["[1, ", '{"a": 1}']).map(([, completed]) => completed),
    ["{}", "{}"],
  );
});

test("the completion of 1 MB of arguments in 20-character deltas is the completion of the whole text", {
  timeout: TEST_TIMEOUT,
}, () => {
  // How long it takes is for `make bench`; that no delta copies the text before it is counted in
  // the next test.
  const rows = Array.from({ length: 40_000 }, (_, id) => ({ id, path: `src/file-${id}.ts`, size: id * 1.5 }));
  const text = JSON.stringify({ rows }).slice(0, 1_000_000);
  const deltas = Array.from({ length: Math.ceil(text.length / 20) }, (_, i) => text.slice(i * 20, i * 20 + 20));
  const accumulator = new Accumulator();
  accumulator.apply(START);
  accumulator.apply(CALL_START);
  for (const delta of deltas) accumulator.apply(event({ case: "toolcallDelta", value: { contentIndex: 0, delta } }));
  const completed = callAt(accumulator.partial, 0).argumentsJson;
  assert.equal(completed, completeJson(text));
  assert.equal(JSON.parse(completed).rows.length, 19_068); // the rows the first megabyte holds, the last one cut to {}
});

test("a tool-call delta copies none of the text received before it", { timeout: TEST_TIMEOUT }, () => {
  // Strings grow by appending without a copy; slicing the text so far at every delta would cost
  // time quadratic in the arguments. Count what is sliced while 10,000 deltas are applied.
  const text = JSON.stringify({ path: "notes.md", content: 'line \\ of "text"\n'.repeat(10_000), n: [1.5e3, true] });
  const deltas = Array.from({ length: Math.ceil(text.length / 20) }, (_, i) => text.slice(i * 20, i * 20 + 20));
  const events = deltas.map((delta) => event({ case: "toolcallDelta", value: { contentIndex: 0, delta } }));
  const accumulator = new Accumulator();
  accumulator.apply(START);
  accumulator.apply(CALL_START);
  let sliced = 0;
  const methods = ["slice", "substring", "substr"] as const;
  const originals = methods.map((name) => String.prototype[name]);
  methods.forEach((name, index) => {
    const original = originals[index] as (this: string, ...args: number[]) => string;
    (String.prototype as unknown as Record<string, unknown>)[name] = function (this: string, ...args: number[]) {
      const part = original.apply(this, args);
      sliced += part.length;
      return part;
    };
  });
  try {
    for (const item of events) accumulator.apply(item);
  } finally {
    methods.forEach((name, index) => {
      (String.prototype as unknown as Record<string, unknown>)[name] = originals[index];
    });
  }
  assert.ok(sliced <= text.length, `${sliced} characters sliced for ${text.length} received`);
  assert.equal(callAt(accumulator.partial, 0).argumentsJson, text);
});

test("an event that carries usage sets the partial's usage", { timeout: TEST_TIMEOUT }, () => {
  const accumulator = new Accumulator();
  const usage = (output: bigint) => create(UsageSchema, { input: 10n, output, totalTokens: 10n + output });
  const start = event({ case: "start", value: { header: assistantMessage([]) } });
  start.usage = usage(0n);
  accumulator.apply(start);
  assert.equal(accumulator.partial.usage?.output, 0n);
  accumulator.apply(TEXT_START);
  const delta = event({ case: "textDelta", value: { contentIndex: 0, delta: "hi" } });
  delta.usage = usage(7n);
  accumulator.apply(delta);
  assert.equal(accumulator.partial.usage?.totalTokens, 17n);
  accumulator.apply(TEXT_END); // no usage: the last one stays
  assert.equal(accumulator.partial.usage?.output, 7n);
  // The terminal message carries its own usage, whatever the event says.
  const final = assistantMessage([text("hi")]);
  final.usage = usage(9n);
  const terminal = done(final);
  terminal.usage = usage(1n);
  assert.equal(accumulator.apply(terminal).partial?.usage?.output, 9n);
});

/** The events of "Hello, world" in three deltas, with `digest` on the done event. */
function helloWorld(digest: Uint8Array): ModelEvent[] {
  const deltas = ["Hel", "lo, ", "world"].map((delta) =>
    event({ case: "textDelta", value: { contentIndex: 0, delta } }),
  );
  const terminal = done(assistantMessage([text("Hello, world")]));
  if (terminal.event.case === "done") terminal.event.value.contentSha256 = digest;
  return [START, TEXT_START, ...deltas, TEXT_END, terminal];
}

test("the digest is SHA-256 of the encoded content, as every runtime computes it", { timeout: TEST_TIMEOUT }, () => {
  // The digest the corpus gives for "Hello, world" (tests/conformance/resume.yaml).
  const hello = Buffer.from(contentSha256([text("Hello, world")])).toString("base64");
  assert.equal(hello, "4neC0P5vvmFOX7GfuEtvAtP92M6zjfvlFWg903GftrA=");
  assert.equal(contentSha256([]).length, 32);
  assert.notDeepEqual(contentSha256([text("Hello, world!")]), contentSha256([text("Hello, world")]));
});

test("a terminal event whose content_sha256 matches the content streamed ends the stream", {
  timeout: TEST_TIMEOUT,
}, () => {
  const accumulator = new Accumulator();
  const events = helloWorld(contentSha256([text("Hello, world")]));
  for (const item of events) accumulator.apply(item);
  assert.equal(textOf(accumulator.partial), "Hello, world");
  assert.equal(accumulator.partial.stopReason, StopReason.STOP);
  // Without a digest nothing is checked.
  const unsigned = new Accumulator();
  for (const item of helloWorld(new Uint8Array())) unsigned.apply(item);
  assert.equal(unsigned.partial.stopReason, StopReason.STOP);
});

test("a content_sha256 of other content breaks rule terminal-digest, keeping the partial", {
  timeout: TEST_TIMEOUT,
}, () => {
  const accumulator = new Accumulator();
  const events = helloWorld(contentSha256([text("Hello, world!")]));
  const error = refusal(events, accumulator);
  assert.deepEqual([error.eventIndex, error.rule, error.ruleId], [6, StreamRule.TERMINAL_DIGEST, "terminal-digest"]);
  // The partial is what the events built, not the terminal event's message.
  const terminal = events.at(-1)!.event;
  assert.ok(terminal.case === "done");
  assert.notEqual(accumulator.partial, terminal.value.message);
  assert.equal(textOf(accumulator.partial), "Hello, world");
});

test("the digest of a tool call cut short covers its raw text and its completion", { timeout: TEST_TIMEOUT }, () => {
  const delta = event({ case: "toolcallDelta", value: { contentIndex: 0, delta: '{"path":"RE' } });
  const streamed = create(ToolCallSchema, {
    id: "call_1",
    name: "read",
    argumentsJson: '{"path":"RE"}',
    rawArguments: '{"path":"RE',
  });
  const partial = create(AssistantContentSchema, { block: { case: "toolCall", value: streamed } });
  const failed = (digest: Uint8Array): ModelEvent => {
    const message = assistantMessage([partial], { stopReason: StopReason.ERROR, errorMessage: "overloaded" });
    return event({ case: "error", value: { reason: StopReason.ERROR, message, contentSha256: digest } });
  };
  const accumulator = new Accumulator();
  for (const item of [START, CALL_START, delta, failed(contentSha256([partial]))]) accumulator.apply(item);
  assert.equal(accumulator.partial.errorMessage, "overloaded");
  // The raw text alone, without the completion, is other content.
  const rawOnly = create(AssistantContentSchema, {
    block: { case: "toolCall", value: { id: "call_1", name: "read", rawArguments: '{"path":"RE' } },
  });
  assert.equal(refusal([START, CALL_START, delta, failed(contentSha256([rawOnly]))]).ruleId, "terminal-digest");
});
