// pi-JSON converts losslessly: real pi sessions, absent and unmodelled fields, events; bad input
// names the path of the bad value. (The corpus's pi_json cases pin the codec across runtimes.)

import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { test } from "node:test";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import {
  Accumulator,
  type AgentMessage,
  AgentMessageSchema,
  AgentContextSchema,
  type AssistantMessage,
  AssistantMessageSchema,
  CostSchema,
  PiJsonError,
  StopReason,
  type TranscriptEntry,
  TranscriptEntrySchema,
  UsageSchema,
  assistantToPi,
  contextFromPi,
  contextToPi,
  entryFromPi,
  entryToPi,
  eventFromPi,
  eventKind,
  eventToPi,
  isTerminal,
  messageFromPi,
  messageToPi,
  textOf,
} from "pi-proto";
import { TEST_TIMEOUT, assistantMessage, eventsOf, text, thinking, toolCall } from "./support/messages.js";

type Json = ReturnType<typeof messageToPi>;

const FIXTURES = fileURLToPath(new URL("../../tests/fixtures/", import.meta.url));
const SESSION = `${FIXTURES}pi-sessions/before-compaction.jsonl`;
const OLDER_SHAPES = `${FIXTURES}older-pi-shapes.jsonl`;
const THINKING = `${FIXTURES}pi-sessions/assistant-message-with-thinking-code.json`;

function throughTheWire(message: AgentMessage): AgentMessage {
  return fromBinary(AgentMessageSchema, toBinary(AgentMessageSchema, message));
}

function entryThroughTheWire(entry: TranscriptEntry): TranscriptEntry {
  return fromBinary(TranscriptEntrySchema, toBinary(TranscriptEntrySchema, entry));
}

function roundTrip(value: unknown): Json {
  return messageToPi(throughTheWire(messageFromPi(value)));
}

async function lines(path: string): Promise<string[]> {
  return (await readFile(path, "utf8")).split("\n").filter((line) => line.trim());
}

/** Each line read, sent through the wire and written back; returns how many entries of each kind. */
async function sameText(path: string): Promise<Record<string, number>> {
  const kinds: Record<string, number> = {};
  for (const [index, line] of (await lines(path)).entries()) {
    const entry = entryThroughTheWire(entryFromPi(JSON.parse(line), `line ${index + 1}`));
    const body = entry.entry;
    const kind = body.case === "message" ? (body.value.role.case ?? "none") : (body.case ?? "none");
    kinds[kind] = (kinds[kind] ?? 0) + 1;
    assert.equal(JSON.stringify(entryToPi(entry)), line, `line ${index + 1} of ${path} changed`);
  }
  return kinds;
}

test("the fixtures are present", { timeout: TEST_TIMEOUT }, async () => {
  assert.ok((await readFile(SESSION)).length > 1_000_000);
  assert.ok((await readFile(THINKING)).length > 0);
});

test("every line of a real session converts back to the same text", { timeout: TEST_TIMEOUT }, async () => {
  const kinds = await sameText(SESSION);
  assert.deepStrictEqual(kinds, { user: 55, assistant: 484, toolResult: 448, custom: 3, sessionEntry: 13 });
});

test("older pi's lines convert back to the same text", { timeout: TEST_TIMEOUT }, async () => {
  const kinds = await sameText(OLDER_SHAPES);
  assert.deepStrictEqual(kinds, { sessionEntry: 1, user: 1, assistant: 3, toolResult: 1 });
});

test("the thinking fixture converts back unchanged", { timeout: TEST_TIMEOUT }, async () => {
  const original = JSON.parse(await readFile(THINKING, "utf8")) as unknown;
  const message = messageFromPi(original);
  assert.equal(message.role.case, "assistant");
  const first = message.role.value.content[0]!.block;
  assert.equal(first.case, "thinking");
  assert.ok(first.value.thinkingSignature);
  assert.deepStrictEqual(roundTrip(original), original);
});

// --- what the round trip keeps -----------------------------------------------------------------------

