// pi-JSON converts losslessly: real pi sessions, absent and unmodelled fields, events; bad input
// names the path of the bad value. (The corpus's pi_json cases pin the codec across runtimes.)

import assert from "node:assert/strict";
import { readdir, readFile } from "node:fs/promises";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import {
  Accumulator,
  AgentContextSchema,
  type AgentMessage,
  AgentMessageSchema,
  type AssistantMessage,
  AssistantMessageSchema,
  assistantFromPi,
  assistantToPi,
  CostSchema,
  contextFromPi,
  contextToPi,
  DiagnosticSchema,
  entryFromPi,
  entryToPi,
  eventFromPi,
  eventKind,
  eventToPi,
  GrammarSamplingSchema,
  isTerminal,
  JsonSchemaSamplingSchema,
  ModelEventSchema,
  ModelThinkingLevel,
  messageFromPi,
  messageToPi,
  NestedCallStatus,
  NestedToolCallSchema,
  NestedToolCallsSchema,
  PiJsonError,
  StopReason,
  Strictness,
  type SystemMessage,
  SystemMessageSchema,
  type ToolResultMessage,
  ToolResultMessageSchema,
  type TranscriptEntry,
  TranscriptEntrySchema,
  textOf,
  UsageSchema,
  type UserMessage,
  UserMessageSchema,
} from "pi-proto";
import { assistantMessage, eventsOf, TEST_TIMEOUT, text, thinking, toolCall } from "./support/messages.js";

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

test("every session file pi 1.6 wrote converts back to the same text", { timeout: TEST_TIMEOUT }, async () => {
  const folder = `${FIXTURES}pi-1.6-sessions/`;
  const files = (await readdir(folder)).filter((name) => name.endsWith(".jsonl") && name !== "events-json-mode.jsonl");
  assert.ok(files.length >= 14);
  for (const name of files) await sameText(folder + name);
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
  const usage = back.usage as Record<string, unknown>;
  assert.equal(JSON.stringify(usage.cost), '{"input":0,"output":0.5,"cacheRead":1,"cacheWrite":2,"total":1.5}');
  // JSON.parse cannot tell 1.0 from 1, so nothing is kept in extraJson for it.
  const message = messageFromPi(original);
  assert.equal((message.role.value as AssistantMessage).usage?.cost?.extraJson, "");
  assert.equal((message.role.value as AssistantMessage).timestamp, 1765233665294n);
});

test("an extraJson that holds a float written 1.0 is written back as JavaScript writes it", {
  timeout: TEST_TIMEOUT,
}, () => {
  const amounts = { input: 0, output: 0.5, cacheRead: 1, cacheWrite: 0, total: 0 };
  const cost = create(CostSchema, { ...amounts, extraJson: '{"discount":1.0}' });
  const message = assistantMessage([text("hi")], { timestamp: 5n });
  message.usage = create(UsageSchema, { cost });
  const written = assistantToPi(message);
  const usage = written.usage as Record<string, unknown>;
  const expected = '{"input":0,"output":0.5,"cacheRead":1,"cacheWrite":0,"total":0,"discount":1}';
  assert.equal(JSON.stringify(usage.cost), expected);
});

test("int64 fields: integers are read as JSON.parse reads them, and written only when a double holds them", {
  timeout: TEST_TIMEOUT,
}, () => {
  // Beyond 2^53, the double JSON.parse gives: 2^53 + 1 is read as 2^53, as every runtime reads it.
  const rounded = messageFromPi(JSON.parse('{"role":"user","content":"x","timestamp":9007199254740993}'));
  assert.equal((rounded.role.value as UserMessage).timestamp, 9007199254740992n);
  assert.throws(
    () => messageFromPi(assistant({ timestamp: 2 ** 63 })),
    (error) => error instanceof PiJsonError && error.path === "timestamp",
  );
  const read = messageFromPi(assistant({ timestamp: Number.MAX_SAFE_INTEGER, usage: { input: -5 } }));
  const message = read.role.value as AssistantMessage;
  assert.equal(message.timestamp, 9007199254740991n);
  assert.equal(message.usage?.input, -5n);
  message.timestamp = 2n ** 60n; // a double
  assert.equal(assistantToPi(message).timestamp, 2 ** 60);
  message.timestamp = 2n ** 60n + 1n; // no double
  assert.throws(
    () => assistantToPi(message),
    (error) => error instanceof PiJsonError && error.path === "AssistantMessage.timestamp",
  );
});

