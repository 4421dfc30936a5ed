/**
 * pi-JSON: the transcript shape pi writes (`role`/`type` discriminators, camelCase, "toolUse").
 *
 * It is lossless on what pi writes: reading and writing back with JSON.stringify gives the same
 * text. Keys the schema does not model go to the object's `extraJson` (JSON object text) and are
 * written back from it, and so does an explicit empty `tools` list. A key the writer always writes
 * but the object lacked (an older pi's usage without `totalTokens`, a tool result without
 * `toolName`, the course's reduced shape without `api` or cache counts) is listed in `extraJson`
 * under "$absent", and the writer leaves it out again. Messages of other roles become
 * CustomMessage. A line of a pi session file is a TranscriptEntry: a message keeps its entry's
 * envelope in `sessionJson`, and an entry without a message is a SessionEntry. `*Json` fields hold
 * compact JSON text, as JSON.stringify writes it.
 *
 * Numbers: JSON.parse has one number type, so a cost written `1.0` reads as 1 and is written back
 * as 1, as JSON.stringify (and so pi) writes it. The int64 fields (timestamps, token counts) are
 * bigint: they are read from JSON numbers that are safe integers (JSON.parse rounds larger ones),
 * and written back while they are safe integers.
 *
 * Bad input throws PiJsonError with the `path` of the offending value from the object read, e.g.
 * `content[1].type` for a message, `message.content[0].text` for a session line, "" for the object
 * itself. Errors in writing name the field by its message type, e.g. `UserMessage.timestamp`.
 */

import { clone, create, type JsonObject, type JsonValue, type MessageInitShape } from "@bufbuild/protobuf";
import {
  type AssistantContent,
  AssistantContentSchema,
  type ImageContent,
  ImageContentSchema,
  type TextContent,
  TextContentSchema,
  type ToolResultContent,
  ToolResultContentSchema,
  type UserContent,
  UserContentSchema,
} from "./gen/pi/ai/v1/content_pb.js";
import { type AgentContext, AgentContextSchema, type Tool, ToolSchema } from "./gen/pi/ai/v1/context_pb.js";
import { type ModelEvent, ModelEventSchema } from "./gen/pi/ai/v1/event_pb.js";
import {
  type AgentMessage,
  AgentMessageSchema,
  type AssistantMessage,
  AssistantMessageSchema,
  type Cost,
  CostSchema,
  StopReason,
  type ToolResultMessage,
  ToolResultMessageSchema,
  type Usage,
  UsageSchema,
  type UserMessage,
  UserMessageSchema,
} from "./gen/pi/ai/v1/message_pb.js";
import { type TranscriptEntry, TranscriptEntrySchema } from "./gen/pi/ai/v1/transcript_pb.js";
import { eventKind } from "./events.js";

/** pi-JSON that does not describe a valid message: the `path` of the bad value, and what is wrong. */
export class PiJsonError extends Error {
  override name = "PiJsonError";

  constructor(
    /** Where the bad value is, from the object read: `content[1].type`; "" for the object itself. */
    readonly path: string,
    /** What is wrong with it. */
    readonly detail: string,
  ) {
    super(`${path || "the value"}: ${detail}`);
  }
}

/** The path of `key` inside the value at `where`. */
function at(where: string, key: string): string {
  return where ? `${where}.${key}` : key;
}

const STOP_REASONS = new Map<string, StopReason>([
  ["stop", StopReason.STOP],
  ["length", StopReason.LENGTH],
  ["toolUse", StopReason.TOOL_USE],
  ["error", StopReason.ERROR],
  ["aborted", StopReason.ABORTED],
]);
const STOP_REASON_NAMES = new Map([...STOP_REASONS].map(([name, reason]) => [reason, name]));
const REASON_LIST = [...STOP_REASONS.keys()].join(", ");
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const SAFE_MIN = BigInt(Number.MIN_SAFE_INTEGER);
const SAFE_MAX = BigInt(Number.MAX_SAFE_INTEGER);

type Read<T> = (value: unknown, where: string) => T;
type JsonRecord = Record<string, unknown>;

// --- reading -------------------------------------------------------------------------------------

const MISSING = Symbol("missing");
/** The key of `extraJson` that lists the keys an object lacked, which the writer leaves out. */
export const ABSENT_KEY = "$absent";