function assistant(fields: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    role: "assistant",
    content: [{ type: "text", text: "hi" }],
    api: "anthropic-messages",
    provider: "anthropic",
    model: "m",
    usage: {
      input: 1,
      output: 2,
      cacheRead: 0,
      cacheWrite: 0,
      totalTokens: 3,
      cost: { input: 0, output: 0.5, cacheRead: 1.0, cacheWrite: 2, total: 1.5 },
    },
    stopReason: "stop",
    timestamp: 1765233665294,
    ...fields,
  };
}

test("numbers survive; integral costs are written without a fraction", { timeout: TEST_TIMEOUT }, () => {
  const original = assistant();
  const back = roundTrip(original);
  assert.deepStrictEqual(back, original);
  const usage = back["usage"] as Record<string, unknown>;
  assert.equal(JSON.stringify(usage["cost"]), '{"input":0,"output":0.5,"cacheRead":1,"cacheWrite":2,"total":1.5}');
  // JSON.parse cannot tell 1.0 from 1, so nothing is kept in extraJson for it.
  const message = messageFromPi(original);
  assert.equal((message.role.value as AssistantMessage).usage?.cost?.extraJson, "");
  assert.equal((message.role.value as AssistantMessage).timestamp, 1765233665294n);
});

test("an extraJson that holds a float written 1.0 is written back as JavaScript writes it", { timeout: TEST_TIMEOUT }, () => {
  const cost = create(CostSchema, { output: 0.5, cacheRead: 1, extraJson: '{"cacheRead":1.0}' });
  const message = assistantMessage([text("hi")], { timestamp: 5n });
  message.usage = create(UsageSchema, { cost });
  const written = assistantToPi(message);
  const usage = written["usage"] as Record<string, unknown>;
  assert.equal(JSON.stringify(usage["cost"]), '{"input":0,"output":0.5,"cacheRead":1,"cacheWrite":0,"total":0}');
});

test("int64 fields: safe integers are read, and only safe integers are written", { timeout: TEST_TIMEOUT }, () => {
  const big = 2 ** 60; // within int64, but beyond what a JavaScript number holds exactly
  assert.throws(
    () => messageFromPi(assistant({ timestamp: big })),
    (error) => error instanceof PiJsonError && error.path === "timestamp" && /beyond 2\^53/.test(error.detail),
  );
  const read = messageFromPi(assistant({ timestamp: Number.MAX_SAFE_INTEGER, usage: { input: -5 } }));
  const message = read.role.value as AssistantMessage;
  assert.equal(message.timestamp, 9007199254740991n);
  assert.equal(message.usage?.input, -5n);
  message.timestamp = 2n ** 60n;
  assert.throws(
    () => assistantToPi(message),
    (error) => error instanceof PiJsonError && error.path === "AssistantMessage.timestamp",
  );
});

test("absent optional fields stay absent and present ones stay", { timeout: TEST_TIMEOUT }, () => {
  assert.ok(!("errorMessage" in roundTrip(assistant())));
  assert.equal(roundTrip(assistant({ stopReason: "error", errorMessage: "" }))["errorMessage"], "");
  const noDetails = { role: "toolResult", toolCallId: "c", toolName: "t", content: [], isError: false, timestamp: 1 };
  assert.ok(!("details" in roundTrip(noDetails)));
  for (const details of [null, {}, [1, 2.5], "x", 0]) {
    const withDetails = { ...noDetails, details };
    assert.deepStrictEqual(roundTrip(withDetails), withDetails);
  }
  // An empty text block is a block like any other.
  const emptyText = { ...noDetails, content: [{ type: "text", text: "" }] };
  assert.deepStrictEqual(roundTrip(emptyText), emptyText);
});

test("user content given as a string stays a string", { timeout: TEST_TIMEOUT }, () => {
  const original = { role: "user", content: "看看 README", timestamp: 5 };
  const message = messageFromPi(original);
  assert.equal(message.role.case, "user");
  assert.equal(message.role.value.stringContent, true);
  assert.equal(textOf(message), "看看 README");
  assert.deepStrictEqual(roundTrip(original), original);
  const listed = { role: "user", content: [{ type: "text", text: "看看 README" }], timestamp: 5 };
  assert.deepStrictEqual(roundTrip(listed), listed);
});