test("absent optional fields stay absent and present ones stay", { timeout: TEST_TIMEOUT }, () => {
  assert.ok(!("errorMessage" in roundTrip(assistant())));
  assert.equal(roundTrip(assistant({ stopReason: "error", errorMessage: "" })).errorMessage, "");
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
  original.usage = { ...(original.usage as object), reasoning: 7 };
  const message = messageFromPi(original);
  const call = (message.role.value as AssistantMessage).content[0]!.block;
  assert.equal(call.case, "toolCall");
  assert.deepStrictEqual(JSON.parse(call.value.extraJson), { partialJson: '{"n": 1' });
  assert.deepStrictEqual(roundTrip(original), original);
  // A key named __proto__ is data like any other: kept, and written back as an own key.
  const odd = JSON.parse('{"role":"user","content":"x","timestamp":1,"__proto__":{"polluted":true}}') as unknown;
  assert.deepStrictEqual(roundTrip(odd), odd);
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
});

test("roles and entries the schema does not model are kept", { timeout: TEST_TIMEOUT }, () => {
  const bash = { role: "bashExecution", command: "ls", output: "a\n", exitCode: 0, cancelled: false, timestamp: 9 };
  const message = messageFromPi(bash);
  assert.equal(message.role.case, "custom");
  assert.equal(message.role.value.role, "bashExecution");
  assert.equal(textOf(message), "");
  assert.deepStrictEqual(roundTrip(bash), bash);

  const entry = { type: "bookmark", timestamp: "2025-12-08T23:58:22.057Z", note: "x", weight: 2 };
  const kept = entryThroughTheWire(entryFromPi(entry));
  assert.equal(kept.entry.case, "sessionEntry");
  assert.equal(kept.entry.value.type, "bookmark");
  assert.equal(kept.entry.value.body.case, undefined);
  assert.equal(kept.entry.value.fieldsJson, '{"note":"x","weight":2}');
  assert.deepStrictEqual(entryToPi(kept), entry);

  // A message entry's envelope is typed; session_json keeps only the order it came in.
  const wrapped = { type: "message", timestamp: "2025-12-08T22:41:05.306Z", id: "e1", message: bash };
  const unwrapped = entryThroughTheWire(entryFromPi(wrapped));
  assert.equal(unwrapped.entry.case, "message");
  assert.equal(unwrapped.id, "e1");
  assert.equal(unwrapped.timestamp, "2025-12-08T22:41:05.306Z");
  assert.equal(unwrapped.parent.case, undefined);
  assert.equal(unwrapped.sessionJson, '{"$order":["type","timestamp","id","message"]}');
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

test("a key the object lacked leaves its field unset, and stays absent", { timeout: TEST_TIMEOUT }, () => {
  const seed = {
    role: "assistant",
    content: [
      { type: "text", text: "我先读取项目说明。" },
      { type: "toolCall", id: "c", name: "ls" },
    ],
    provider: "scripted",
    model: "scripted-v1",
    usage: { input: 18, output: 12, totalTokens: 30 },
    timestamp: 1010,
  };
  const message = throughTheWire(messageFromPi(seed)).role.value as AssistantMessage;
  assert.deepStrictEqual([message.api, message.extraJson], [undefined, ""]);
  assert.deepStrictEqual(
    [message.usage?.cacheRead, message.usage?.cacheWrite, message.usage?.extraJson],
    [undefined, undefined, ""],
  );
  const call = message.content[1]!.block;
  assert.ok(call.case === "toolCall" && call.value.argumentsJson === undefined && call.value.extraJson === "");
  assert.equal(message.stopReason, StopReason.UNSPECIFIED); // absent, and written only when set
  assert.equal(JSON.stringify(assistantToPi(message)), JSON.stringify(seed));
  // Set, a field's key is written in its place.
  message.api = "scripted";
  assert.deepStrictEqual(Object.keys(assistantToPi(message)).slice(0, 4), ["role", "content", "api", "provider"]);

  const result = { role: "toolResult", toolCallId: "c", content: [], timestamp: 1 };
  const read = messageFromPi(result).role.value as ToolResultMessage;
  assert.deepStrictEqual([read.toolName, read.isError, read.extraJson], [undefined, undefined, ""]);
  assert.equal(JSON.stringify(messageToPi(read)), JSON.stringify(result));

  const context = contextFromPi({ messages: [], tools: [{ name: "ls" }] });
  const [tool] = context.tools;
  assert.deepStrictEqual([tool?.description, tool?.parametersJson, tool?.extraJson], [undefined, undefined, ""]);
  assert.equal(JSON.stringify(contextToPi(context)), '{"messages":[],"tools":[{"name":"ls"}]}');
});

test("the assistant's keys are written in pi's order, errorMessage after the timestamp", {
  timeout: TEST_TIMEOUT,
}, () => {
  const message = assistantMessage([text("partial")], { stopReason: StopReason.ERROR, timestamp: 5n });
  message.errorMessage = "socket reset";
  message.usage = create(UsageSchema, { input: 1n });
  message.extraJson = '{"serviceTier":"priority"}';
  const keys = Object.keys(assistantToPi(message));
  const order = ["role", "content", "api", "provider", "model", "usage", "stopReason", "timestamp", "errorMessage"];
  assert.deepStrictEqual(keys, [...order, "serviceTier"]);
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
  [
    "message",
    '{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"n","arguments":[1,2]}]}',
    "content[0].arguments",
  ],
  [
    "message",
    '{"role":"assistant","content":[{"type":"thinking","thinking":"t","redacted":"yes"}]}',
    "content[0].redacted",
  ],
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
  [
    "entry",
    '{"type":"message","message":{"role":"user","content":[{"type":"text"}],"timestamp":1}}',
    "message.content[0].text",
  ],
  ["event", '{"type":"text_delta","contentIndex":0,"delta":"x","partialJson":"{"}', "partialJson"],
  ["event", '{"type":"toolcall_start","contentIndex":0,"id":"c"}', "toolName"],
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
      toolCall(
        "call_1",
        "read",
        { path: "README.md" },
        { rawArguments: '{"path":"README.md"}', thoughtSignature: "c2ln" },
      ),
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
    assert.equal(piEvent.type, eventKind(event));
    const back = eventFromPi(piEvent);
    assert.equal(eventKind(back), eventKind(event));
    if (!isTerminal(back)) {
      // pi's non-terminal events carry the partial; ours keeps it
      assert.ok(back.partial !== undefined && event.partial !== undefined);
      const [ours, original] = [back.partial, event.partial].map((partial) =>
        toBinary(AssistantMessageSchema, partial),
      );
      assert.deepStrictEqual(ours, original);
    }
    assert.deepStrictEqual(eventToPi(back), piEvent);
  }
});

test("pi 1.6's delta-only events read and write back byte for byte", { timeout: TEST_TIMEOUT }, async () => {
  // pi's json mode: each message_update carries an AssistantMessageEvent without `partial`.
  let accumulator = new Accumulator();
  let updates = 0;
  for (const line of await lines(`${FIXTURES}pi-1.6-sessions/events-json-mode.jsonl`)) {
    const event = JSON.parse(line) as { type: string; message?: { role: string }; assistantMessageEvent?: unknown };
    if (event.type === "message_start" && event.message?.role === "assistant") {
      accumulator = new Accumulator();
      accumulator.apply(
        create(ModelEventSchema, { event: { case: "start", value: { header: assistantFromPi(event.message) } } }),
      );
    }
    if (event.type === "message_update") {
      const modelEvent = eventFromPi(event.assistantMessageEvent);
      accumulator.apply(modelEvent);
      assert.equal(
        JSON.stringify(eventToPi(modelEvent, { deltaOnly: true })),
        JSON.stringify(event.assistantMessageEvent),
      );
      updates += 1;
    }
  }
  assert.equal(updates, 25);
  assert.equal(textOf(accumulator.partial), "README 的标题就是项目名：tiny-pi。");
});

test("pi events need their partial", { timeout: TEST_TIMEOUT }, () => {
  const delta = eventsOf(assistantMessage([text("x")]))[2]!;
  assert.equal(eventKind(delta), "text_delta");
  assert.throws(
    () => eventToPi(delta),
    (error) => error instanceof PiJsonError && error.path === "text_delta",
  );
  const partial = assistantToPi(assistantMessage([text("abc")], { timestamp: 1n }));
  const wrong = { type: "text_end", contentIndex: 0, content: "abd", partial };
  assert.throws(() => eventFromPi(wrong), /differs from block 0/);
  const end = eventFromPi({ type: "text_end", contentIndex: 0, content: "abc", partial });
  assert.equal(end.event.case, "textEnd");
  assert.equal(textOf(end.partial!), "abc");
});

// --- pi 1.6: system messages, and the fields pi 1.6 adds ----------------------------------------------

const READ_TOOL = { name: "read", description: "Read a file.", parameters: { type: "object", properties: {} } };
const SYSTEM = {
  role: "system",
  content: "You are pi, a coding agent.",
  sections: { "<environment>": "<environment>cwd: /repo</environment>", guidelines: "## Guidelines", old: null },
  timestamp: 1765233660000, // before the tools, as pi's agent loop writes them
  toolsAdded: [
    { ...READ_TOOL, constrainedSampling: { type: "json_schema", strict: "require" } },
    { ...READ_TOOL, name: "bash", constrainedSampling: false },
    { ...READ_TOOL, name: "patch", constrainedSampling: { type: "grammar", variants: { openai_lark: "s" } } },
  ],
  toolsRemoved: [{ name: "grep" }],
};
const USAGE_16 = {
  input: 1203,
  output: 41,
  cacheRead: 5000,
  cacheWrite: 300,
  reasoning: 0,
  totalTokens: 6544,
  cost: {
    input: 0.003609,
    output: 0.000615,
    cacheRead: 0.0015,
    cacheWrite: 0,
    total: 0.005724,
    totalFromProvider: true,
  },
  cacheWrite1h: 100,
};
const HANDLE = { provider: "openai", modelId: "gpt-5", api: "openai-responses", id: "resp_1" };
const { role, content, api, provider, model } = assistant();
const ASSISTANT_16 = {
  role,
  content,
  api,
  provider,
  model,
  usage: USAGE_16,
  stopReason: "deferred",
  deferred: { ...HANDLE, expiresAt: 1765320000000, pollAfterMs: 2000, data: { row: 3 } },
  timestamp: 1765233665294,
  providerThinkingLevel: "high",
  responseId: "msg_01",
  responseModel: "claude-sonnet-4-5-20250929",
  rawStopReason: "end_turn",
  endTurn: false,
  errorMessage: "",
  diagnostics: [
    {
      type: "provider_transport_failure",
      timestamp: 1765233665300,
      error: { name: "Error", message: "socket hang up", stack: "Error: ...", code: "ECONNRESET" },
      details: { attempt: 1 },
    },
    { type: "overloaded", timestamp: 1765233665400, error: { message: "Overloaded", code: 529 } },
  ],
  durationMs: 0,
  thinkingLevel: "off",
};
const TOOL_RESULT_16 = {
  role: "toolResult",
  toolCallId: "toolu_01",
  toolName: "codemode",
  content: [{ type: "text", text: "3 files" }],
  details: { files: 3 },
  usage: { input: 50, output: 10, cacheRead: 0, cacheWrite: 0, totalTokens: 60 },
  nestedCalls: {
    calls: [
      { id: "n1", name: "read", arguments: { path: "a.ts" }, status: "ok", durationMs: 4 },
      { id: "n2", name: "bash", argumentsBytes: 70000, status: "error", durationMs: 0, error: "exit 1" },
      { id: "n3", name: "grep", arguments: {}, status: "unfinished" },
    ],
    complete: false,
  },
  isError: false,
  durationMs: 130,
  timestamp: 1765233666000,
};

/** The text written back after reading `value` and sending it through the wire. */
function textRoundTrip(value: unknown): string {
  return JSON.stringify(roundTrip(value));
}

test("every field pi 1.6 adds converts back to the same text", { timeout: TEST_TIMEOUT }, () => {
  for (const original of [SYSTEM, ASSISTANT_16, TOOL_RESULT_16]) {
    assert.equal(textRoundTrip(original), JSON.stringify(original));
  }
});

test("pi 1.6's fields are modelled, not kept as extras", { timeout: TEST_TIMEOUT }, () => {
  const read = throughTheWire(messageFromPi(ASSISTANT_16));
  assert.equal(read.role.case, "assistant");
  const message = read.role.value as AssistantMessage;
  assert.equal(message.extraJson, "");
  assert.equal(message.stopReason, StopReason.DEFERRED);
  assert.equal(message.thinkingLevel, ModelThinkingLevel.OFF);
  assert.deepStrictEqual(
    [message.responseId, message.responseModel, message.providerThinkingLevel, message.rawStopReason],
    ["msg_01", "claude-sonnet-4-5-20250929", "high", "end_turn"],
  );
  assert.deepStrictEqual([message.endTurn, message.errorMessage, message.durationMs], [false, "", 0n]);
  assert.deepStrictEqual(
    [message.deferred?.modelId, message.deferred?.expiresAt, message.deferred?.pollAfterMs, message.deferred?.dataJson],
    ["gpt-5", 1765320000000n, 2000n, '{"row":3}'],
  );
  const [first, second] = message.diagnostics;
  assert.deepStrictEqual(first?.error?.code, { case: "codeText", value: "ECONNRESET" });
  assert.equal(first?.detailsJson, '{"attempt":1}');
  assert.deepStrictEqual(second?.error?.code, { case: "codeNumber", value: 529 });
  assert.equal(second?.error?.name, undefined);
  assert.deepStrictEqual([message.usage?.reasoning, message.usage?.cacheWrite1h], [0n, 100n]);
  assert.equal(message.usage?.cost?.totalFromProvider, true);

  const result = throughTheWire(messageFromPi(TOOL_RESULT_16)).role.value as ToolResultMessage;
  assert.equal(result.extraJson, "");
  assert.equal(result.durationMs, 130n);
  assert.equal(result.usage?.cost, undefined);
  assert.equal(result.nestedCalls?.complete, false);
  const calls = result.nestedCalls?.calls ?? [];
  assert.deepStrictEqual(
    calls.map((call) => call.status),
    [NestedCallStatus.OK, NestedCallStatus.ERROR, NestedCallStatus.UNFINISHED],
  );
  assert.deepStrictEqual(
    calls.map((call) => [call.argumentsJson, call.argumentsBytes, call.durationMs, call.error]),
    [
      ['{"path":"a.ts"}', undefined, 4n, undefined],
      [undefined, 70000n, 0n, "exit 1"],
      ["{}", undefined, undefined, undefined],
    ],
  );
});

test("a system role is a system message, its sections in order", { timeout: TEST_TIMEOUT }, () => {
  const message = throughTheWire(messageFromPi(SYSTEM));
  assert.equal(message.role.case, "system");
  const system = message.role.value;
  assert.equal(system.extraJson, "");
  assert.equal(system.stringContent, true);
  assert.equal(textOf(message), "You are pi, a coding agent.");
  assert.deepStrictEqual(
    system.sections.map((section) => [section.name, section.text]),
    [
      ["<environment>", "<environment>cwd: /repo</environment>"],
      ["guidelines", "## Guidelines"],
      ["old", undefined], // pi's null: this message removes the section
    ],
  );
  assert.deepStrictEqual(
    system.toolsAdded.map((tool) => tool.constrainedSampling?.config),
    [
      { case: "jsonSchema", value: create(JsonSchemaSamplingSchema, { strict: Strictness.REQUIRE }) },
      { case: "off", value: true },
      { case: "grammar", value: create(GrammarSamplingSchema, { openaiLark: "s" }) },
    ],
  );
  assert.deepStrictEqual(
    system.toolsRemoved.map((reference) => reference.name),
    ["grep"],
  );
  // Content as blocks; sections named without integers (which JavaScript objects put first) keep
  // their order, not sorted.
  const blocks = {
    role: "system",
    content: [
      { type: "text", text: "a" },
      { type: "text", text: "b", textSignature: "s" },
    ],
    sections: { "z-last": "z", "a-first": null },
    timestamp: 0,
  };
  const read = messageFromPi(blocks).role.value as SystemMessage;
  assert.deepStrictEqual([read.stringContent, read.extraJson], [false, ""]);
  assert.deepStrictEqual(
    read.sections.map((section) => section.name),
    ["z-last", "a-first"],
  );
  assert.equal(textRoundTrip(blocks), JSON.stringify(blocks));
  // A system message built here, with one text block given as a string.
  const built = create(SystemMessageSchema, { content: [{ text: "p" }], stringContent: true, timestamp: 3n });
  assert.equal(JSON.stringify(messageToPi(built)), '{"role":"system","content":"p","timestamp":3}');
});

test("absent differs from 0, false and empty", { timeout: TEST_TIMEOUT }, () => {
  const bare = assistant();
  const message = messageFromPi(bare).role.value as AssistantMessage;
  assert.deepStrictEqual([message.usage?.reasoning, message.usage?.cacheWrite1h], [undefined, undefined]);
  assert.equal(message.usage?.cost?.totalFromProvider, undefined);
  assert.deepStrictEqual([message.endTurn, message.durationMs, message.deferred], [undefined, undefined, undefined]);
  assert.deepStrictEqual([message.thinkingLevel, message.diagnostics], [ModelThinkingLevel.UNSPECIFIED, []]);
  assert.equal(textRoundTrip(bare), JSON.stringify(bare));

  const zeros = assistant({ endTurn: false, diagnostics: [], durationMs: 0 });
  const usage = zeros.usage as Record<string, unknown>;
  zeros.usage = { ...usage, reasoning: 0, cost: { ...(usage.cost as object), totalFromProvider: false } };
  assert.equal(textRoundTrip(zeros), JSON.stringify(zeros));
  const read = messageFromPi(zeros).role.value as AssistantMessage;
  assert.equal(read.usage?.reasoning, 0n);
  assert.equal(read.extraJson, '{"diagnostics":[]}'); // the repeated field cannot hold an empty list

  const empty = { role: "system", content: "", sections: {}, timestamp: 0, toolsAdded: [], toolsRemoved: [] };
  const system = messageFromPi(empty).role.value as SystemMessage;
  assert.deepStrictEqual([system.sections, system.toolsAdded, system.toolsRemoved], [[], [], []]);
  assert.equal(system.extraJson, '{"sections":{},"toolsAdded":[],"toolsRemoved":[]}');
  assert.equal(textRoundTrip(empty), JSON.stringify(empty));
  const minimal = { role: "system", content: "", timestamp: 0 };
  assert.equal(textRoundTrip(minimal), JSON.stringify(minimal));

  for (const data of [{}, { data: null }, { data: 0 }]) {
    const deferred = assistant({ stopReason: "deferred", deferred: { ...HANDLE, ...data } });
    assert.equal(textRoundTrip(deferred), JSON.stringify(deferred));
  }
  const onlyNamed = { calls: [{ id: "n", name: "t", status: "ok" }], complete: true };
  const noArguments = { ...TOOL_RESULT_16, nestedCalls: onlyNamed };
  assert.equal(textRoundTrip(noArguments), JSON.stringify(noArguments));
});

test("keys in another order than the writer's keep their order", { timeout: TEST_TIMEOUT }, () => {
  // Anthropic adds cacheWrite1h and reasoning to the usage after its cost; pi-messages writes a
  // failed call's errorMessage before the timestamp.
  const anthropic = assistant();
  anthropic.usage = { ...(anthropic.usage as object), cacheWrite1h: 0, reasoning: 12 };
  const { timestamp: _, ...withoutTimestamp } = assistant();
  const failed = { ...withoutTimestamp, stopReason: "error", errorMessage: "502", timestamp: 5 };
  for (const original of [anthropic, failed]) assert.equal(textRoundTrip(original), JSON.stringify(original));
  const usage = (messageFromPi(anthropic).role.value as AssistantMessage).usage;
  const order = (JSON.parse(usage?.extraJson ?? "{}") as Record<string, string[]>).$order;
  assert.deepStrictEqual(order?.slice(-2), ["cacheWrite1h", "reasoning"]);
  // In the writer's own order, nothing is recorded.
  assert.deepStrictEqual(Object.keys(roundTrip(ASSISTANT_16)), Object.keys(ASSISTANT_16));
  assert.equal((messageFromPi(ASSISTANT_16).role.value as AssistantMessage).extraJson, "");
});

test("the writer writes pi 1.6's keys in pi's order", { timeout: TEST_TIMEOUT }, () => {
  const message = messageFromPi(ASSISTANT_16).role.value as AssistantMessage;
  assert.deepStrictEqual(Object.keys(assistantToPi(message)), [
    ...["role", "content", "api", "provider", "model", "usage", "stopReason", "deferred", "timestamp"],
    ...["providerThinkingLevel", "responseId", "responseModel", "rawStopReason", "endTurn", "errorMessage"],
    ...["diagnostics", "durationMs", "thinkingLevel"],
  ]);
  // A modelled key kept as an extra (an empty list) takes its place among them.
  message.diagnostics = [];
  message.extraJson = '{"diagnostics":[]}';
  assert.deepStrictEqual(Object.keys(assistantToPi(message)).slice(-3), ["diagnostics", "durationMs", "thinkingLevel"]);
});

test("nested objects keep their own unknown keys and key order", { timeout: TEST_TIMEOUT }, () => {
  const oddDiagnostic = { timestamp: 1, type: "x", error: { message: "m", errno: -104, code: 500 } };
  const grammar = { type: "grammar", variants: { openai_lark: "s", anthropic_cfg: "t" }, note: 1 };
  const originals = [
    assistant({ stopReason: "error", errorMessage: "m", diagnostics: [oddDiagnostic] }),
    assistant({ stopReason: "deferred", deferred: { id: "x", provider: "p", modelId: "m", api: "a", ttl: 1 } }),
    { ...TOOL_RESULT_16, nestedCalls: { complete: true, calls: [{ ...TOOL_RESULT_16.nestedCalls.calls[0], n: 1 }] } },
    { ...SYSTEM, toolsAdded: [{ ...READ_TOOL, constrainedSampling: { strict: "prefer", type: "json_schema" } }] },
    { ...SYSTEM, toolsAdded: [{ ...READ_TOOL, constrainedSampling: grammar }] },
    { ...SYSTEM, toolsRemoved: [{ name: "grep", namespace: "ns" }] },
  ];
  for (const original of originals) assert.equal(textRoundTrip(original), JSON.stringify(original));
  const message = messageFromPi(originals[0]).role.value as AssistantMessage;
  assert.equal(message.extraJson, "");
  const [diagnostic] = message.diagnostics;
  assert.equal(diagnostic?.extraJson, '{"$order":["timestamp","type","error"]}');
  assert.equal(diagnostic?.error?.extraJson, '{"errno":-104,"$order":["message","errno","code"]}');
  assert.deepStrictEqual(diagnostic?.error?.code, { case: "codeNumber", value: 500 });
  const deferred = (messageFromPi(originals[1]).role.value as AssistantMessage).deferred;
  assert.equal(deferred?.extraJson, '{"ttl":1,"$order":["id","provider","modelId","api","ttl"]}');
  const nestedCalls = (messageFromPi(originals[2]).role.value as ToolResultMessage).nestedCalls;
  assert.deepStrictEqual(
    [nestedCalls?.extraJson, nestedCalls?.calls[0]?.extraJson],
    ['{"$order":["complete","calls"]}', '{"n":1}'],
  );
  const system = messageFromPi(originals[4]).role.value as SystemMessage;
  const config = system.toolsAdded[0]?.constrainedSampling?.config;
  assert.ok(config?.case === "grammar");
  assert.deepStrictEqual(
    [config.value.extraJson, config.value.variantsExtraJson],
    ['{"note":1}', '{"anthropic_cfg":"t"}'],
  );
  const removed = messageFromPi(originals[5]).role.value as SystemMessage;
  assert.deepStrictEqual([removed.extraJson, removed.toolsRemoved[0]?.extraJson], ["", '{"namespace":"ns"}']);
});

test("extraJson never overrides a field's key", { timeout: TEST_TIMEOUT }, () => {
  const message = assistantMessage([text("hi")], { stopReason: StopReason.STOP, timestamp: 5n });
  message.api = "mine";
  message.extraJson = '{"api":"kept","diagnostics":[]}';
  message.diagnostics = [create(DiagnosticSchema, { type: "x", timestamp: 1n })];
  const written = assistantToPi(message);
  assert.equal(written.api, "mine");
  assert.deepStrictEqual(written.diagnostics, [{ type: "x", timestamp: 1 }]);
  // An empty list kept for a repeated field is written while the field is empty.
  message.diagnostics = [];
  assert.deepStrictEqual(assistantToPi(message).diagnostics, []);
});

test("transcript contexts carry their system messages", { timeout: TEST_TIMEOUT }, () => {
  const later = {
    role: "system",
    content: [{ type: "text", text: "Be brief." }],
    sections: { old: null },
    timestamp: 9,
  };
  const original = { messages: [SYSTEM, { role: "user", content: "hi", timestamp: 1 }, later] };
  const context = fromBinary(AgentContextSchema, toBinary(AgentContextSchema, contextFromPi(original)));
  assert.equal(context.systemPrompt, undefined);
  assert.deepStrictEqual(context.tools, []);
  assert.deepStrictEqual(
    context.messages.map((message) => message.role.case),
    ["system", "user", "system"],
  );
  assert.equal(JSON.stringify(contextToPi(context)), JSON.stringify(original));
  // pi's Context shorthand and a leading system message are both carried, not merged.
  const both = { systemPrompt: "p", messages: [SYSTEM], tools: [READ_TOOL] };
  assert.equal(JSON.stringify(contextToPi(contextFromPi(both))), JSON.stringify(both));
});

test("terminal events take pi 1.6's stop reasons", { timeout: TEST_TIMEOUT }, () => {
  const final = assistant({ stopReason: "deferred", deferred: HANDLE });
  const event = eventFromPi({ type: "done", reason: "deferred", message: final });
  assert.ok(event.event.case === "done" && event.event.value.reason === StopReason.DEFERRED);
  assert.deepStrictEqual(eventToPi(event), { type: "done", reason: "deferred", message: final });
});

// [input, the path of the bad value]
/** A system message whose one tool has this constrainedSampling; a tool result with these nested calls. */
const sampled = (constrainedSampling: unknown) => ({ ...SYSTEM, toolsAdded: [{ ...READ_TOOL, constrainedSampling }] });
const nested = (calls: unknown[], complete?: boolean) => ({ ...TOOL_RESULT_16, nestedCalls: { calls, complete } });
const diagnostic = (fields: Record<string, unknown>) => ({ type: "x", timestamp: 1, ...fields });
const BAD_16: Array<[unknown, string]> = [
  [assistant({ thinkingLevel: "extreme" }), "thinkingLevel"],
  [assistant({ stopReason: "paused" }), "stopReason"],
  [assistant({ diagnostics: {} }), "diagnostics"],
  [assistant({ diagnostics: [{ timestamp: 1 }] }), "diagnostics[0].type"],
  [assistant({ diagnostics: [{ type: "x" }] }), "diagnostics[0].timestamp"],
  [assistant({ diagnostics: [diagnostic({ error: { message: "m", code: true } })] }), "diagnostics[0].error.code"],
  [assistant({ diagnostics: [diagnostic({ error: { message: "m", code: 2 ** 60 } })] }), "diagnostics[0].error.code"],
  [assistant({ diagnostics: [diagnostic({ error: { code: "E" } })] }), "diagnostics[0].error.message"],
  [assistant({ diagnostics: [diagnostic({ details: [1] })] }), "diagnostics[0].details"],
  [assistant({ deferred: { provider: "p", modelId: "m", api: "a" } }), "deferred.id"],
  [assistant({ deferred: { ...HANDLE, pollAfterMs: "1s" } }), "deferred.pollAfterMs"],
  [assistant({ endTurn: "yes" }), "endTurn"],
  [assistant({ durationMs: 1.5 }), "durationMs"],
  [assistant({ responseId: 1 }), "responseId"],
  [assistant({ usage: { ...USAGE_16, reasoning: 1.5 } }), "usage.reasoning"],
  [assistant({ usage: { ...USAGE_16, cacheWrite1h: "0" } }), "usage.cacheWrite1h"],
  [assistant({ usage: { ...USAGE_16, cost: { totalFromProvider: 1 } } }), "usage.cost.totalFromProvider"],
  [{ ...TOOL_RESULT_16, usage: [] }, "usage"],
  [nested([{ id: "n", name: "t", status: "cancelled" }], true), "nestedCalls.calls[0].status"],
  [nested([]), "nestedCalls.complete"],
  [nested([{ id: "n", name: "t", status: "ok", arguments: "{}" }], true), "nestedCalls.calls[0].arguments"],
  [{ ...SYSTEM, content: [{ type: "image", data: "", mimeType: "x" }] }, "content[0].type"],
  [{ ...SYSTEM, sections: { guidelines: 3 } }, "sections.guidelines"],
  [{ ...SYSTEM, sections: ["guidelines"] }, "sections"],
  [{ ...SYSTEM, toolsRemoved: [{}] }, "toolsRemoved[0].name"],
  [sampled(true), "toolsAdded[0].constrainedSampling"],
  [sampled({ type: "regex" }), "toolsAdded[0].constrainedSampling.type"],
  [sampled({ type: "json_schema", strict: "always" }), "toolsAdded[0].constrainedSampling.strict"],
  [sampled({ type: "grammar" }), "toolsAdded[0].constrainedSampling.variants"],
  [
    sampled({ type: "grammar", variants: { openai_lark: 1 } }),
    "toolsAdded[0].constrainedSampling.variants.openai_lark",
  ],
];

test("a bad value in a pi 1.6 object names its path", { timeout: TEST_TIMEOUT }, () => {
  for (const [input, path] of BAD_16) {
    assert.throws(
      () => messageFromPi(input),
      (error) => error instanceof PiJsonError && error.path === path && error.detail.length > 0,
      `${JSON.stringify(input)} should fail at "${path}"`,
    );
  }
});

test("the writer refuses what pi-JSON cannot hold", { timeout: TEST_TIMEOUT }, () => {
  const twice = create(SystemMessageSchema, { sections: [{ name: "a", text: "1" }, { name: "a" }] });
  assert.throws(
    () => messageToPi(twice),
    (error) => error instanceof PiJsonError && error.path === "SystemMessage.sections[1].name",
  );
  const nestedCalls = create(NestedToolCallsSchema, { calls: [create(NestedToolCallSchema, { id: "n", name: "t" })] });
  const result = create(ToolResultMessageSchema, { toolCallId: "c", nestedCalls });
  assert.throws(
    () => messageToPi(result),
    (error) => error instanceof PiJsonError && error.path === "NestedToolCall.status",
  );
  const user = create(UserMessageSchema, { extraJson: '{"$order":"role"}' });
  assert.throws(
    () => messageToPi(user),
    (error) => error instanceof PiJsonError && /\$order/.test(error.detail),
  );
});

test("an edited message writes what the user set", { timeout: TEST_TIMEOUT }, () => {
  const older = assistant();
  const usage = older.usage as Record<string, unknown>;
  delete usage.cacheRead; // an older pi's usage, without the key
  const message = messageFromPi(older);
  assert.ok(!("cacheRead" in (messageToPi(message).usage as Record<string, unknown>))); // unedited: stays absent
  assert.equal(message.role.case, "assistant");
  const read = message.role.value.usage!;
  read.cacheRead = 100n;
  read.cost!.input = 2.5;
  const written = messageToPi(message).usage as { cacheRead: number; cost: { input: number } };
  assert.deepStrictEqual([written.cacheRead, written.cost.input], [100, 2.5]);
});