/** Reads the known keys of one pi-JSON object; whatever it does not consume becomes extras. */
class Reader {
  readonly obj: JsonRecord;
  readonly extra = new Map<string, unknown>();
  /** The keys the writer writes that this object lacks, in the order they were read. */
  private readonly absent: string[] = [];
  private readonly seen = new Set<string>();

  constructor(
    value: unknown,
    readonly where: string,
  ) {
    if (!isObject(value)) throw new PiJsonError(where, `expected an object, got ${typeName(value)}`);
    this.obj = value;
  }

  private take(key: string): unknown {
    this.seen.add(key);
    return has(this.obj, key) ? this.obj[key] : MISSING;
  }

  private fail(key: string, expected: string, value: unknown, note = ""): PiJsonError {
    return new PiJsonError(at(this.where, key), `expected ${expected}, got ${describe(value)}${note}`);
  }

  /** The value that stands for a missing key, which is then listed as absent. */
  private lacking<T>(key: string, fallback: T): T {
    this.absent.push(key);
    return fallback;
  }

  string(key: string, fallback?: string): string {
    const value = this.take(key);
    if (value === MISSING && fallback !== undefined) return this.lacking(key, fallback);
    if (typeof value !== "string") throw this.fail(key, "a string", value);
    return value;
  }

  optionalString(key: string): string | undefined {
    return has(this.obj, key) ? this.string(key) : undefined;
  }

  boolean(key: string, fallback?: boolean): boolean {
    const value = this.take(key);
    if (value === MISSING && fallback !== undefined) return this.lacking(key, fallback);
    if (typeof value !== "boolean") throw this.fail(key, "a boolean", value);
    return value;
  }

  optionalBoolean(key: string): boolean | undefined {
    return has(this.obj, key) ? this.boolean(key) : undefined;
  }

  integer(key: string): bigint {
    const value = this.take(key);
    if (value === MISSING) return this.lacking(key, 0n);
    if (typeof value === "number" && Number.isSafeInteger(value)) return BigInt(value);
    if (typeof value === "bigint" && value >= INT64_MIN && value <= INT64_MAX) return value;
    if (typeof value === "number" && Number.isInteger(value) && Math.abs(value) < 2 ** 63) {
      // In int64's range, but JSON.parse has rounded it: the integer the text held is lost.
      throw this.fail(key, "a 64-bit integer", value, " (beyond 2^53, where JSON.parse rounds)");
    }
    throw this.fail(key, "a 64-bit integer", value);
  }

  number(key: string): number {
    const value = this.take(key);
    if (value === MISSING) return this.lacking(key, 0);
    if (typeof value !== "number" || !Number.isFinite(value)) throw this.fail(key, "a number", value);
    // After JSON.parse, 1.0 and 1 are one value, written back as JSON.stringify writes it: 1.
    return value;
  }

  items<T>(key: string, read: Read<T>, fallback?: T[]): T[] {
    const value = this.take(key);
    if (value === MISSING && fallback !== undefined) return fallback;
    if (!Array.isArray(value)) throw this.fail(key, "a list", value);
    return value.map((item: unknown, index) => read(item, `${at(this.where, key)}[${index}]`));
  }

  child<T>(key: string, read: Read<T>): T | undefined {
    const value = this.take(key);
    return value === MISSING ? undefined : read(value, at(this.where, key));
  }

  /** A value kept as JSON text; absent stays absent. */
  jsonText(key: string, objectOnly = false): string | undefined {
    const value = this.take(key);
    if (value === MISSING) return undefined;
    if (objectOnly && !isObject(value)) throw this.fail(key, "an object", value);
    return dumpJson(value, at(this.where, key));
  }

  /** An object kept as JSON text; "{}" when absent (and the writer leaves it out again). */
  objectText(key: string): string {
    return this.jsonText(key, true) ?? this.lacking(key, "{}");
  }

  /** The keys nobody read, the values kept verbatim and the keys that were absent, as JSON object text. */
  extraJson(): string {
    for (const key of Object.keys(this.obj)) {
      if (!this.seen.has(key) && has(this.obj, key)) this.extra.set(key, this.obj[key]);
    }
    if (this.absent.length > 0) this.extra.set(ABSENT_KEY, this.absent);
    return this.extra.size > 0 ? dumpJson(Object.fromEntries(this.extra), this.where) : "";
  }
}

