// Validation: the schema's protovalidate rules, then the JSON text rules, as structured violations.
// (The corpus's validate cases pin every rule; these tests show the API.)

import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { test } from "node:test";
import { create } from "@bufbuild/protobuf";
import {
  AgentContextSchema,
  AgentMessageSchema,
  CostSchema,
  check,
  entryFromPi,
  JsonShape,
  jsonTextProblem,
  MAX_JSON_DEPTH,
  StopReason,
  StreamRequestSchema,
  ToolResultMessageSchema,
  TranscriptEntrySchema,
  UsageSchema,
  ValidationError,
  violations,
} from "pi-proto";
import { assistantMessage, TEST_TIMEOUT, toolCall, userContext } from "./support/messages.js";

const SESSION = new URL("../../tests/fixtures/pi-sessions/before-compaction.jsonl", import.meta.url);

function pairs(found: ReadonlyArray<{ fieldPath: string; ruleId: string }>): string[][] {
  return found.map((item) => [item.fieldPath, item.ruleId]).sort();
}

test("a real transcript and a request with options in range pass", { timeout: TEST_TIMEOUT }, async () => {
  const session = await readFile(SESSION, "utf8");
  const entries = session
    .split("\n")
    .filter((line) => line.trim())
    .map((line) => entryFromPi(JSON.parse(line)));
  assert.equal(entries.length, 1003);
  for (const entry of entries) check(TranscriptEntrySchema, entry);
  const messages = entries.flatMap((entry) => (entry.entry.case === "message" ? [entry.entry.value] : []));
  assert.equal(messages.length, 990);
  const request = create(StreamRequestSchema, { context: { messages }, options: { temperature: 2, maxTokens: 1n } });
  assert.deepEqual(violations(StreamRequestSchema, request), []);
  check(StreamRequestSchema, request);
});

test("every schema rule a message breaks is reported, with its path", { timeout: TEST_TIMEOUT }, () => {
  const request = create(StreamRequestSchema, {
    context: {
      messages: [
        {
          role: {
            case: "assistant",
            value: assistantMessage([toolCall("", "", {})], { stopReason: StopReason.UNSPECIFIED }),
          },
        },
        {},
      ],
    },
    options: { temperature: 3 },
  });
  assert.deepEqual(pairs(violations(StreamRequestSchema, request)), [
    ["context.messages[0].assistant.content[0].tool_call.id", "string.min_len"],
    ["context.messages[0].assistant.content[0].tool_call.name", "string.min_len"],
    ["context.messages[0].assistant.stop_reason", "enum.not_in"],
    ["context.messages[1].role", "required"],
    ["options.temperature", "double.gte_lte"],
  ]);
  assert.deepEqual(pairs(violations(StreamRequestSchema, create(StreamRequestSchema))), [["context", "required"]]);
});

test("check() throws a ValidationError carrying the violations", { timeout: TEST_TIMEOUT }, () => {
  const entry = create(TranscriptEntrySchema, {
    entry: { case: "sessionEntry", value: { type: "", fieldsJson: "{}" } },
  });
  assert.throws(
    () => check(TranscriptEntrySchema, entry),
    (error) =>
      error instanceof ValidationError &&
      error.violations.length === 1 &&
      error.violations[0]!.fieldPath === "session_entry.type" &&
      error.violations[0]!.ruleId === "string.min_len" &&
      error.message.includes("session_entry.type"),
  );
});