test("unmodelled fields survive at every level", { timeout: TEST_TIMEOUT }, () => {
  const original = assistant({
    responseId: "resp_1",
    content: [
      { type: "toolCall", id: "c1", name: "edit", arguments: { n: 1, f: 1.5 }, partialJson: '{"n": 1' },
      { type: "thinking", thinking: "", thinkingSignature: "sig", redacted: true, future: [1] },
      { type: "text", text: "t", textSignature: "s", annotations: [] },
    ],
  });
  original["usage"] = { ...(original["usage"] as object), reasoning: 7 };
  const message = messageFromPi(original);
  const call = (message.role.value as AssistantMessage).content[0]!.block;
  assert.equal(call.case, "toolCall");
  assert.deepStrictEqual(JSON.parse(call.value.extraJson), { partialJson: '{"n": 1' });
  assert.deepStrictEqual(roundTrip(original), original);
  // A key named __proto__ is data like any other: kept, and written back as an own key.
  const odd = JSON.parse('{"role":"user","content":"x","timestamp":1,"__proto__":{"polluted":true}}') as unknown;
  assert.deepStrictEqual(roundTrip(odd), odd);
  assert.equal(({} as Record<string, unknown>)["polluted"], undefined);
});

test("roles and entries the schema does not model are kept", { timeout: TEST_TIMEOUT }, () => {
  const bash = { role: "bashExecution", command: "ls", output: "a\n", exitCode: 0, cancelled: false, timestamp: 9 };
  const message = messageFromPi(bash);
  assert.equal(message.role.case, "custom");
  assert.equal(message.role.value.role, "bashExecution");
  assert.equal(textOf(message), "");
  assert.deepStrictEqual(roundTrip(bash), bash);

  const entry = { type: "model_change", timestamp: "2025-12-08T23:58:22.057Z", provider: "x", modelId: "y" };
  const kept = entryThroughTheWire(entryFromPi(entry));
  assert.equal(kept.entry.case, "sessionEntry");
  assert.equal(kept.entry.value.type, "model_change");
  assert.deepStrictEqual(entryToPi(kept), entry);

  const wrapped = { type: "message", timestamp: "2025-12-08T22:41:05.306Z", id: "e1", message: bash };
  const unwrapped = entryThroughTheWire(entryFromPi(wrapped));
  assert.equal(unwrapped.entry.case, "message");
  assert.equal(unwrapped.sessionJson, '{"type":"message","timestamp":"2025-12-08T22:41:05.306Z","id":"e1"}');
  assert.deepStrictEqual(entryToPi(unwrapped), wrapped);
  // A bare message is an entry without an envelope.
  const bare = entryFromPi(bash);
  assert.equal(bare.entry.case, "message");
  assert.equal(bare.sessionJson, "");
});

test("contexts convert back unchanged", { timeout: TEST_TIMEOUT }, () => {
  const tool = { name: "read", description: "Read a file.", parameters: { type: "object", properties: {} } };
  const originals = [
    { systemPrompt: "回答前先读取相关文件。", messages: [assistant()], tools: [tool] },
    { messages: [], tools: [] },
    { messages: [{ role: "user", content: "hi", timestamp: 1 }] },
  ];
  for (const original of originals) {
    const context = fromBinary(AgentContextSchema, toBinary(AgentContextSchema, contextFromPi(original)));
    assert.deepStrictEqual(contextToPi(context), original);
  }
  assert.equal(contextFromPi({ messages: [], tools: [] }).extraJson, '{"tools":[]}');
});