/** Convert one pi-JSON message: user, assistant, toolResult, or any other role (kept as is). */
export function messageFromPi(value: unknown, where = ""): AgentMessage {
  if (!isObject(value)) throw new PiJsonError(where, `expected an object, got ${typeName(value)}`);
  const role = value["role"];
  if (role === "user") return create(AgentMessageSchema, { role: { case: "user", value: userFromPi(value, where) } });
  if (role === "assistant") {
    return create(AgentMessageSchema, { role: { case: "assistant", value: assistantFromPi(value, where) } });
  }
  if (role === "toolResult") {
    return create(AgentMessageSchema, { role: { case: "toolResult", value: toolResultFromPi(value, where) } });
  }
  if (typeof role === "string" && role) {
    const fieldsJson = dumpJson(without(value, "role"), where);
    return create(AgentMessageSchema, { role: { case: "custom", value: { role, fieldsJson } } });
  }
  const roles = '"user", "assistant" or "toolResult"';
  throw new PiJsonError(at(where, "role"), `expected a role such as ${roles}, got ${describe(role)}`);
}

/** Convert one pi-JSON assistant message. */
export function assistantFromPi(value: unknown, where = ""): AssistantMessage {
  const read = new Reader(value, where);
  read.string("role");
  const reasonName = read.optionalString("stopReason") ?? ""; // absent only on a partial still streaming
  if (reasonName && !STOP_REASONS.has(reasonName)) {
    throw new PiJsonError(at(where, "stopReason"), `expected one of ${REASON_LIST}, got ${JSON.stringify(reasonName)}`);
  }
  // One statement per field, in pi's key order: the first bad value is the one named.
  const content = read.items("content", assistantBlock);
  const api = read.string("api", "");
  const provider = read.string("provider", "");
  const model = read.string("model", "");
  const usage = read.child("usage", usageFromPi);
  const errorMessage = read.optionalString("errorMessage");
  const timestamp = read.integer("timestamp");
  const stopReason = STOP_REASONS.get(reasonName) ?? StopReason.UNSPECIFIED;
  return create(AssistantMessageSchema, {
    content,
    api,
    provider,
    model,
    usage,
    stopReason,
    errorMessage,
    timestamp,
    extraJson: read.extraJson(),
  });
}

/** Convert a pi-JSON context: systemPrompt, messages and tools. */
export function contextFromPi(value: unknown, where = ""): AgentContext {
  const read = new Reader(value, where);
  const systemPrompt = read.optionalString("systemPrompt");
  const messages = read.items("messages", messageFromPi);
  const tools = read.items("tools", toolFromPi, []);
  const given = read.obj["tools"];
  if (Array.isArray(given) && given.length === 0) {
    read.extra.set("tools", []); // an explicit empty list, which the repeated field cannot tell from none
  }
  return create(AgentContextSchema, { systemPrompt, messages, tools, extraJson: read.extraJson() });
}

/** Convert one line of a pi session file, or one bare pi-JSON message. */
export function entryFromPi(value: unknown, where = ""): TranscriptEntry {
  if (!isObject(value)) throw new PiJsonError(where, `expected an object, got ${typeName(value)}`);
  if (Object.hasOwn(value, "role")) {
    return create(TranscriptEntrySchema, { entry: { case: "message", value: messageFromPi(value, where) } });
  }
  const kind = value["type"];
  if (kind === "message" && Object.hasOwn(value, "message")) {
    const message = messageFromPi(value["message"], at(where, "message"));
    const sessionJson = dumpJson(without(value, "message"), where);
    return create(TranscriptEntrySchema, { entry: { case: "message", value: message }, sessionJson });
  }
  if (typeof kind === "string" && kind) {
    const fieldsJson = dumpJson(without(value, "type"), where);
    return create(TranscriptEntrySchema, { entry: { case: "sessionEntry", value: { type: kind, fieldsJson } } });
  }
  throw new PiJsonError(where, 'neither a message (it has no "role") nor a session entry (it has no "type")');
}

function userFromPi(value: JsonRecord, where: string): UserMessage {
  const read = new Reader(value, where);
  read.string("role");
  const given = value["content"];
  let content: UserContent[];
  if (typeof given === "string") {
    read.string("content");
    content = [create(UserContentSchema, { block: { case: "text", value: { text: given } } })];
  } else {
    content = read.items("content", mediaBlock).map((block) => create(UserContentSchema, { block }));
  }
  const timestamp = read.integer("timestamp");
  return create(UserMessageSchema, {
    content,
    timestamp,
    stringContent: typeof given === "string",
    extraJson: read.extraJson(),
  });
}

