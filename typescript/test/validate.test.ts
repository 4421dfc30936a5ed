// The message and request rules: each failure names the field path and what is wrong, in the
// Python runtime's words.

import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { test } from "node:test";
import { create, type MessageInitShape, toBinary } from "@bufbuild/protobuf";
import {
  AgentMessageSchema,
  DEFAULT_LIMITS,
  StopReason,
  type StreamRequest,
  StreamRequestSchema,
  ValidationError,
  checkContext,
  checkMessage,
  checkRequest,
  contextFromPi,
  entryFromPi,
  parseJsonObject,
} from "pi-proto";
import { TEST_TIMEOUT, assistantMessage, text, toolCall } from "./support/messages.js";
import { runPython } from "./support/python.js";
import { repoRoot } from "./support/server.js";

type MessageInit = MessageInitShape<typeof AgentMessageSchema>;
type ToolInit = NonNullable<MessageInitShape<typeof StreamRequestSchema>["context"]>["tools"];

function requestWith(messages: MessageInit[], tools: ToolInit = []): StreamRequest {
  return create(StreamRequestSchema, { context: { messages, tools } });
}

function assistantWith(...content: ReturnType<typeof text>[]): MessageInit {
  return { role: { case: "assistant", value: assistantMessage(content) } };
}

/** An assistant message with one tool call whose arguments are `argumentsJson`, as is. */
function callWith(argumentsJson: string): MessageInit {
  const call = { id: "c", name: "read", argumentsJson };
  return { role: { case: "assistant", value: { content: [{ block: { case: "toolCall", value: call } }], stopReason: StopReason.STOP } } };
}

// [request, the message both runtimes give]; `...` ends a message whose rest is the JSON parser's.
const BROKEN: Array<[StreamRequest, string]> = [
  [create(StreamRequestSchema), "StreamRequest.context: required"],
  [
    requestWith([{}]),
    "StreamRequest.context.messages[0].role: exactly one of user, assistant, tool_result, custom, session_entry must be set, found none",
  ],
  [
    requestWith([{ role: { case: "user", value: { content: [{}] } } }]),
    "StreamRequest.context.messages[0].user.content[0].block: exactly one of text, image must be set, found none",
  ],
  [
    requestWith([assistantWith(toolCall("", "read", {}))]),
    "StreamRequest.context.messages[0].assistant.content[0].tool_call.id: must not be empty",
  ],
  [
    requestWith([assistantWith(toolCall("c", "", {}))]),
    "StreamRequest.context.messages[0].assistant.content[0].tool_call.name: must not be empty",
  ],
  [
    requestWith([callWith('"x"')]),
    "StreamRequest.context.messages[0].assistant.content[0].tool_call.arguments_json: must be a JSON object, got string",
  ],
  [
    requestWith([callWith("{")]),
    "StreamRequest.context.messages[0].assistant.content[0].tool_call.arguments_json: not valid JSON: ...",
  ],
  [
    requestWith([{ role: { case: "assistant", value: assistantMessage([], { stopReason: StopReason.UNSPECIFIED }) } }]),
    "StreamRequest.context.messages[0].assistant.stop_reason: must be set",
  ],
  [
    requestWith([{ role: { case: "assistant", value: { content: [{}], stopReason: StopReason.STOP } } }]),
    "StreamRequest.context.messages[0].assistant.content[0].block: exactly one of text, thinking, tool_call must be set, found none",
  ],
  [
    requestWith([{ role: { case: "toolResult", value: { toolCallId: "", toolName: "read" } } }]),
    "StreamRequest.context.messages[0].tool_result.tool_call_id: must not be empty",
  ],
  [
    requestWith([{ role: { case: "toolResult", value: { toolCallId: "c", detailsJson: "[1]" } } }]),
    "StreamRequest.context.messages[0].tool_result.details_json: must be a JSON object, got list",
  ],
  [
    requestWith([{ role: { case: "toolResult", value: { toolCallId: "c", content: [{}] } } }]),
    "StreamRequest.context.messages[0].tool_result.content[0].block: exactly one of text, image must be set, found none",
  ],
  [
    requestWith([{ role: { case: "user", value: { content: [{ block: { case: "image", value: { extraJson: "1" } } }] } } }]),
    "StreamRequest.context.messages[0].user.content[0].image.extra_json: must be a JSON object, got number",
  ],
  [
    requestWith([], [{ name: "read", parametersJson: "true" }]),
    "StreamRequest.context.tools[0].parameters_json: must be a JSON Schema object, got boolean",
  ],
  [requestWith([], [{ parametersJson: "{}" }]), "StreamRequest.context.tools[0].name: must not be empty"],
  [
    create(StreamRequestSchema, { context: { extraJson: "null" } }),
    "StreamRequest.context.extra_json: must be a JSON object, got null",
  ],
  [
    create(StreamRequestSchema, { context: {}, options: { maxTokens: 0n } }),
    "StreamRequest.options.max_tokens: must be at least 1, got 0",
  ],
  [
    create(StreamRequestSchema, { context: {}, options: { temperature: 3.5 } }),
    "StreamRequest.options.temperature: must be between 0 and 2, got 3.5",
  ],
  [
    create(StreamRequestSchema, { context: {}, options: { temperature: -1 } }),
    "StreamRequest.options.temperature: must be between 0 and 2, got -1.0",
  ],
  [
    create(StreamRequestSchema, { context: {}, options: { temperature: Number.NaN } }),
    "StreamRequest.options.temperature: must be between 0 and 2, got nan",
  ],
  [
    requestWith([{ role: { case: "custom", value: { role: "bashExecution", fieldsJson: "[]" } } }]),
    "StreamRequest.context.messages[0].custom.fields_json: must be a JSON object, got list",
  ],
  [
    requestWith([{ role: { case: "custom", value: { role: "", fieldsJson: "{}" } } }]),
    "StreamRequest.context.messages[0].custom.role: must not be empty",
  ],
  [
    requestWith([{ role: { case: "sessionEntry", value: { type: "compaction", fieldsJson: '"x"' } } }]),
    "StreamRequest.context.messages[0].session_entry.fields_json: must be a JSON object, got string",
  ],
  [
    requestWith([{ role: { case: "user", value: {} }, sessionJson: "[]" }]),
    "StreamRequest.context.messages[0].session_json: must be a JSON object, got list",
  ],
];

