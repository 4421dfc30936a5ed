// pi-JSON converts losslessly: real pi sessions, the golden vectors, the same bytes and the same
// error messages as the Python runtime, absent and unmodelled fields, events.

import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
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
import { runPython } from "./support/python.js";
import { repoRoot, runPiProto } from "./support/server.js";

type Json = ReturnType<typeof messageToPi>;

const FIXTURES = `${repoRoot}tests/fixtures/pi-sessions/`;
const SESSION = `${FIXTURES}before-compaction.jsonl`;
const THINKING = `${FIXTURES}assistant-message-with-thinking-code.json`;
const VECTORS = `${repoRoot}tests/vectors/`;
// Tests that run Python's converter or a Python process as well.
const PYTHON_TIMEOUT = 60_000;

function throughTheWire(message: AgentMessage): AgentMessage {
  return fromBinary(AgentMessageSchema, toBinary(AgentMessageSchema, message));
}

function roundTrip(value: unknown): Json {
  return messageToPi(throughTheWire(messageFromPi(value)));
}

async function sessionLines(): Promise<string[]> {
  return (await readFile(SESSION, "utf8")).split("\n").filter((line) => line.trim());
}

/** The records of a binary transcript: each AgentMessage preceded by its length as a varint. */
function records(data: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  let offset = 0;
  while (offset < data.length) {
    let size = 0;
    let shift = 0;
    let byte: number;
    do {
      byte = data[offset]!;
      offset += 1;
      size += (byte & 0x7f) * 2 ** shift;
      shift += 7;
    } while (byte & 0x80);
    assert.ok(offset + size <= data.length, `record ${out.length} is truncated`);
    out.push(data.subarray(offset, offset + size));
    offset += size;
  }
  return out;
}

test("the fixtures are present", { timeout: TEST_TIMEOUT }, async () => {
  assert.ok((await readFile(SESSION)).length > 1_000_000);
  assert.ok((await readFile(THINKING)).length > 0);
});