function toolResultFromPi(value: JsonRecord, where: string): ToolResultMessage {
  const read = new Reader(value, where);
  read.string("role");
  const toolCallId = read.string("toolCallId");
  const toolName = read.string("toolName", "");
  const content = read.items("content", mediaBlock).map((block) => create(ToolResultContentSchema, { block }));
  const detailsJson = read.jsonText("details");
  const isError = read.boolean("isError", false);
  const timestamp = read.integer("timestamp");
  return create(ToolResultMessageSchema, {
    toolCallId,
    toolName,
    content,
    detailsJson,
    isError,
    timestamp,
    extraJson: read.extraJson(),
  });
}

function blockType(value: unknown, where: string): unknown {
  if (!isObject(value)) throw new PiJsonError(where, `expected an object, got ${typeName(value)}`);
  return value["type"];
}

function assistantBlock(value: unknown, where: string): AssistantContent {
  const kind = blockType(value, where);
  if (kind === "text") {
    return create(AssistantContentSchema, { block: { case: "text", value: textFromPi(value, where) } });
  }
  if (kind === "thinking") {
    const read = new Reader(value, where);
    read.string("type");
    const thinking = read.string("thinking");
    const thinkingSignature = read.optionalString("thinkingSignature");
    const redacted = read.optionalBoolean("redacted");
    const block = { thinking, thinkingSignature, redacted, extraJson: read.extraJson() };
    return create(AssistantContentSchema, { block: { case: "thinking", value: block } });
  }
  if (kind === "toolCall") {
    const read = new Reader(value, where);
    read.string("type");
    const id = read.string("id");
    const name = read.string("name");
    const argumentsJson = read.objectText("arguments");
    const rawArguments = read.optionalString("rawArguments");
    const thoughtSignature = read.optionalString("thoughtSignature");
    const call = { id, name, argumentsJson, rawArguments, thoughtSignature, extraJson: read.extraJson() };
    return create(AssistantContentSchema, { block: { case: "toolCall", value: call } });
  }
  const kinds = '"text", "thinking" or "toolCall"';
  throw new PiJsonError(at(where, "type"), `an assistant block is ${kinds}, not ${describe(kind)}`);
}

type MediaBlock = { case: "text"; value: TextContent } | { case: "image"; value: ImageContent };

function mediaBlock(value: unknown, where: string): MediaBlock {
  const kind = blockType(value, where);
  if (kind === "text") return { case: "text", value: textFromPi(value, where) };
  if (kind === "image") {
    const read = new Reader(value, where);
    read.string("type");
    const encoded = read.string("data");
    const data = Buffer.from(encoded, "base64");
    // Buffer skips what is not base64; only text that encodes back the same is kept unchanged.
    if (data.toString("base64") !== encoded) {
      throw new PiJsonError(at(where, "data"), "not canonical base64 (standard alphabet, padded), so it would change");
    }
    const mimeType = read.string("mimeType");
    const image = create(ImageContentSchema, { data, mimeType, extraJson: read.extraJson() });
    return { case: "image", value: image };
  }
  throw new PiJsonError(at(where, "type"), `a block here is "text" or "image", not ${describe(kind)}`);
}

function textFromPi(value: unknown, where: string): TextContent {
  const read = new Reader(value, where);
  read.string("type");
  const text = read.string("text");
  const textSignature = read.optionalString("textSignature");
  return create(TextContentSchema, { text, textSignature, extraJson: read.extraJson() });
}

function usageFromPi(value: unknown, where: string): Usage {
  const read = new Reader(value, where);
  const input = read.integer("input");
  const output = read.integer("output");
  const cacheRead = read.integer("cacheRead");
  const cacheWrite = read.integer("cacheWrite");
  const totalTokens = read.integer("totalTokens");
  const cost = read.child("cost", costFromPi);
  return create(UsageSchema, { input, output, cacheRead, cacheWrite, totalTokens, cost, extraJson: read.extraJson() });
}

function costFromPi(value: unknown, where: string): Cost {
  const read = new Reader(value, where);
  const input = read.number("input");
  const output = read.number("output");
  const cacheRead = read.number("cacheRead");
  const cacheWrite = read.number("cacheWrite");
  const total = read.number("total");
  return create(CostSchema, { input, output, cacheRead, cacheWrite, total, extraJson: read.extraJson() });
}