test("keys the writer writes but the object lacked stay absent", { timeout: TEST_TIMEOUT }, () => {
  const seed = {
    role: "assistant",
    content: [{ type: "text", text: "我先读取项目说明。" }, { type: "toolCall", id: "c", name: "ls" }],
    provider: "scripted",
    model: "scripted-v1",
    usage: { input: 18, output: 12, totalTokens: 30 },
    timestamp: 1010,
  };
  const message = throughTheWire(messageFromPi(seed)).role.value as AssistantMessage;
  assert.equal(message.api, "");
  assert.equal(message.extraJson, '{"$absent":["api"]}');
  assert.equal(message.usage?.extraJson, '{"$absent":["cacheRead","cacheWrite"]}');
  const call = message.content[1]!.block;
  assert.ok(call.case === "toolCall" && call.value.argumentsJson === "{}");
  assert.equal(call.value.extraJson, '{"$absent":["arguments"]}');
  assert.equal(message.stopReason, StopReason.UNSPECIFIED); // absent, and written only when set: no marker
  assert.equal(JSON.stringify(assistantToPi(message)), JSON.stringify(seed));

  const result = { role: "toolResult", toolCallId: "c", content: [], timestamp: 1 };
  const read = messageFromPi(result);
  assert.equal((read.role.value as { extraJson: string }).extraJson, '{"$absent":["toolName","isError"]}');
  assert.equal(JSON.stringify(messageToPi(read)), JSON.stringify(result));

  const tool = { name: "ls" };
  const context = contextFromPi({ messages: [], tools: [tool] });
  assert.equal(context.tools[0]!.extraJson, '{"$absent":["description","parameters"]}');
  assert.equal(JSON.stringify(contextToPi(context)), '{"messages":[],"tools":[{"name":"ls"}]}');
});

test("the assistant's keys are written in pi's order, errorMessage after the timestamp", { timeout: TEST_TIMEOUT }, () => {
  const message = assistantMessage([text("partial")], { stopReason: StopReason.ERROR, timestamp: 5n });
  message.errorMessage = "socket reset";
  message.usage = create(UsageSchema, { input: 1n });
  message.extraJson = '{"responseId":"r1"}';
  const keys = Object.keys(assistantToPi(message));
  const order = ["role", "content", "api", "provider", "model", "usage", "stopReason", "timestamp", "errorMessage"];
  assert.deepStrictEqual(keys, [...order, "responseId"]);
});

// --- errors: the path of the bad value ----------------------------------------------------------------

const ASSISTANT = JSON.stringify(assistant());
const withTimestamp = (raw: string): string => ASSISTANT.replace('"timestamp":1765233665294', `"timestamp":${raw}`);
const image = (data: string): string =>
  JSON.stringify({ role: "user", content: [{ type: "image", data, mimeType: "x" }], timestamp: 1 });
const PARTIAL = JSON.stringify(assistantToPi(assistantMessage([text("abc")])));

// [reader, JSON text of the input, the path of the bad value from the object read]
const BAD: Array<["message" | "entry" | "event", string, string]> = [
  ["message", '{"role":"assistant","content":[],"stopReason":"finished"}', "stopReason"],
  ["message", withTimestamp('"now"'), "timestamp"],
  ["message", withTimestamp("9223372036854775808"), "timestamp"],
  ["message", withTimestamp("4e-05"), "timestamp"],
  ["message", withTimestamp("true"), "timestamp"],
  ["message", '{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"video"}]}', "content[1].type"],
  ["message", '{"role":"assistant","content":["text"]}', "content[0]"],
  ["message", '{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"n","arguments":[1,2]}]}', "content[0].arguments"],
  ["message", '{"role":"assistant","content":[{"type":"thinking","thinking":"t","redacted":"yes"}]}', "content[0].redacted"],
  ["message", '{"role":"assistant","content":[],"usage":{"cost":{"input":"1"}}}', "usage.cost.input"],
  ["message", '{"role":"assistant","content":{}}', "content"],
  ["message", '{"role":"assistant"}', "content"],
  ["message", image("QQ"), "content[0].data"],
  ["message", image("QR=="), "content[0].data"],
  ["message", image("Q!=="), "content[0].data"],
  ["message", image("QQ==QQ=="), "content[0].data"],
  ["message", '{"role":"user","content":[{"type":"audio"}]}', "content[0].type"],
  ["message", '{"role":"toolResult","toolCallId":"c","content":[],"isError":"no"}', "isError"],
  ["message", '{"role":"toolResult","content":[]}', "toolCallId"],
  ["message", '{"content":[]}', "role"],
  ["message", "[]", ""],
  ["entry", '{"content":"hi"}', ""],
  ["entry", '{"type":"message","message":{"role":"user","content":[{"type":"text"}],"timestamp":1}}', "message.content[0].text"],
  ["event", '{"type":"text_delta","contentIndex":0,"delta":"x"}', "partial"],
  ["event", `{"type":"text_end","contentIndex":0,"content":"abd","partial":${PARTIAL}}`, "content"],
  ["event", `{"type":"text_delta","contentIndex":3,"delta":"x","partial":${PARTIAL}}`, "contentIndex"],
  ["event", `{"type":"text_blink","partial":${PARTIAL}}`, "type"],
  ["event", `{"type":"start","partial":${PARTIAL},"extra":1}`, "extra"],
  ["event", `{"type":"done","reason":"finished","message":${PARTIAL}}`, "reason"],
  ["event", '{"type":"done","reason":"stop"}', "message"],
];