function thrown(request: StreamRequest): string {
  try {
    checkRequest(request);
  } catch (error) {
    assert.ok(error instanceof ValidationError, String(error));
    return error.message;
  }
  return "no error";
}

/** The message up to `...`, where the two runtimes' JSON parsers word things differently. */
function stem(message: string): string {
  return message.endsWith("...") ? message.slice(0, -3) : message;
}

test("well-formed requests and real transcripts pass", { timeout: TEST_TIMEOUT }, async () => {
  const context = JSON.parse(await readFile(`${repoRoot}tests/vectors/agent_context.pi.json`, "utf8")) as unknown;
  const options = { temperature: 2, maxTokens: 1n };
  checkRequest(create(StreamRequestSchema, { context: contextFromPi(context), options }));
  const session = await readFile(`${repoRoot}tests/fixtures/pi-sessions/before-compaction.jsonl`, "utf8");
  const messages = session.split("\n").filter((line) => line.trim()).map((line) => entryFromPi(JSON.parse(line)));
  assert.equal(messages.length, 1003);
  checkRequest(create(StreamRequestSchema, { context: { messages } }));
});

test("broken requests name the field", { timeout: TEST_TIMEOUT }, () => {
  for (const [request, message] of BROKEN) {
    const got = thrown(request);
    assert.ok(got.startsWith(stem(message)) && (message.endsWith("...") || got === message), `${got}\n!= ${message}`);
  }
});

test("broken requests give the Python runtime's messages", { timeout: 60_000 }, async () => {
  const script = [
    "import base64, json, sys",
    "import pi_proto as pp",
    "from pi_proto.validate import ValidationError, check_request",
    "for line in sys.stdin:",
    "    try:",
    "        check_request(pp.decode(pp.StreamRequest, base64.b64decode(line)))",
    "        print(json.dumps('no error'))",
    "    except ValidationError as error:",
    "        print(json.dumps(str(error)))",
  ].join("\n");
  const input = BROKEN.map(([request]) => `${Buffer.from(toBinary(StreamRequestSchema, request)).toString("base64")}\n`);
  const output = await runPython(script, input.join(""));
  const python = output.trimEnd().split("\n").map((line) => JSON.parse(line) as string);
  assert.equal(python.length, BROKEN.length);
  BROKEN.forEach(([, message], index) => {
    assert.equal(python[index]!.startsWith(stem(message)), true, `Python: ${python[index]}\n   TS: ${message}`);
    if (!message.endsWith("...")) assert.equal(python[index], message);
  });
});

test("JSON size and depth limits", { timeout: TEST_TIMEOUT }, () => {
  const limits = { maxJsonBytes: 100, maxJsonDepth: 3 };
  assert.deepStrictEqual(parseJsonObject('{"a": {"b": [1]}}', "x", limits), { a: { b: [1] } });
  assert.throws(() => parseJsonObject(`{"a": "${"y".repeat(94)}"}`, "x", limits), {
    name: "ValidationError",
    message: "x: 103 bytes of JSON, above the limit of 100",
  });
  assert.throws(() => parseJsonObject('{"a": "ü"}', "x", { ...limits, maxJsonBytes: 10 }), {
    message: "x: 11 bytes of JSON, above the limit of 10", // bytes of UTF-8, not characters
  });
  assert.throws(() => parseJsonObject('{"a": {"b": [[1]]}}', "x", limits), {
    message: "x: JSON nested deeper than the limit of 3",
  });
  const deep = `${'{"a":'.repeat(100_000)}1${"}".repeat(100_000)}`; // deeper than any recursive parser goes
  assert.throws(() => parseJsonObject(deep, "x", { ...DEFAULT_LIMITS, maxJsonBytes: 10 ** 7 }), {
    message: "x: JSON nested deeper than the limit of 64",
  });
});

test("the default limits are the documented values", { timeout: TEST_TIMEOUT }, () => {
  assert.deepStrictEqual({ ...DEFAULT_LIMITS }, { maxJsonBytes: 4 * 1024 * 1024, maxJsonDepth: 64 });
  assert.ok(Object.isFrozen(DEFAULT_LIMITS));
});

test("every entry of a message path is named", { timeout: TEST_TIMEOUT }, () => {
  const nested = create(AgentMessageSchema, { role: { case: "sessionEntry", value: { type: "", fieldsJson: "{}" } } });
  assert.throws(() => checkMessage(nested, "entry"), { message: "entry.session_entry.type: must not be empty" });
  assert.throws(() => checkMessage(create(AgentMessageSchema)), {
    message: "AgentMessage.role: exactly one of user, assistant, tool_result, custom, session_entry must be set, found none",
  });
  const context = requestWith([], [{ name: "", parametersJson: "{}" }]).context!;
  assert.throws(() => checkContext(context), { message: "AgentContext.tools[0].name: must not be empty" });
});