function toolFromPi(value: unknown, where: string): Tool {
  const read = new Reader(value, where);
  const name = read.string("name");
  const description = read.string("description", "");
  const parametersJson = read.objectText("parameters");
  return create(ToolSchema, { name, description, parametersJson, extraJson: read.extraJson() });
}

// --- writing -------------------------------------------------------------------------------------

/** Convert a message to its pi-JSON object. */
export function messageToPi(message: AgentMessage | UserMessage | AssistantMessage | ToolResultMessage): JsonObject {
  switch (message.$typeName) {
    case "pi.ai.v1.UserMessage":
      return userToPi(message);
    case "pi.ai.v1.AssistantMessage":
      return assistantToPi(message);
    case "pi.ai.v1.ToolResultMessage":
      return toolResultToPi(message);
  }
  const role = message.role;
  switch (role.case) {
    case "user":
      return userToPi(role.value);
    case "assistant":
      return assistantToPi(role.value);
    case "toolResult":
      return toolResultToPi(role.value);
    case "custom":
      return { role: role.value.role, ...jsonObject(role.value.fieldsJson, "CustomMessage.fields_json") };
  }
  throw new PiJsonError("AgentMessage.role", "no role is set");
}

/** Convert a transcript entry back to its line: a session file's entry if it came from one. */
export function entryToPi(entry: TranscriptEntry): JsonObject {
  const body = entry.entry;
  if (body.case === "sessionEntry") {
    return { type: body.value.type, ...jsonObject(body.value.fieldsJson, "SessionEntry.fields_json") };
  }
  if (body.case !== "message") throw new PiJsonError("TranscriptEntry.entry", "no entry is set");
  const out = messageToPi(body.value);
  if (entry.sessionJson) return { ...jsonObject(entry.sessionJson, "TranscriptEntry.session_json"), message: out };
  return out;
}

/** Convert an assistant message to its pi-JSON object. */
export function assistantToPi(message: AssistantMessage): JsonObject {
  const out: JsonObject = {
    role: "assistant",
    content: message.content.map(assistantBlockToPi),
    api: message.api,
    provider: message.provider,
    model: message.model,
  };
  if (message.usage !== undefined) out["usage"] = usageToPi(message.usage);
  const reason = STOP_REASON_NAMES.get(message.stopReason);
  if (reason !== undefined) out["stopReason"] = reason;
  out["timestamp"] = int64ToPi(message.timestamp, "AssistantMessage.timestamp");
  if (message.errorMessage !== undefined) out["errorMessage"] = message.errorMessage; // pi sets it last, once the call failed
  return withExtra(out, message.extraJson, "AssistantMessage");
}

/** Convert a context to its pi-JSON object. */
export function contextToPi(context: AgentContext): JsonObject {
  const out: JsonObject = {};
  if (context.systemPrompt !== undefined) out["systemPrompt"] = context.systemPrompt;
  out["messages"] = context.messages.map((message) => messageToPi(message));
  if (context.tools.length > 0) out["tools"] = context.tools.map(toolToPi);
  return withExtra(out, context.extraJson, "AgentContext");
}

function userToPi(message: UserMessage): JsonObject {
  const only = message.content.length === 1 ? message.content[0]!.block : undefined;
  const content: JsonValue =
    message.stringContent && only?.case === "text"
      ? only.value.text
      : message.content.map((item) => mediaBlockToPi(item.block));
  const out: JsonObject = {
    role: "user",
    content,
    timestamp: int64ToPi(message.timestamp, "UserMessage.timestamp"),
  };
  return withExtra(out, message.extraJson, "UserMessage");
}

function toolResultToPi(message: ToolResultMessage): JsonObject {
  const out: JsonObject = {
    role: "toolResult",
    toolCallId: message.toolCallId,
    toolName: message.toolName,
    content: message.content.map((item) => mediaBlockToPi(item.block)),
  };
  if (message.detailsJson !== undefined) {
    out["details"] = parseJson(message.detailsJson, "ToolResultMessage.details_json");
  }
  out["isError"] = message.isError;
  out["timestamp"] = int64ToPi(message.timestamp, "ToolResultMessage.timestamp");
  return withExtra(out, message.extraJson, "ToolResultMessage");
}