test("every line of a real session converts back unchanged", { timeout: TEST_TIMEOUT }, async () => {
  const lines = await sessionLines();
  const kinds: Record<string, number> = {};
  lines.forEach((line, index) => {
    const original = JSON.parse(line) as unknown;
    const entry = throughTheWire(entryFromPi(original, `line ${index + 1}`));
    const kind = entry.role.case ?? "none";
    kinds[kind] = (kinds[kind] ?? 0) + 1;
    assert.deepStrictEqual(entryToPi(entry), original, `line ${index + 1} changed`);
  });
  assert.equal(lines.length, 1003);
  assert.deepStrictEqual(kinds, { user: 55, assistant: 484, toolResult: 448, custom: 3, sessionEntry: 13 });
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

// --- the golden vectors ----------------------------------------------------------------------------

interface Vector {
  name: string;
  type: string;
  files: string[];
  unknownFields?: boolean;
}

const manifest = JSON.parse(await readFile(`${VECTORS}manifest.json`, "utf8")) as { vectors: Vector[] };
const piVectors = manifest.vectors.filter((vector) => vector.files.includes(`${vector.name}.pi.json`));

// The vector whose pi.json writes a cost as `1.0`: Python keeps that float in the cost's
// extra_json, JSON.parse reads 1, so this codec's bytes lack exactly that extra_json.
const PYTHON_KEPT_FLOATS: Record<string, string> = { "agent_message-extra_fields": '{"cacheRead":1.0}' };

test("the pi-JSON vectors are the ones the Python tests use", { timeout: TEST_TIMEOUT }, () => {
  assert.equal(piVectors.length, 12);
  const types = new Set(piVectors.map((vector) => vector.type));
  assert.deepStrictEqual(types, new Set(["pi.ai.v1.AgentMessage", "pi.ai.v1.AgentContext"]));
});

for (const vector of piVectors) {
  test(`pi-JSON vector ${vector.name}: the .binpb bytes, and back`, { timeout: TEST_TIMEOUT }, async () => {
    const piJson = JSON.parse(await readFile(`${VECTORS}${vector.name}.pi.json`, "utf8")) as unknown;
    const data = new Uint8Array(await readFile(`${VECTORS}${vector.name}.binpb`));
    if (vector.type === "pi.ai.v1.AgentContext") {
      assert.deepStrictEqual(toBinary(AgentContextSchema, contextFromPi(piJson)), data);
      assert.deepStrictEqual(contextToPi(fromBinary(AgentContextSchema, data)), piJson);
      return;
    }
    const expected = fromBinary(AgentMessageSchema, data);
    const kept = PYTHON_KEPT_FLOATS[vector.name];
    if (kept !== undefined) {
      const cost = (expected.role.value as AssistantMessage).usage!.cost!;
      assert.equal(cost.extraJson, kept);
      cost.extraJson = "";
    }
    // The unknown fields appended to a vector come from no pi-JSON: compare without them.
    const bytes = toBinary(AgentMessageSchema, expected, { writeUnknownFields: false });
    assert.equal(bytes.length < data.length, vector.unknownFields === true || kept !== undefined);
    assert.deepStrictEqual(toBinary(AgentMessageSchema, entryFromPi(piJson)), bytes);
    // And back from Python's bytes, the 1.0 in extra_json included.
    assert.deepStrictEqual(entryToPi(fromBinary(AgentMessageSchema, data)), piJson);
  });
}

// --- the same bytes as Python ----------------------------------------------------------------------

interface Differences {
  /** `*Json` fields whose text differs but holds the same JSON. */
  formatted: string[];
  /** `extraJson` fields in which only Python kept an integral float written `1.0`. */
  keptFloats: string[];
}

/**
 * Compare this codec's record with Python's: the `*Json` fields are compared as parsed JSON and
 * then given Python's text, after which the two records must be byte-identical.
 */
function compareWithPython(line: string, number: number, python: Uint8Array, found: Differences): void {
  const ours = entryFromPi(JSON.parse(line), `line ${number}`);
  const theirs = fromBinary(AgentMessageSchema, python);
  alignJsonText(ours, theirs, `line ${number}: `, found);
  assert.deepStrictEqual(toBinary(AgentMessageSchema, ours), python, `line ${number}: the bytes differ`);
}

function alignJsonText(ours: unknown, theirs: unknown, path: string, found: Differences): void {
  if (Array.isArray(ours) && Array.isArray(theirs)) {
    ours.forEach((item: unknown, index) => alignJsonText(item, theirs[index], `${path}[${index}]`, found));
    return;
  }
  if (!isRecord(ours) || !isRecord(theirs)) return;
  for (const key of Object.keys(ours)) {
    const mine: unknown = ours[key];
    const python: unknown = theirs[key];
    if (isOneof(mine)) {
      // Named by the member set, not by the oneof.
      if (isOneof(python) && mine.case === python.case) {
        alignJsonText(mine.value, python.value, joinPath(path, mine.case), found);
      }
      continue;
    }
    const where = joinPath(path, key);
    if (!key.endsWith("Json") || typeof mine !== "string" || typeof python !== "string") {
      alignJsonText(mine, python, where, found);
      continue;
    }
    if (mine === python) continue;
    const parsed = python ? (JSON.parse(python) as Record<string, unknown>) : {};
    let keptFloat = false;
    if (key === "extraJson") {
      for (const [name, value] of Object.entries(parsed)) {
        if (Number.isInteger(value) && ours[name] === value) {
          delete parsed[name]; // Python's 1.0 rule: the field itself holds the same value
          keptFloat = true;
        }
      }
    }
    assert.deepStrictEqual(mine ? (JSON.parse(mine) as unknown) : {}, parsed, `${where} holds other JSON`);
    (keptFloat ? found.keptFloats : found.formatted).push(where);
    ours[key] = python;
  }
}

function joinPath(path: string, name: string): string {
  return path.endsWith(" ") ? `${path}${name}` : `${path}.${name}`;
}

function isOneof(value: unknown): value is { case: string; value: unknown } {
  return isRecord(value) && typeof value["case"] === "string" && "value" in value;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !ArrayBuffer.isView(value);
}

async function pythonRecords(source: string): Promise<Uint8Array[]> {
  const directory = await mkdtemp(join(tmpdir(), "pi-json-"));
  try {
    const target = join(directory, "python.binpb");
    await runPiProto("convert", source, target);
    return records(new Uint8Array(await readFile(target)));
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

test("every line of the session gives Python's bytes", { timeout: PYTHON_TIMEOUT }, async () => {
  const lines = await sessionLines();
  const python = await pythonRecords(SESSION);
  assert.equal(python.length, lines.length);
  const found: Differences = { formatted: [], keptFloats: [] };
  lines.forEach((line, index) => compareWithPython(line, index + 1, python[index]!, found));
  // Every record is byte-identical: no field differs. The only numbers of this session that
  // Python and JSON.stringify write differently (costs such as 5e-06, 0.000005 in JavaScript)
  // are Cost doubles on the wire, not JSON text, and no value is a float written `1.0`.
  assert.deepStrictEqual(found, { formatted: [], keptFloats: [] });
});

test("where the JSON text differs from Python's: numbers and keys", { timeout: PYTHON_TIMEOUT }, async () => {
  // Lines made to hit every difference: Python writes 4e-05, 1e+16 and 1.0 where JSON.stringify
  // writes 0.00004, 10000000000000000 and 1, and keeps insertion order where JavaScript puts
  // integer-like keys ("1", "2") first; a cost written 1.0 stays in Python's extra_json only.
  const lines = [
    '{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"edit",' +
      '"arguments":{"ratio":4e-05,"count":1e16,"scale":1.0}}],"api":"a","provider":"p","model":"m",' +
      '"usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,' +
      '"cost":{"input":5e-06,"output":0,"cacheRead":1.0,"cacheWrite":0,"total":1.5}},' +
      '"stopReason":"toolUse","timestamp":1,"score":2.5e-07}',
    '{"role":"toolResult","toolCallId":"c1","content":[],' +
      '"details":{"elapsed":1.5e-05,"b":"x","2":"b","1":"a"},"isError":false,"timestamp":2}',
    '{"role":"bashExecution","command":"ls","took":3e-06,"timestamp":3}',
    '{"type":"model_change","ratio":1e-07}',
    '{"type":"message","id":"e1","ratio":6e-07,"message":{"role":"user","content":"hi","timestamp":4}}',
  ];
  const directory = await mkdtemp(join(tmpdir(), "pi-json-"));
  try {
    const source = join(directory, "made.jsonl");
    await writeFile(source, `${lines.join("\n")}\n`);
    const python = await pythonRecords(source);
    assert.equal(python.length, lines.length);
    const found: Differences = { formatted: [], keptFloats: [] };
    lines.forEach((line, index) => compareWithPython(line, index + 1, python[index]!, found));
    assert.deepStrictEqual(found, {
      formatted: [
        "line 1: assistant.content[0].toolCall.argumentsJson",
        "line 1: assistant.extraJson",
        "line 2: toolResult.detailsJson",
        "line 3: custom.fieldsJson",
        "line 4: sessionEntry.fieldsJson",
        "line 5: sessionJson",
      ],
      keptFloats: ["line 1: assistant.usage.cost.extraJson"],
    });
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
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
  // JSON.parse cannot tell 1.0 from 1, so nothing is kept in extraJson for it (Python keeps it).
  const message = messageFromPi(original);
  assert.equal((message.role.value as AssistantMessage).usage?.cost?.extraJson, "");
  assert.equal((message.role.value as AssistantMessage).timestamp, 1765233665294n);
});

test("an extraJson in which Python kept a float written 1.0 is written back", { timeout: TEST_TIMEOUT }, () => {
  const cost = create(CostSchema, { output: 0.5, cacheRead: 1, extraJson: '{"cacheRead":1.0}' });
  const message = assistantMessage([text("hi")], { timestamp: 5n });
  message.usage = create(UsageSchema, { cost });
  const written = assistantToPi(message);
  const usage = written["usage"] as Record<string, unknown>;
  assert.equal(JSON.stringify(usage["cost"]), '{"input":0,"output":0.5,"cacheRead":1,"cacheWrite":0,"total":0}');
});

test("int64 fields: safe integers are read, and only safe integers are written", { timeout: TEST_TIMEOUT }, () => {
  const big = 2 ** 60; // within int64, but beyond what a JavaScript number holds exactly
  assert.throws(() => messageFromPi(assistant({ timestamp: big })), {
    name: "PiJsonError",
    message:
      "message.timestamp: expected a 64-bit integer, got number 1152921504606846976 (beyond 2^53, where JSON.parse rounds)",
  });
  const read = messageFromPi(assistant({ timestamp: Number.MAX_SAFE_INTEGER, usage: { input: -5 } }));
  const message = read.role.value as AssistantMessage;
  assert.equal(message.timestamp, 9007199254740991n);
  assert.equal(message.usage?.input, -5n);
  message.timestamp = 2n ** 60n;
  assert.throws(() => assistantToPi(message), {
    name: "PiJsonError",
    message:
      "AssistantMessage.timestamp: 1152921504606846976 is beyond 2^53, so a JavaScript JSON number cannot hold it exactly",
  });
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
  const kept = throughTheWire(entryFromPi(entry));
  assert.equal(kept.role.case, "sessionEntry");
  assert.equal(kept.role.value.type, "model_change");
  assert.deepStrictEqual(entryToPi(kept), entry);

  const wrapped = { type: "message", timestamp: "2025-12-08T22:41:05.306Z", id: "e1", message: bash };
  const unwrapped = throughTheWire(entryFromPi(wrapped));
  assert.equal(unwrapped.sessionJson, '{"type":"message","timestamp":"2025-12-08T22:41:05.306Z","id":"e1"}');
  assert.deepStrictEqual(entryToPi(unwrapped), wrapped);
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

test("the course shape reads and is written in pi's full shape", { timeout: TEST_TIMEOUT }, () => {
  const seed = {
    role: "assistant",
    content: [{ type: "text", text: "我先读取项目说明。" }],
    provider: "scripted",
    model: "scripted-v1",
    usage: { input: 18, output: 12, totalTokens: 30 },
    stopReason: "toolUse",
    timestamp: 1010,
  };
  const back = roundTrip(seed);
  assert.equal(back["api"], "");
  assert.deepStrictEqual(back["usage"], { input: 18, output: 12, cacheRead: 0, cacheWrite: 0, totalTokens: 30 });
  delete back["api"];
  assert.deepStrictEqual(back, { ...seed, usage: back["usage"] });
});

// --- errors: the path, in Python's words ---------------------------------------------------------------

const ASSISTANT = JSON.stringify(assistant());
const withTimestamp = (raw: string): string => ASSISTANT.replace('"timestamp":1765233665294', `"timestamp":${raw}`);
const image = (data: string): string =>
  JSON.stringify({ role: "user", content: [{ type: "image", data, mimeType: "x" }], timestamp: 1 });
const PARTIAL = JSON.stringify(assistantToPi(assistantMessage([text("abc")])));

// [function, JSON text of the input, the message both runtimes give]
const BAD: Array<["message_from_pi" | "event_from_pi", string, string]> = [
  [
    "message_from_pi",
    '{"role":"assistant","content":[],"stopReason":"finished"}',
    "message.stopReason: expected one of stop, length, toolUse, error, aborted, got 'finished'",
  ],
  [
    "message_from_pi",
    `{"role":"assistant","content":[],"stopReason":"it's"}`,
    `message.stopReason: expected one of stop, length, toolUse, error, aborted, got "it's"`,
  ],
  ["message_from_pi", withTimestamp('"now"'), 'message.timestamp: expected a 64-bit integer, got string "now"'],
  [
    "message_from_pi",
    withTimestamp("9223372036854775808"),
    "message.timestamp: expected a 64-bit integer, got number 9223372036854775808",
  ],
  ["message_from_pi", withTimestamp("1.5"), "message.timestamp: expected a 64-bit integer, got number 1.5"],
  ["message_from_pi", withTimestamp("4e-05"), "message.timestamp: expected a 64-bit integer, got number 4e-05"],
  [
    "message_from_pi",
    withTimestamp('{"a":[1,2,"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"]}'),
    'message.timestamp: expected a 64-bit integer, got object {"a": [1, 2, "xxxxxxxxxxxxxxxxxxxxxxxxxx',
  ],
  ["message_from_pi", withTimestamp("true"), "message.timestamp: expected a 64-bit integer, got boolean true"],
  [
    "message_from_pi",
    '{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"video"}]}',
    "message.content[1].type: an assistant block is 'text', 'thinking' or 'toolCall', got 'video'",
  ],
  ["message_from_pi", '{"role":"assistant","content":["text"]}', "message.content[0]: expected an object, got string"],
  [
    "message_from_pi",
    '{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"n","arguments":[1,2]}]}',
    "message.content[0].arguments: expected an object, got list [1, 2]",
  ],
  [
    "message_from_pi",
    '{"role":"assistant","content":[{"type":"thinking","thinking":"t","redacted":"yes"}]}',
    'message.content[0].redacted: expected a boolean, got string "yes"',
  ],
  [
    "message_from_pi",
    '{"role":"assistant","content":[],"usage":{"cost":{"input":"1"}}}',
    'message.usage.cost.input: expected a number, got string "1"',
  ],
  ["message_from_pi", '{"role":"assistant","content":{}}', "message.content: expected a list, got object {}"],
  ["message_from_pi", '{"role":"assistant"}', "message.content: expected a list, got nothing (the key is missing)"],
  ["message_from_pi", image("QQ"), "message.content[0].data: not valid base64: Incorrect padding"],
  [
    "message_from_pi",
    image("QR=="),
    "message.content[0].data: not canonical base64 (padded, standard alphabet), so it would change",
  ],
  [
    "message_from_pi",
    image("QUJD="),
    "message.content[0].data: not canonical base64 (padded, standard alphabet), so it would change",
  ],
  ["message_from_pi", image("Q!=="), "message.content[0].data: not valid base64: Only base64 data is allowed"],
  ["message_from_pi", image("QQ==QQ=="), "message.content[0].data: not valid base64: Excess data after padding"],
  [
    "message_from_pi",
    image("QUJDR"),
    "message.content[0].data: not valid base64: Invalid base64-encoded string: " +
      "number of data characters (5) cannot be 1 more than a multiple of 4",
  ],
  ["message_from_pi", image("QQ=Q"), "message.content[0].data: not valid base64: Discontinuous padding not allowed"],
  ["message_from_pi", image("===="), "message.content[0].data: not valid base64: Leading padding not allowed"],
  [
    "message_from_pi",
    '{"role":"user","content":[{"type":"audio"}]}',
    "message.content[0].type: expected 'text' or 'image', got 'audio'",
  ],
  [
    "message_from_pi",
    '{"role":"user","content":[{"type":"text","text":{"a":1}}]}',
    'message.content[0].text: expected a string, got object {"a": 1}',
  ],
  [
    "message_from_pi",
    '{"role":"toolResult","toolCallId":"c","content":[],"isError":"no"}',
    'message.isError: expected a boolean, got string "no"',
  ],
  [
    "message_from_pi",
    '{"role":"toolResult","content":[]}',
    "message.toolCallId: expected a string, got nothing (the key is missing)",
  ],
  [
    "message_from_pi",
    '{"content":[]}',
    "message.role: expected a role such as 'user', 'assistant' or 'toolResult', got None",
  ],
  ["message_from_pi", '{"role":7}', "message.role: expected a role such as 'user', 'assistant' or 'toolResult', got 7"],
  [
    "message_from_pi",
    '{"role":["a",{"b":1.5,"c":null}]}',
    "message.role: expected a role such as 'user', 'assistant' or 'toolResult', got ['a', {'b': 1.5, 'c': None}]",
  ],
  ["message_from_pi", "[]", "message: expected an object, got list"],
  [
    "event_from_pi",
    '{"type":"text_delta","contentIndex":0,"delta":"x"}',
    "event.partial: required (pi sends the partial message with every event)",
  ],
  [
    "event_from_pi",
    `{"type":"text_end","contentIndex":0,"content":"abd","partial":${PARTIAL}}`,
    "event.content: differs from block 0 of the partial, so it cannot be rebuilt",
  ],
  [
    "event_from_pi",
    `{"type":"text_delta","contentIndex":3,"delta":"x","partial":${PARTIAL}}`,
    "event.contentIndex: 3 is not a block of the partial message",
  ],
  [
    "event_from_pi",
    `{"type":"thinking_delta","contentIndex":0,"delta":"x","partial":${PARTIAL}}`,
    "event.contentIndex: block 0 of the partial is not a thinking block",
  ],
  ["event_from_pi", `{"type":"text_blink","partial":${PARTIAL}}`, "event.type: not a pi event type: 'text_blink'"],
  ["event_from_pi", `{"type":"start","partial":${PARTIAL},"extra":1}`, "event: unknown field 'extra'"],
  [
    "event_from_pi",
    `{"type":"done","reason":"finished","message":${PARTIAL}}`,
    "event.reason: expected one of stop, length, toolUse, error, aborted, got 'finished'",
  ],
  ["event_from_pi", '{"type":"done","reason":"stop"}', "event.message: required"],
  ["event_from_pi", '{"reason":"stop"}', "event.type: expected a string, got nothing (the key is missing)"],
];

const READERS = { message_from_pi: messageFromPi, event_from_pi: eventFromPi };

test("bad pi-JSON names the path of the bad value", { timeout: TEST_TIMEOUT }, () => {
  for (const [reader, input, message] of BAD) {
    assert.throws(() => READERS[reader](JSON.parse(input)), { name: "PiJsonError", message }, input);
  }
  assert.ok(new PiJsonError("x") instanceof Error);
});

test("bad pi-JSON gives the Python runtime's messages, word for word", { timeout: PYTHON_TIMEOUT }, async () => {
  const script = [
    "import json, sys",
    "from pi_proto import pi_json",
    "for line in sys.stdin:",
    "    reader, text = json.loads(line)",
    "    try:",
    "        getattr(pi_json, reader)(json.loads(text))",
    "        print(json.dumps(None))",
    "    except pi_json.PiJsonError as error:",
    "        print(json.dumps(str(error)))",
  ].join("\n");
  const input = BAD.map(([reader, text]) => `${JSON.stringify([reader, text])}\n`).join("");
  const output = await runPython(script, input);
  const python = output.trimEnd().split("\n").map((line) => JSON.parse(line) as string | null);
  assert.deepStrictEqual(python, BAD.map(([, , message]) => message));
});

// --- events ------------------------------------------------------------------------------------------

function sample(): AssistantMessage {
  const message = assistantMessage(
    [
      thinking("让我想想 🤔", "sig-Ω", false),
      text("我先读取项目说明。", '{"id":"msg_1"}'),
      toolCall("call_1", "read", { path: "README.md" }, {
        rawArguments: '{"path": "README.md"}',
        thoughtSignature: "c2ln",
      }),
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
  assert.throws(() => eventToPi(delta), {
    name: "PiJsonError",
    message: "text_delta: pi-JSON events carry the partial message; apply the event with an Accumulator",
  });
  const partial = assistantToPi(assistantMessage([text("abc")], { timestamp: 1n }));
  const wrong = { type: "text_end", contentIndex: 0, content: "abd", partial };
  assert.throws(() => eventFromPi(wrong), /differs from block 0/);
  const end = eventFromPi({ type: "text_end", contentIndex: 0, content: "abc", partial });
  assert.equal(end.event.case, "textEnd");
  assert.equal(textOf(end.partial!), "abc");
});