test("the JSON text rules run on every marked field, once the schema rules hold", { timeout: TEST_TIMEOUT }, () => {
  const context = userContext("hi");
  context.extraJson = "[1]"; // must hold an object
  context.tools.push({ $typeName: "pi.ai.v1.Tool", name: "read", description: "", parametersJson: "{", extraJson: "" });
  const result = create(ToolResultMessageSchema, { toolCallId: "c", detailsJson: "NaN" });
  context.messages.push(create(AgentMessageSchema, { role: { case: "toolResult", value: result } }));
  assert.deepEqual(pairs(violations(AgentContextSchema, context)), [
    ["extra_json", "json.object"],
    ["messages[1].tool_result.details_json", "json.syntax"],
    ["tools[0].parameters_json", "json.syntax"],
  ]);
  // With a schema rule broken as well, only that one is reported.
  context.tools[0]!.name = "";
  assert.deepEqual(pairs(violations(AgentContextSchema, context)), [["tools[0].name", "string.min_len"]]);
});

test("an extra_json holding a key its message models breaks json.extra, unless empty", {
  timeout: TEST_TIMEOUT,
}, () => {
  const context = userContext("hi");
  context.extraJson = '{"tools":[],"note":1}'; // an empty list under a repeated field's key is kept
  const message = assistantMessage([], { stopReason: StopReason.STOP });
  message.extraJson = '{"serviceTier":"x","api":"other","model":"m"}'; // only the first is reported
  message.usage = create(UsageSchema, { extraJson: '{"$order":["input"],"totalTokens":{}}' });
  message.usage.cost = create(CostSchema, { extraJson: '{"total":0}' });
  const result = create(ToolResultMessageSchema, { toolCallId: "c", extraJson: '{"toolName":""}' });
  context.messages.push(
    create(AgentMessageSchema, { role: { case: "assistant", value: message } }),
    create(AgentMessageSchema, { role: { case: "toolResult", value: result } }),
  );
  const found = violations(AgentContextSchema, context);
  assert.deepEqual(pairs(found), [
    ["messages[1].assistant.extra_json", "json.extra"],
    ["messages[1].assistant.usage.cost.extra_json", "json.extra"],
    ["messages[2].tool_result.extra_json", "json.extra"],
  ]);
  assert.match(found.find((item) => item.fieldPath === "messages[1].assistant.extra_json")!.detail, /'api'/);
});

test("jsonTextProblem: syntax, depth, numbers, then the shape", { timeout: TEST_TIMEOUT }, () => {
  const rule = (text: string, shape?: JsonShape): string | undefined => jsonTextProblem(text, shape)?.ruleId;
  for (const fine of ['{"a":[1,2.5e3,-0,"\\ud800",true,null]}', ' "x" ', "1e-999", '{"a":1,"a":2}', "[]"]) {
    assert.equal(rule(fine), undefined, fine);
  }
  for (const broken of ["", "NaN", "[1,]", "{'a':1}", "01", "\ufeff{}", "{} {}", '"a\u0001"', "[1 // c\n]", "[1"]) {
    assert.equal(rule(broken), "json.syntax", JSON.stringify(broken));
  }
  assert.equal(rule("1e999"), "json.number");
  assert.equal(rule(`-${"9".repeat(400)}`), "json.number");
  assert.equal(rule(`${"[".repeat(MAX_JSON_DEPTH)}${"]".repeat(MAX_JSON_DEPTH)}`), undefined);
  assert.equal(rule(`${"[".repeat(MAX_JSON_DEPTH + 1)}${"]".repeat(MAX_JSON_DEPTH + 1)}`), "json.depth");
  assert.equal(rule("[1]", JsonShape.OBJECT), "json.object");
  assert.equal(rule(`${"[".repeat(65)}1e999${"]".repeat(65)}`, JsonShape.OBJECT), "json.depth");
  assert.ok(jsonTextProblem("[1]", JsonShape.OBJECT)!.detail.length > 0);
});

test("a text nested 100,000 deep is refused without exhausting the stack", { timeout: TEST_TIMEOUT }, () => {
  const deep = `${'{"a":'.repeat(100_000)}1${"}".repeat(100_000)}`;
  assert.equal(jsonTextProblem(deep)?.ruleId, "json.depth");
  assert.equal(jsonTextProblem(`${"[".repeat(100_000)}`)?.ruleId, "json.syntax"); // never closed
});