function assistantBlockToPi(content: AssistantContent): JsonObject {
  const block = content.block;
  switch (block.case) {
    case "text":
      return textToPi(block.value);
    case "thinking": {
      const thinking = block.value;
      const out: JsonObject = { type: "thinking", thinking: thinking.thinking };
      if (thinking.thinkingSignature !== undefined) out["thinkingSignature"] = thinking.thinkingSignature;
      if (thinking.redacted !== undefined) out["redacted"] = thinking.redacted;
      return withExtra(out, thinking.extraJson, "ThinkingContent");
    }
    case "toolCall": {
      const call = block.value;
      const out: JsonObject = {
        type: "toolCall",
        id: call.id,
        name: call.name,
        arguments: parseJson(call.argumentsJson, "ToolCall.arguments_json"),
      };
      if (call.rawArguments !== undefined) out["rawArguments"] = call.rawArguments;
      if (call.thoughtSignature !== undefined) out["thoughtSignature"] = call.thoughtSignature;
      return withExtra(out, call.extraJson, "ToolCall");
    }
  }
  throw new PiJsonError("AssistantContent.block", "no block is set");
}

function mediaBlockToPi(block: UserContent["block"] | ToolResultContent["block"]): JsonObject {
  switch (block.case) {
    case "text":
      return textToPi(block.value);
    case "image": {
      const image = block.value;
      const data = Buffer.from(image.data.buffer, image.data.byteOffset, image.data.byteLength).toString("base64");
      return withExtra({ type: "image", data, mimeType: image.mimeType }, image.extraJson, "ImageContent");
    }
  }
  throw new PiJsonError("content.block", "no block is set");
}

function textToPi(block: TextContent): JsonObject {
  const out: JsonObject = { type: "text", text: block.text };
  if (block.textSignature !== undefined) out["textSignature"] = block.textSignature;
  return withExtra(out, block.extraJson, "TextContent");
}

function usageToPi(usage: Usage): JsonObject {
  const out: JsonObject = {
    input: int64ToPi(usage.input, "Usage.input"),
    output: int64ToPi(usage.output, "Usage.output"),
    cacheRead: int64ToPi(usage.cacheRead, "Usage.cache_read"),
    cacheWrite: int64ToPi(usage.cacheWrite, "Usage.cache_write"),
    totalTokens: int64ToPi(usage.totalTokens, "Usage.total_tokens"),
  };
  const cost = usage.cost;
  if (cost !== undefined) {
    // JSON.stringify writes integral doubles without a fraction, as pi does: no conversion needed.
    const { input, output, cacheRead, cacheWrite, total } = cost;
    out["cost"] = withExtra({ input, output, cacheRead, cacheWrite, total }, cost.extraJson, "Cost");
  }
  return withExtra(out, usage.extraJson, "Usage");
}

function toolToPi(tool: Tool): JsonObject {
  const out: JsonObject = {
    name: tool.name,
    description: tool.description,
    parameters: parseJson(tool.parametersJson, "Tool.parameters_json"),
  };
  return withExtra(out, tool.extraJson, "Tool");
}

/** An int64 as a JSON number; one beyond 2^53 would change on the way, so it is refused. */
function int64ToPi(value: bigint, where: string): number {
  if (value < SAFE_MIN || value > SAFE_MAX) {
    throw new PiJsonError(where, `${value} is beyond 2^53, so a JavaScript JSON number cannot hold it exactly`);
  }
  return Number(value);
}

/** `out` with the object's extras: the keys it kept, and without the keys it lacked. */
function withExtra(out: JsonObject, extraJson: string, where: string): JsonObject {
  if (!extraJson) return out;
  const extra = jsonObject(extraJson, `${where}.extra_json`);
  const absent = extra[ABSENT_KEY];
  if (Object.hasOwn(extra, ABSENT_KEY)) {
    if (!Array.isArray(absent)) throw new PiJsonError(`${where}.extra_json`, `${ABSENT_KEY} is not a list of keys`);
    for (const key of absent) if (typeof key === "string") delete out[key];
    delete extra[ABSENT_KEY];
  }
  // Spreading defines each key as an own property ("__proto__" included); a key already written
  // keeps its place and takes the extra's value.
  return { ...out, ...extra };
}