const READERS = { message: messageFromPi, entry: entryFromPi, event: eventFromPi };

test("bad pi-JSON names the path of the bad value", { timeout: TEST_TIMEOUT }, () => {
  for (const [reader, input, path] of BAD) {
    assert.throws(
      () => READERS[reader](JSON.parse(input)),
      (error) => error instanceof PiJsonError && error.path === path && error.detail.length > 0,
      `${input} should fail at "${path}"`,
    );
  }
  // A reader given where the value sits reports paths from there.
  assert.throws(
    () => messageFromPi({ role: "user", content: [{ type: "audio" }] }, "messages[3]"),
    (error) => error instanceof PiJsonError && error.path === "messages[3].content[0].type",
  );
});

// --- events ------------------------------------------------------------------------------------------

function sample(): AssistantMessage {
  const message = assistantMessage(
    [
      thinking("让我想想 🤔", "sig-Ω", false),
      text("我先读取项目说明。", '{"id":"msg_1"}'),
      // Compact, as pi-JSON holds the arguments as an object: the partial's completion survives.
      toolCall("call_1", "read", { path: "README.md" }, { rawArguments: '{"path":"README.md"}', thoughtSignature: "c2ln" }),
    ],
    { stopReason: StopReason.TOOL_USE, timestamp: 1765233665294n },
  );
  const cost = { input: 0.013875000000000002 };
  message.usage = create(UsageSchema, { input: 2775n, output: 141n, totalTokens: 2916n, cost });
  return message;
}

test("events convert to pi events and back", { timeout: TEST_TIMEOUT }, () => {
  const accumulator = new Accumulator();
  const events = eventsOf(sample(), 5);
  assert.ok(events.length > 12);
  for (const event of events) {
    accumulator.apply(event);
    const piEvent = JSON.parse(JSON.stringify(eventToPi(event))) as Json; // a snapshot, as a JSON line would be
    assert.equal(piEvent["type"], eventKind(event));
    const back = eventFromPi(piEvent);
    assert.equal(eventKind(back), eventKind(event));
    if (!isTerminal(back)) {
      // pi's non-terminal events carry the partial; ours keeps it
      assert.ok(back.partial !== undefined && event.partial !== undefined);
      const [ours, original] = [back.partial, event.partial].map((partial) => toBinary(AssistantMessageSchema, partial));
      assert.deepStrictEqual(ours, original);
    }
    assert.deepStrictEqual(eventToPi(back), piEvent);
  }
});

test("pi events need their partial", { timeout: TEST_TIMEOUT }, () => {
  const delta = eventsOf(assistantMessage([text("x")]))[2]!;
  assert.equal(eventKind(delta), "text_delta");
  assert.throws(() => eventToPi(delta), (error) => error instanceof PiJsonError && error.path === "text_delta");
  const partial = assistantToPi(assistantMessage([text("abc")], { timestamp: 1n }));
  const wrong = { type: "text_end", contentIndex: 0, content: "abd", partial };
  assert.throws(() => eventFromPi(wrong), /differs from block 0/);
  const end = eventFromPi({ type: "text_end", contentIndex: 0, content: "abc", partial });
  assert.equal(end.event.case, "textEnd");
  assert.equal(textOf(end.partial!), "abc");
});