function jsonObject(text: string, where: string): JsonObject {
  const value = parseJson(text, where);
  if (!isObject(value)) throw new PiJsonError(where, `expected a JSON object, got ${typeName(value)}`);
  return value as JsonObject;
}

function parseJson(text: string, where: string): JsonValue {
  try {
    return JSON.parse(text) as JsonValue;
  } catch (error) {
    throw new PiJsonError(where, `not valid JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** Compact JSON text, as JSON.stringify writes it: the form of every `*Json` field. */
function dumpJson(value: unknown, where: string): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    throw new PiJsonError(where, `not JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (text === undefined) throw new PiJsonError(where, `not JSON: ${typeof value}`);
  return text;
}

/** The object without `key`; Object.fromEntries defines "__proto__" as an own key too. */
function without(value: JsonRecord, key: string): JsonRecord {
  return Object.fromEntries(Object.entries(value).filter(([name]) => name !== key));
}

function has(value: JsonRecord, key: string): boolean {
  // undefined counts as absent, as JSON.stringify drops it.
  return Object.hasOwn(value, key) && value[key] !== undefined;
}

function isObject(value: unknown): value is JsonRecord {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !ArrayBuffer.isView(value);
}

/** The JSON type's name, with its article. */
function typeName(value: unknown): string {
  if (isObject(value)) return "an object";
  if (Array.isArray(value)) return "an array";
  if (value === null) return "null";
  if (value === undefined) return "nothing";
  return typeof value === "string" ? "a string" : typeof value === "boolean" ? "a boolean" : "a number";
}

/** A value in an error: its type, and the start of its JSON. */
function describe(value: unknown): string {
  if (value === MISSING || value === undefined) return "nothing (the key is missing)";
  const text = JSON.stringify(value) ?? String(value);
  return `${typeName(value)}, ${text.length > 40 ? `${text.slice(0, 40)}...` : text}`;
}

// --- events --------------------------------------------------------------------------------------

// pi's event families and the block each refers to.
const FAMILIES = { text: "text", thinking: "thinking", toolcall: "toolCall" } as const;
type Family = keyof typeof FAMILIES;
type EventInit = MessageInitShape<typeof ModelEventSchema>["event"];

/** Convert one pi-JSON AssistantMessageEvent; its `partial` becomes ModelEvent.partial. */
export function eventFromPi(value: unknown, where = ""): ModelEvent {
  const read = new Reader(value, where);
  const kind = read.string("type");
  if (kind === "done" || kind === "error") {
    const reasonName = read.string("reason");
    const reason = STOP_REASONS.get(reasonName);
    if (reason === undefined) {
      throw new PiJsonError(at(where, "reason"), `expected one of ${REASON_LIST}, got ${JSON.stringify(reasonName)}`);
    }
    const key = kind === "done" ? "message" : "error";
    const message = read.child(key, assistantFromPi);
    if (message === undefined) throw new PiJsonError(at(where, key), "required");
    noExtra(read);
    return create(ModelEventSchema, { event: { case: kind, value: { reason, message } } });
  }

  const partial = read.child("partial", assistantFromPi);
  if (partial === undefined) {
    throw new PiJsonError(at(where, "partial"), "required (pi sends the partial message with every event)");
  }
  if (kind === "start") {
    noExtra(read);
    const header = clone(AssistantMessageSchema, partial); // its own copy: an Accumulator changes the partial
    return create(ModelEventSchema, { event: { case: "start", value: { header } }, partial });
  }
  const split = kind.indexOf("_");
  const family = (split < 0 ? kind : kind.slice(0, split)) as Family;
  const step = split < 0 ? "" : kind.slice(split + 1);
  if (!Object.hasOwn(FAMILIES, family) || !["start", "delta", "end"].includes(step)) {
    throw new PiJsonError(at(where, "type"), `not a pi event type: ${JSON.stringify(kind)}`);
  }
  const index = read.integer("contentIndex");
  if (index < 0n || index >= BigInt(partial.content.length)) {
    throw new PiJsonError(at(where, "contentIndex"), `${index} is not a block of the partial message`);
  }
  const contentIndex = Number(index);
  const block = partial.content[contentIndex]!.block;
  if (block.case !== FAMILIES[family]) {
    throw new PiJsonError(at(where, "contentIndex"), `block ${index} of the partial is not a ${family} block`);
  }
  const event = blockEvent(read, family, step, block, contentIndex);
  noExtra(read);
  return create(ModelEventSchema, { event, partial });
}

/** The body of a block event, from the keys of the pi event and the block of its partial. */
function blockEvent(
  read: Reader,
  family: Family,
  step: string,
  block: AssistantContent["block"],
  contentIndex: number,
): EventInit {
  if (step === "delta") {
    const value = { contentIndex, delta: read.string("delta") };
    if (family === "text") return { case: "textDelta", value };
    return family === "thinking" ? { case: "thinkingDelta", value } : { case: "toolcallDelta", value };
  }
  if (block.case === "text") {
    if (step === "start") return { case: "textStart", value: { contentIndex } };
    endContent(read, block.value.text, contentIndex);
    return { case: "textEnd", value: { contentIndex, textSignature: block.value.textSignature } };
  }
  if (block.case === "thinking") {
    if (step === "start") return { case: "thinkingStart", value: { contentIndex } };
    endContent(read, block.value.thinking, contentIndex);
    const { thinkingSignature, redacted } = block.value;
    return { case: "thinkingEnd", value: { contentIndex, thinkingSignature, redacted } };
  }
  if (block.case === "toolCall") {
    const { id, name } = block.value;
    if (step === "start") return { case: "toolcallStart", value: { contentIndex, id, name } };
    const call = read.child("toolCall", assistantBlock);
    if (call?.block.case !== "toolCall") {
      throw new PiJsonError(at(read.where, "toolCall"), "required, a toolCall block");
    }
    return { case: "toolcallEnd", value: { contentIndex, toolCall: call.block.value } };
  }
  throw new PiJsonError(at(read.where, "contentIndex"), `block ${contentIndex} of the partial has no block set`);
}

/** Convert an event to pi's AssistantMessageEvent; non-terminal events need their `partial`. */
export function eventToPi(event: ModelEvent): JsonObject {
  const kind = eventKind(event);
  const body = event.event;
  if (body.case === "done" || body.case === "error") {
    const reason = STOP_REASON_NAMES.get(body.value.reason);
    if (reason === undefined) throw new PiJsonError(`${kind}.reason`, "must be set");
    if (body.value.message === undefined) throw new PiJsonError(`${kind}.message`, "required");
    const message = assistantToPi(body.value.message);
    return body.case === "done" ? { type: "done", reason, message } : { type: "error", reason, error: message };
  }
  if (body.case === "start") {
    const partial = event.partial ?? body.value.header;
    if (partial === undefined) throw new PiJsonError("start", "neither a partial nor a header is set");
    return { type: "start", partial: assistantToPi(partial) };
  }
  if (body.case === undefined) throw new PiJsonError("ModelEvent.event", "no event kind is set");
  const partial = event.partial;
  if (partial === undefined) {
    throw new PiJsonError(kind, "pi-JSON events carry the partial message; apply the event with an Accumulator");
  }
  const contentIndex = body.value.contentIndex;
  const out: JsonObject = { type: kind, contentIndex };
  if (body.case === "textDelta" || body.case === "thinkingDelta" || body.case === "toolcallDelta") {
    out["delta"] = body.value.delta;
  } else if (body.case === "toolcallEnd") {
    out["toolCall"] = assistantBlockToPi(
      create(AssistantContentSchema, {
        block: body.value.toolCall === undefined ? undefined : { case: "toolCall", value: body.value.toolCall },
      }),
    );
  } else if (body.case === "textEnd" || body.case === "thinkingEnd") {
    const block = partial.content[contentIndex]?.block;
    if (block === undefined) {
      throw new PiJsonError(`${kind}.content_index`, `${contentIndex} is not a block of the partial`);
    }
    out["content"] = block.case === "text" ? block.value.text : block.case === "thinking" ? block.value.thinking : "";
  }
  out["partial"] = assistantToPi(partial);
  return out;
}

/** `text_end`/`thinking_end` repeat the block's content, which must be what the partial holds. */
function endContent(read: Reader, held: string, index: number): void {
  if (read.string("content") !== held) {
    const detail = `differs from block ${index} of the partial, so it cannot be rebuilt`;
    throw new PiJsonError(at(read.where, "content"), detail);
  }
}

function noExtra(read: Reader): void {
  const extra = read.extraJson();
  if (extra) {
    const [key] = Object.keys(JSON.parse(extra) as JsonRecord);
    throw new PiJsonError(at(read.where, key!), "not a field of this event");
  }
}
