/**
 * pi-JSON: the transcript shape pi writes (`role`/`type` discriminators, camelCase, "toolUse").
 *
 * It is lossless on what pi writes: reading and writing back with JSON.stringify gives the same
 * text. Keys the schema does not model go to the object's `extraJson` (JSON object text) and are
 * written back from it, and only those (the JSON-text rule "json.extra" refuses a modelled key
 * there), so what the fields say is what is written: an edit is never undone by a kept value. A
 * key the object lacked leaves its field unset (the fields pi may leave out are proto3 `optional`),
 * and the writer leaves it out again. The one value a field cannot hold is an empty list or object
 * under a key the writer leaves out when empty (a context's `tools: []`): it stays in `extraJson`,
 * written while the field is empty. The writer writes each object's keys in the order pi usually
 * does; an object whose keys came in another order (pi adds some keys as a
 * response goes on, in an order that differs by provider) lists its keys under "$order" in
 * `extraJson`, and is written in that order. Messages of roles the schema does not model become
 * CustomMessage. The lines of a pi session file are pi-session.ts's, which reads and writes them
 * with this module's readers and writers. `*Json` fields hold compact JSON text, as JSON.stringify
 * writes it.
 *
 * Numbers: JSON.parse has one number type, so a cost written `1.0` reads as 1 and is written back
 * as 1, as JSON.stringify (and so pi) writes it. The int64 fields (timestamps, token counts) are
 * bigint: they are read from JSON numbers that are safe integers (JSON.parse rounds larger ones),
 * and written back while they are safe integers.
 *
 * Bad input throws PiJsonError with the `path` of the offending value from the object read, e.g.
 * `content[1].type` for a message, `message.content[0].text` for a session line, "" for the object
 * itself. An enum value pi does not define (a stop reason, a thinking level) is bad input too.
 * Errors in writing name the field by its message type, e.g. `UserMessage.timestamp`.
 */

import {
  clone,
  create,
  type DescMessage,
  type JsonObject,
  type JsonValue,
  type MessageInitShape,
} from "@bufbuild/protobuf";
import { eventKind } from "./events.js";
import {
  type AssistantContent,
  AssistantContentSchema,
  type ImageContent,
  ImageContentSchema,
  type TextContent,
  TextContentSchema,
  ThinkingContentSchema,
  type ToolCall,
  ToolCallSchema,
  type ToolResultContent,
  ToolResultContentSchema,
  type UserContent,
  UserContentSchema,
} from "./gen/pi/ai/v1/content_pb.js";
import { type AgentContext, AgentContextSchema } from "./gen/pi/ai/v1/context_pb.js";
import { type ModelEvent, ModelEventSchema } from "./gen/pi/ai/v1/event_pb.js";
import {
  type AgentMessage,
  AgentMessageSchema,
  type AssistantMessage,
  AssistantMessageSchema,
  type Cost,
  CostSchema,
  type DeferredHandle,
  DeferredHandleSchema,
  type Diagnostic,
  type DiagnosticError,
  DiagnosticErrorSchema,
  DiagnosticSchema,
  ModelThinkingLevel,
  NestedCallStatus,
  type NestedToolCall,
  NestedToolCallSchema,
  type NestedToolCalls,
  NestedToolCallsSchema,
  StopReason,
  type SystemMessage,
  SystemMessageSchema,
  type SystemSection,
  SystemSectionSchema,
  type ToolResultMessage,
  ToolResultMessageSchema,
  type Usage,
  UsageSchema,
  type UserMessage,
  UserMessageSchema,
} from "./gen/pi/ai/v1/message_pb.js";
import {
  type ConstrainedSampling,
  ConstrainedSamplingSchema,
  GrammarSamplingSchema,
  JsonSchemaSamplingSchema,
  Strictness,
  type Tool,
  type ToolReference,
  ToolReferenceSchema,
  ToolSchema,
} from "./gen/pi/ai/v1/tool_pb.js";
import { modelledKeys } from "./json-text.js";
import { fromProto, mapStrings, toProto } from "./surrogates.js";

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
export function at(where: string, key: string): string {
  return where ? `${where}.${key}` : key;
}

/** pi's names of an enum's values, both ways. */
class Names<E> {
  readonly values: ReadonlyMap<string, E>;
  readonly names: ReadonlyMap<E, string>;
  readonly list: string;

  constructor(entries: Array<[string, E]>) {
    this.values = new Map(entries);
    this.names = new Map(entries.map(([name, value]) => [value, name]));
    this.list = entries.map(([name]) => name).join(", ");
  }

  /** pi's name of a value the object must have set. */
  name(value: E, where: string): string {
    const name = this.names.get(value);
    if (name === undefined) throw new PiJsonError(where, `must be one of ${this.list}, got ${String(value)}`);
    return name;
  }
}

const STOP_REASONS = new Names<StopReason>([
  ["stop", StopReason.STOP],
  ["length", StopReason.LENGTH],
  ["toolUse", StopReason.TOOL_USE],
  ["error", StopReason.ERROR],
  ["aborted", StopReason.ABORTED],
  ["pending", StopReason.PENDING],
  ["deferred", StopReason.DEFERRED],
]);
const THINKING_LEVELS = new Names<ModelThinkingLevel>([
  ["off", ModelThinkingLevel.OFF],
  ["minimal", ModelThinkingLevel.MINIMAL],
  ["low", ModelThinkingLevel.LOW],
  ["medium", ModelThinkingLevel.MEDIUM],
  ["high", ModelThinkingLevel.HIGH],
  ["xhigh", ModelThinkingLevel.XHIGH],
  ["max", ModelThinkingLevel.MAX],
]);
const NESTED_CALL_STATUSES = new Names<NestedCallStatus>([
  ["ok", NestedCallStatus.OK],
  ["error", NestedCallStatus.ERROR],
  ["unfinished", NestedCallStatus.UNFINISHED],
]);
const STRICTNESS = new Names<Strictness>([
  ["prefer", Strictness.PREFER],
  ["require", Strictness.REQUIRE],
]);
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

export type Read<T> = (value: unknown, where: string) => T;
export type JsonRecord = Record<string, unknown>;

// --- key order -----------------------------------------------------------------------------------

/** The keys of one pi-JSON object type, in the order the writer writes them. */
export class Shape {
  readonly known: ReadonlySet<string>;

  constructor(readonly keys: readonly string[]) {
    this.known = new Set(keys);
  }
}

/** The Shape of an object whose message's `field` lists its keys (json-text.ts's modelledKeys). */
function shape(schema: DescMessage, field = "extra_json"): Shape {
  return new Shape(modelledKeys(schema, field));
}

// Each object type's keys in the writer's order: the order pi builds the object in, with the keys
// it adds later (as a response goes on) after the ones it starts with. The schema states them, as
// the modelled_keys of each message's extra_json.
const SHAPES = {
  assistant: shape(AssistantMessageSchema),
  system: shape(SystemMessageSchema),
  user: shape(UserMessageSchema),
  toolResult: shape(ToolResultMessageSchema),
  text: shape(TextContentSchema),
  thinking: shape(ThinkingContentSchema),
  toolCall: shape(ToolCallSchema),
  image: shape(ImageContentSchema),
  usage: shape(UsageSchema),
  cost: shape(CostSchema),
  context: shape(AgentContextSchema),
  tool: shape(ToolSchema),
  toolReference: shape(ToolReferenceSchema),
  jsonSchema: shape(JsonSchemaSamplingSchema),
  grammar: shape(GrammarSamplingSchema),
  variants: shape(GrammarSamplingSchema, "variants_extra_json"),
  diagnostic: shape(DiagnosticSchema),
  diagnosticError: shape(DiagnosticErrorSchema),
  deferred: shape(DeferredHandleSchema),
  nestedCalls: shape(NestedToolCallsSchema),
  nestedCall: shape(NestedToolCallSchema),
} as const;

// Whether a call of this module is already in the mapped text (surrogates.ts): the public readers
// and writers map once, at the outermost call, and call one another inside it.
let mapping = false;

export function reads<A extends unknown[], R>(
  read: (value: unknown, ...rest: A) => R,
): (value: unknown, ...rest: A) => R {
  return (value, ...rest) => {
    if (mapping) return read(value, ...rest);
    mapping = true;
    try {
      return read(mapStrings(value, toProto), ...rest);
    } finally {
      mapping = false;
    }
  };
}

export function writes<A extends unknown[]>(write: (...args: A) => JsonObject): (...args: A) => JsonObject {
  return (...args) => {
    if (mapping) return write(...args);
    mapping = true;
    try {
      return mapStrings(write(...args), fromProto) as JsonObject;
    } finally {
      mapping = false;
    }
  };
}

/** The key of `extraJson` that lists an object's keys when their order differs from the writer's. */
export const ORDER_KEY = "$order";

/** `out` with the keys of `order` first, in that order, then the others as they are. */
export function inOrder(out: JsonObject, order: readonly string[]): JsonObject {
  const entries: Array<[string, JsonValue]> = [];
  const placed = new Set<string>();
  for (const key of order) {
    if (Object.hasOwn(out, key) && !placed.has(key)) {
      placed.add(key);
      entries.push([key, out[key]!]);
    }
  }
  for (const [key, value] of Object.entries(out)) if (!placed.has(key)) entries.push([key, value]);
  // Object.fromEntries defines each key as an own property, "__proto__" included.
  return Object.fromEntries(entries) as JsonObject;
}

// --- reading -------------------------------------------------------------------------------------

const MISSING = Symbol("missing");

/** Reads the known keys of one pi-JSON object; whatever it does not consume becomes extras. */
export class Reader {
  readonly obj: JsonRecord;
  readonly extra = new Map<string, unknown>();
  private readonly seen = new Set<string>();

  constructor(
    value: unknown,
    readonly where: string,
    /** The object type's keys in the writer's order; without it, the order is not kept. */
    private readonly shape?: Shape,
  ) {
    if (!isObject(value)) throw new PiJsonError(where, `expected an object, got ${typeName(value)}`);
    this.obj = value;
  }

  private take(key: string): unknown {
    this.seen.add(key);
    return has(this.obj, key) ? this.obj[key] : MISSING;
  }

  fail(key: string, expected: string, value: unknown, note = ""): PiJsonError {
    return new PiJsonError(at(this.where, key), `expected ${expected}, got ${describe(value)}${note}`);
  }

  /** The value of `key`, read by the caller; undefined when absent. */
  value(key: string): unknown {
    const value = this.take(key);
    return value === MISSING ? undefined : value;
  }

  string(key: string): string {
    const value = this.take(key);
    if (typeof value !== "string") throw this.fail(key, "a string", value);
    return value;
  }

  optionalString(key: string): string | undefined {
    return has(this.obj, key) ? this.string(key) : undefined;
  }

  boolean(key: string): boolean {
    const value = this.take(key);
    if (typeof value !== "boolean") throw this.fail(key, "a boolean", value);
    return value;
  }

  optionalBoolean(key: string): boolean | undefined {
    return has(this.obj, key) ? this.boolean(key) : undefined;
  }

  integer(key: string): bigint {
    const value = this.take(key);
    // Beyond 2^53 the integer is the double JSON.parse read, as every runtime reads it.
    if (typeof value === "number" && Number.isInteger(value) && Math.abs(value) < 2 ** 63) return BigInt(value);
    if (typeof value === "bigint" && value >= INT64_MIN && value <= INT64_MAX) return value;
    throw this.fail(key, "a 64-bit integer", value);
  }

  optionalInteger(key: string): bigint | undefined {
    return has(this.obj, key) ? this.integer(key) : undefined;
  }

  optionalNumber(key: string): number | undefined {
    const value = this.take(key);
    if (value === MISSING) return undefined;
    if (typeof value !== "number" || !Number.isFinite(value)) throw this.fail(key, "a number", value);
    // After JSON.parse, 1.0 and 1 are one value, written back as JSON.stringify writes it: 1.
    return value;
  }

  /** One of an enum's pi names; a name pi does not define is refused, as nothing could hold it. */
  choice<E>(key: string, choices: Names<E>): E {
    const name = this.string(key);
    const value = choices.values.get(name);
    if (value === undefined) {
      throw new PiJsonError(at(this.where, key), `expected one of ${choices.list}, got ${JSON.stringify(name)}`);
    }
    return value;
  }

  optionalChoice<E>(key: string, choices: Names<E>): E | undefined {
    return has(this.obj, key) ? this.choice(key, choices) : undefined;
  }

  items<T>(key: string, read: Read<T>): T[] {
    return list(this.take(key), at(this.where, key), read);
  }

  child<T>(key: string, read: Read<T>): T | undefined {
    const value = this.take(key);
    return value === MISSING ? undefined : read(value, at(this.where, key));
  }

  /**
   * A repeated field the writer leaves out when empty. An empty list (or object, for one pi writes
   * as an object) under its key cannot be told from none by the field, so it is kept as an extra.
   */
  omittedWhenEmpty<T>(key: string, read: Read<T[]>, empty: "list" | "object" = "list"): T[] {
    const value = this.take(key);
    if (value === MISSING) return [];
    const isEmpty = empty === "list" ? Array.isArray(value) : isObject(value);
    if (isEmpty && Object.keys(value as object).length === 0) {
      this.extra.set(key, value);
      return [];
    }
    return read(value, at(this.where, key));
  }

  /** A value kept as JSON text; absent stays absent. */
  jsonText(key: string, objectOnly = false): string | undefined {
    const value = this.take(key);
    if (value === MISSING) return undefined;
    if (objectOnly && !isObject(value)) throw this.fail(key, "an object", value);
    return dumpJson(value, at(this.where, key));
  }

  /**
   * The keys nobody read (and the empty values omittedWhenEmpty kept), and the keys' order when
   * the writer's differs, as JSON object text.
   */
  extraJson(): string {
    for (const key of Object.keys(this.obj)) {
      if (!this.seen.has(key) && has(this.obj, key)) this.extra.set(key, this.obj[key]);
    }
    const order = this.order();
    if (order !== undefined) this.extra.set(ORDER_KEY, order);
    return this.extra.size > 0 ? dumpJson(Object.fromEntries(this.extra), this.where) : "";
  }

  /**
   * The object's keys, when the writer (which writes the modelled keys in its order and the extras
   * after them) would write them in another order; undefined when it would not.
   */
  private order(): string[] | undefined {
    if (this.shape === undefined) return undefined;
    const { keys, known } = this.shape;
    const given = Object.keys(this.obj).filter((key) => has(this.obj, key));
    const written = keys.filter((key) => has(this.obj, key));
    if (written.length < given.length) written.push(...given.filter((key) => !known.has(key)));
    return given.every((key, index) => key === written[index]) ? undefined : given;
  }
}

function list<T>(value: unknown, where: string, read: Read<T>): T[] {
  if (!Array.isArray(value)) throw new PiJsonError(where, `expected a list, got ${describe(value)}`);
  return value.map((item: unknown, index) => read(item, `${where}[${index}]`));
}

/** Convert one pi-JSON message: system, user, assistant, toolResult, or any other role (kept as is). */
export const messageFromPi = reads(function messageFromPi(value: unknown, where: string = ""): AgentMessage {
  if (!isObject(value)) throw new PiJsonError(where, `expected an object, got ${typeName(value)}`);
  const role = value.role;
  if (role === "user") return create(AgentMessageSchema, { role: { case: "user", value: userFromPi(value, where) } });
  if (role === "assistant") {
    return create(AgentMessageSchema, { role: { case: "assistant", value: assistantFromPi(value, where) } });
  }
  if (role === "toolResult") {
    return create(AgentMessageSchema, { role: { case: "toolResult", value: toolResultFromPi(value, where) } });
  }
  if (role === "system") {
    return create(AgentMessageSchema, { role: { case: "system", value: systemFromPi(value, where) } });
  }
  if (typeof role === "string" && role) {
    const fieldsJson = dumpJson(without(value, "role"), where);
    return create(AgentMessageSchema, { role: { case: "custom", value: { role, fieldsJson } } });
  }
  const roles = '"system", "user", "assistant" or "toolResult"';
  throw new PiJsonError(at(where, "role"), `expected a role such as ${roles}, got ${describe(role)}`);
});

/** Convert one pi-JSON assistant message. */
export const assistantFromPi = reads(function assistantFromPi(value: unknown, where: string = ""): AssistantMessage {
  const read = new Reader(value, where, SHAPES.assistant);
  read.string("role");
  // One statement per field, in pi's key order: the first bad value is the one named.
  const content = read.items("content", assistantBlock);
  const api = read.optionalString("api");
  const provider = read.optionalString("provider");
  const model = read.optionalString("model");
  const usage = read.child("usage", usageFromPi);
  // Absent only on a partial from an older pi, still streaming; written only when set.
  const stopReason = read.optionalChoice("stopReason", STOP_REASONS) ?? StopReason.UNSPECIFIED;
  const deferred = read.child("deferred", deferredFromPi);
  const timestamp = read.optionalInteger("timestamp");
  const providerThinkingLevel = read.optionalString("providerThinkingLevel");
  const responseId = read.optionalString("responseId");
  const responseModel = read.optionalString("responseModel");
  const rawStopReason = read.optionalString("rawStopReason");
  const endTurn = read.optionalBoolean("endTurn");
  const errorMessage = read.optionalString("errorMessage");
  const diagnostics = read.omittedWhenEmpty("diagnostics", diagnosticsFromPi);
  const durationMs = read.optionalInteger("durationMs");
  const thinkingLevel = read.optionalChoice("thinkingLevel", THINKING_LEVELS) ?? ModelThinkingLevel.UNSPECIFIED;
  return create(AssistantMessageSchema, {
    content,
    api,
    provider,
    model,
    usage,
    stopReason,
    deferred,
    timestamp,
    providerThinkingLevel,
    responseId,
    responseModel,
    rawStopReason,
    endTurn,
    errorMessage,
    diagnostics,
    durationMs,
    thinkingLevel,
    extraJson: read.extraJson(),
  });
});

/**
 * Convert a pi-JSON context: pi's Context (systemPrompt, messages, tools) or its TranscriptContext
 * (messages only, the prompt and tools in system messages), kept as given.
 */
export const contextFromPi = reads(function contextFromPi(value: unknown, where: string = ""): AgentContext {
  const read = new Reader(value, where, SHAPES.context);
  const systemPrompt = read.optionalString("systemPrompt");
  const messages = read.items("messages", messageFromPi);
  const tools = read.omittedWhenEmpty("tools", toolsFromPi);
  return create(AgentContextSchema, { systemPrompt, messages, tools, extraJson: read.extraJson() });
});

export function systemFromPi(value: unknown, where: string): SystemMessage {
  const read = new Reader(value, where, SHAPES.system);
  read.string("role");
  const given = read.obj.content;
  let content: TextContent[];
  if (typeof given === "string") {
    read.string("content");
    content = [create(TextContentSchema, { text: given })];
  } else {
    content = read.items("content", systemBlock);
  }
  const sections = read.omittedWhenEmpty("sections", sectionsFromPi, "object");
  const toolsAdded = read.omittedWhenEmpty("toolsAdded", toolsFromPi);
  const toolsRemoved = read.omittedWhenEmpty("toolsRemoved", toolReferencesFromPi);
  const timestamp = read.optionalInteger("timestamp");
  return create(SystemMessageSchema, {
    content,
    stringContent: typeof given === "string",
    sections,
    toolsAdded,
    toolsRemoved,
    timestamp,
    extraJson: read.extraJson(),
  });
}

function userFromPi(value: JsonRecord, where: string): UserMessage {
  const read = new Reader(value, where, SHAPES.user);
  read.string("role");
  const given = value.content;
  let content: UserContent[];
  if (typeof given === "string") {
    read.string("content");
    content = [create(UserContentSchema, { block: { case: "text", value: { text: given } } })];
  } else {
    content = read.items("content", mediaBlock).map((block) => create(UserContentSchema, { block }));
  }
  const timestamp = read.optionalInteger("timestamp");
  return create(UserMessageSchema, {
    content,
    timestamp,
    stringContent: typeof given === "string",
    extraJson: read.extraJson(),
  });
}

function toolResultFromPi(value: JsonRecord, where: string): ToolResultMessage {
  const read = new Reader(value, where, SHAPES.toolResult);
  read.string("role");
  const toolCallId = read.string("toolCallId");
  const toolName = read.optionalString("toolName");
  const content = read.items("content", mediaBlock).map((block) => create(ToolResultContentSchema, { block }));
  const detailsJson = read.jsonText("details");
  const usage = read.child("usage", usageFromPi);
  const nestedCalls = read.child("nestedCalls", nestedCallsFromPi);
  const isError = read.optionalBoolean("isError");
  const durationMs = read.optionalInteger("durationMs");
  const timestamp = read.optionalInteger("timestamp");
  return create(ToolResultMessageSchema, {
    toolCallId,
    toolName,
    content,
    detailsJson,
    usage,
    nestedCalls,
    isError,
    durationMs,
    timestamp,
    extraJson: read.extraJson(),
  });
}

function blockType(value: unknown, where: string): unknown {
  if (!isObject(value)) throw new PiJsonError(where, `expected an object, got ${typeName(value)}`);
  return value.type;
}

export function assistantBlock(value: unknown, where: string): AssistantContent {
  const kind = blockType(value, where);
  if (kind === "text") {
    return create(AssistantContentSchema, { block: { case: "text", value: textFromPi(value, where) } });
  }
  if (kind === "thinking") {
    const read = new Reader(value, where, SHAPES.thinking);
    read.string("type");
    const thinking = read.string("thinking");
    const thinkingSignature = read.optionalString("thinkingSignature");
    const redacted = read.optionalBoolean("redacted");
    const block = { thinking, thinkingSignature, redacted, extraJson: read.extraJson() };
    return create(AssistantContentSchema, { block: { case: "thinking", value: block } });
  }
  if (kind === "toolCall") {
    const read = new Reader(value, where, SHAPES.toolCall);
    read.string("type");
    const id = read.string("id");
    const name = read.string("name");
    const argumentsJson = read.jsonText("arguments", true);
    const rawArguments = read.optionalString("rawArguments");
    const thoughtSignature = read.optionalString("thoughtSignature");
    const namespace = read.optionalString("namespace");
    const argumentsError = read.optionalString("argumentsError");
    const extraJson = read.extraJson();
    const call = { id, name, argumentsJson, rawArguments, thoughtSignature, namespace, argumentsError, extraJson };
    return create(AssistantContentSchema, { block: { case: "toolCall", value: call } });
  }
  const kinds = '"text", "thinking" or "toolCall"';
  throw new PiJsonError(at(where, "type"), `an assistant block is ${kinds}, not ${describe(kind)}`);
}

function systemBlock(value: unknown, where: string): TextContent {
  const kind = blockType(value, where);
  if (kind !== "text") {
    throw new PiJsonError(at(where, "type"), `a system message's block is "text", not ${describe(kind)}`);
  }
  return textFromPi(value, where);
}

export type MediaBlock = { case: "text"; value: TextContent } | { case: "image"; value: ImageContent };

export function mediaBlock(value: unknown, where: string): MediaBlock {
  const kind = blockType(value, where);
  if (kind === "text") return { case: "text", value: textFromPi(value, where) };
  if (kind === "image") {
    const read = new Reader(value, where, SHAPES.image);
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
  const read = new Reader(value, where, SHAPES.text);
  read.string("type");
  const text = read.string("text");
  const textSignature = read.optionalString("textSignature");
  return create(TextContentSchema, { text, textSignature, extraJson: read.extraJson() });
}

export function usageFromPi(value: unknown, where: string): Usage {
  const read = new Reader(value, where, SHAPES.usage);
  const input = read.optionalInteger("input");
  const output = read.optionalInteger("output");
  const cacheRead = read.optionalInteger("cacheRead");
  const cacheWrite = read.optionalInteger("cacheWrite");
  const reasoning = read.optionalInteger("reasoning"); // absent is not 0: the provider did not say
  const totalTokens = read.optionalInteger("totalTokens");
  const cost = read.child("cost", costFromPi);
  const cacheWrite1h = read.optionalInteger("cacheWrite1h");
  return create(UsageSchema, {
    input,
    output,
    cacheRead,
    cacheWrite,
    reasoning,
    totalTokens,
    cost,
    cacheWrite1h,
    extraJson: read.extraJson(),
  });
}

function costFromPi(value: unknown, where: string): Cost {
  const read = new Reader(value, where, SHAPES.cost);
  const input = read.optionalNumber("input");
  const output = read.optionalNumber("output");
  const cacheRead = read.optionalNumber("cacheRead");
  const cacheWrite = read.optionalNumber("cacheWrite");
  const total = read.optionalNumber("total");
  const totalFromProvider = read.optionalBoolean("totalFromProvider");
  const extraJson = read.extraJson();
  return create(CostSchema, { input, output, cacheRead, cacheWrite, total, totalFromProvider, extraJson });
}

function toolFromPi(value: unknown, where: string): Tool {
  const read = new Reader(value, where, SHAPES.tool);
  const name = read.string("name");
  const description = read.optionalString("description");
  const parametersJson = read.jsonText("parameters", true);
  const constrainedSampling = read.child("constrainedSampling", constrainedSamplingFromPi);
  return create(ToolSchema, { name, description, parametersJson, constrainedSampling, extraJson: read.extraJson() });
}

function toolsFromPi(value: unknown, where: string): Tool[] {
  return list(value, where, toolFromPi);
}

function toolReferencesFromPi(value: unknown, where: string): ToolReference[] {
  return list(value, where, (item, at) => {
    const read = new Reader(item, at, SHAPES.toolReference);
    const name = read.string("name");
    return create(ToolReferenceSchema, { name, extraJson: read.extraJson() });
  });
}

/** pi's `sections` object, in its order; a section set to null (removed) has no text. */
function sectionsFromPi(value: unknown, where: string): SystemSection[] {
  if (!isObject(value)) throw new PiJsonError(where, `expected an object, got ${describe(value)}`);
  return Object.entries(value).map(([name, text]) => {
    if (text !== null && typeof text !== "string") {
      throw new PiJsonError(at(where, name), `expected a string or null, got ${describe(text)}`);
    }
    return create(SystemSectionSchema, { name, text: text ?? undefined });
  });
}

/** pi's `false | {type: "json_schema", strict} | {type: "grammar", variants}`. */
function constrainedSamplingFromPi(value: unknown, where: string): ConstrainedSampling {
  if (value === false) return create(ConstrainedSamplingSchema, { config: { case: "off", value: true } });
  if (!isObject(value)) throw new PiJsonError(where, `expected false or an object, got ${describe(value)}`);
  const kind = value.type;
  if (kind === "json_schema") {
    const read = new Reader(value, where, SHAPES.jsonSchema);
    read.string("type");
    const strict = read.choice("strict", STRICTNESS);
    const jsonSchema = { strict, extraJson: read.extraJson() };
    return create(ConstrainedSamplingSchema, { config: { case: "jsonSchema", value: jsonSchema } });
  }
  if (kind === "grammar") {
    const read = new Reader(value, where, SHAPES.grammar);
    read.string("type");
    const variants = read.child("variants", (item, at) => new Reader(item, at, SHAPES.variants));
    if (variants === undefined) {
      throw new PiJsonError(at(where, "variants"), "required, an object of grammars by format");
    }
    const grammar = create(GrammarSamplingSchema, {
      openaiLark: variants.optionalString("openai_lark"),
      openaiRegex: variants.optionalString("openai_regex"),
      variantsExtraJson: variants.extraJson(),
      extraJson: read.extraJson(),
    });
    return create(ConstrainedSamplingSchema, { config: { case: "grammar", value: grammar } });
  }
  const detail = `expected "json_schema" or "grammar", got ${describe(kind)}`;
  throw new PiJsonError(at(where, "type"), detail);
}

function diagnosticsFromPi(value: unknown, where: string): Diagnostic[] {
  return list(value, where, diagnosticFromPi);
}

function diagnosticFromPi(value: unknown, where: string): Diagnostic {
  const read = new Reader(value, where, SHAPES.diagnostic);
  const type = read.string("type");
  const timestamp = read.integer("timestamp");
  const error = read.child("error", diagnosticErrorFromPi);
  const detailsJson = read.jsonText("details", true);
  return create(DiagnosticSchema, { type, timestamp, error, detailsJson, extraJson: read.extraJson() });
}

function diagnosticErrorFromPi(value: unknown, where: string): DiagnosticError {
  const read = new Reader(value, where, SHAPES.diagnosticError);
  const name = read.optionalString("name");
  const message = read.string("message");
  const stack = read.optionalString("stack");
  const code = read.value("code");
  let init: MessageInitShape<typeof DiagnosticErrorSchema>["code"];
  if (typeof code === "string") init = { case: "codeText", value: code };
  else if (typeof code === "number" && exactNumber(code)) init = { case: "codeNumber", value: code };
  else if (code !== undefined) {
    throw read.fail("code", "a string or a number (a safe integer when integral)", code);
  }
  return create(DiagnosticErrorSchema, { name, message, stack, code: init, extraJson: read.extraJson() });
}

/** Whether a number is one a JSON number gives exactly: finite, and a safe integer if integral. */
function exactNumber(value: number): boolean {
  return Number.isFinite(value) && (!Number.isInteger(value) || Number.isSafeInteger(value));
}

function deferredFromPi(value: unknown, where: string): DeferredHandle {
  const read = new Reader(value, where, SHAPES.deferred);
  const provider = read.string("provider");
  const modelId = read.string("modelId");
  const api = read.string("api");
  const id = read.string("id");
  const expiresAt = read.optionalInteger("expiresAt");
  const pollAfterMs = read.optionalInteger("pollAfterMs");
  const dataJson = read.jsonText("data");
  const extraJson = read.extraJson();
  return create(DeferredHandleSchema, { provider, modelId, api, id, expiresAt, pollAfterMs, dataJson, extraJson });
}

function nestedCallsFromPi(value: unknown, where: string): NestedToolCalls {
  const read = new Reader(value, where, SHAPES.nestedCalls);
  const calls = read.items("calls", nestedCallFromPi);
  const complete = read.boolean("complete");
  return create(NestedToolCallsSchema, { calls, complete, extraJson: read.extraJson() });
}

function nestedCallFromPi(value: unknown, where: string): NestedToolCall {
  const read = new Reader(value, where, SHAPES.nestedCall);
  const id = read.string("id");
  const name = read.string("name");
  const argumentsJson = read.jsonText("arguments", true);
  const argumentsBytes = read.optionalInteger("argumentsBytes");
  const status = read.choice("status", NESTED_CALL_STATUSES);
  const durationMs = read.optionalInteger("durationMs");
  const error = read.optionalString("error");
  const extraJson = read.extraJson();
  const call = { id, name, argumentsJson, argumentsBytes, status, durationMs, error, extraJson };
  return create(NestedToolCallSchema, call);
}

// --- writing -------------------------------------------------------------------------------------

/** Convert a message to its pi-JSON object. */
export const messageToPi = writes(function messageToPi(
  message: AgentMessage | SystemMessage | UserMessage | AssistantMessage | ToolResultMessage,
): JsonObject {
  switch (message.$typeName) {
    case "pi.ai.v1.SystemMessage":
      return systemToPi(message);
    case "pi.ai.v1.UserMessage":
      return userToPi(message);
    case "pi.ai.v1.AssistantMessage":
      return assistantToPi(message);
    case "pi.ai.v1.ToolResultMessage":
      return toolResultToPi(message);
  }
  const role = message.role;
  switch (role.case) {
    case "system":
      return systemToPi(role.value);
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
});

/** Convert an assistant message to its pi-JSON object. */
export const assistantToPi = writes(function assistantToPi(message: AssistantMessage): JsonObject {
  const out: JsonObject = { role: "assistant", content: message.content.map(assistantBlockToPi) };
  put(out, "api", message.api);
  put(out, "provider", message.provider);
  put(out, "model", message.model);
  if (message.usage !== undefined) out.usage = usageToPi(message.usage);
  put(out, "stopReason", STOP_REASONS.names.get(message.stopReason));
  if (message.deferred !== undefined) out.deferred = deferredToPi(message.deferred);
  put(out, "timestamp", optionalInt64ToPi(message.timestamp, "AssistantMessage.timestamp"));
  put(out, "providerThinkingLevel", message.providerThinkingLevel);
  put(out, "responseId", message.responseId);
  put(out, "responseModel", message.responseModel);
  put(out, "rawStopReason", message.rawStopReason);
  put(out, "endTurn", message.endTurn);
  put(out, "errorMessage", message.errorMessage); // pi sets it once the call has failed
  put(out, "diagnostics", diagnosticsToPi(message.diagnostics));
  put(out, "durationMs", optionalInt64ToPi(message.durationMs, "AssistantMessage.duration_ms"));
  put(out, "thinkingLevel", THINKING_LEVELS.names.get(message.thinkingLevel));
  return withExtra(out, message.extraJson, "AssistantMessage", SHAPES.assistant);
});

/** Convert a context to its pi-JSON object. */
export const contextToPi = writes(function contextToPi(context: AgentContext): JsonObject {
  const out: JsonObject = {};
  if (context.systemPrompt !== undefined) out.systemPrompt = context.systemPrompt;
  out.messages = context.messages.map((message) => messageToPi(message));
  if (context.tools.length > 0) out.tools = context.tools.map(toolToPi);
  return withExtra(out, context.extraJson, "AgentContext", SHAPES.context);
});

/** Write an optional key: undefined leaves it out. */
export function put(out: JsonObject, key: string, value: JsonValue | undefined): void {
  if (value !== undefined) out[key] = value;
}

export function systemToPi(message: SystemMessage): JsonObject {
  const only = message.content.length === 1 ? message.content[0]! : undefined;
  const content: JsonValue = message.stringContent && only !== undefined ? only.text : message.content.map(textToPi);
  const out: JsonObject = { role: "system", content };
  put(out, "sections", sectionsToPi(message.sections));
  // Before the tools, as pi's agent loop writes them.
  put(out, "timestamp", optionalInt64ToPi(message.timestamp, "SystemMessage.timestamp"));
  put(out, "toolsAdded", toolsToPi(message.toolsAdded));
  put(out, "toolsRemoved", toolReferencesToPi(message.toolsRemoved));
  return withExtra(out, message.extraJson, "SystemMessage", SHAPES.system);
}

function userToPi(message: UserMessage): JsonObject {
  const only = message.content.length === 1 ? message.content[0]!.block : undefined;
  const content: JsonValue =
    message.stringContent && only?.case === "text"
      ? only.value.text
      : message.content.map((item) => mediaBlockToPi(item.block));
  const out: JsonObject = { role: "user", content };
  put(out, "timestamp", optionalInt64ToPi(message.timestamp, "UserMessage.timestamp"));
  return withExtra(out, message.extraJson, "UserMessage", SHAPES.user);
}

function toolResultToPi(message: ToolResultMessage): JsonObject {
  const out: JsonObject = { role: "toolResult", toolCallId: message.toolCallId };
  put(out, "toolName", message.toolName);
  out.content = message.content.map((item) => mediaBlockToPi(item.block));
  if (message.detailsJson !== undefined) {
    out.details = parseJson(message.detailsJson, "ToolResultMessage.details_json");
  }
  if (message.usage !== undefined) out.usage = usageToPi(message.usage);
  if (message.nestedCalls !== undefined) out.nestedCalls = nestedCallsToPi(message.nestedCalls);
  put(out, "isError", message.isError);
  put(out, "durationMs", optionalInt64ToPi(message.durationMs, "ToolResultMessage.duration_ms"));
  put(out, "timestamp", optionalInt64ToPi(message.timestamp, "ToolResultMessage.timestamp"));
  return withExtra(out, message.extraJson, "ToolResultMessage", SHAPES.toolResult);
}

export function assistantBlockToPi(content: AssistantContent): JsonObject {
  const block = content.block;
  switch (block.case) {
    case "text":
      return textToPi(block.value);
    case "thinking": {
      const thinking = block.value;
      const out: JsonObject = { type: "thinking", thinking: thinking.thinking };
      if (thinking.thinkingSignature !== undefined) out.thinkingSignature = thinking.thinkingSignature;
      if (thinking.redacted !== undefined) out.redacted = thinking.redacted;
      return withExtra(out, thinking.extraJson, "ThinkingContent", SHAPES.thinking);
    }
    case "toolCall": {
      const call = block.value;
      const out: JsonObject = { type: "toolCall", id: call.id, name: call.name };
      if (call.argumentsJson !== undefined) out.arguments = parseJson(call.argumentsJson, "ToolCall.arguments_json");
      if (call.rawArguments !== undefined) out.rawArguments = call.rawArguments;
      if (call.thoughtSignature !== undefined) out.thoughtSignature = call.thoughtSignature;
      if (call.namespace !== undefined) out.namespace = call.namespace;
      if (call.argumentsError !== undefined) out.argumentsError = call.argumentsError;
      return withExtra(out, call.extraJson, "ToolCall", SHAPES.toolCall);
    }
  }
  throw new PiJsonError("AssistantContent.block", "no block is set");
}

export function mediaBlockToPi(block: UserContent["block"] | ToolResultContent["block"]): JsonObject {
  switch (block.case) {
    case "text":
      return textToPi(block.value);
    case "image": {
      const image = block.value;
      const data = Buffer.from(image.data.buffer, image.data.byteOffset, image.data.byteLength).toString("base64");
      const out: JsonObject = { type: "image", data, mimeType: image.mimeType };
      return withExtra(out, image.extraJson, "ImageContent", SHAPES.image);
    }
  }
  throw new PiJsonError("content.block", "no block is set");
}

function textToPi(block: TextContent): JsonObject {
  const out: JsonObject = { type: "text", text: block.text };
  if (block.textSignature !== undefined) out.textSignature = block.textSignature;
  return withExtra(out, block.extraJson, "TextContent", SHAPES.text);
}

export function usageToPi(usage: Usage): JsonObject {
  const out: JsonObject = {};
  put(out, "input", optionalInt64ToPi(usage.input, "Usage.input"));
  put(out, "output", optionalInt64ToPi(usage.output, "Usage.output"));
  put(out, "cacheRead", optionalInt64ToPi(usage.cacheRead, "Usage.cache_read"));
  put(out, "cacheWrite", optionalInt64ToPi(usage.cacheWrite, "Usage.cache_write"));
  put(out, "reasoning", optionalInt64ToPi(usage.reasoning, "Usage.reasoning"));
  put(out, "totalTokens", optionalInt64ToPi(usage.totalTokens, "Usage.total_tokens"));
  if (usage.cost !== undefined) out.cost = costToPi(usage.cost);
  put(out, "cacheWrite1h", optionalInt64ToPi(usage.cacheWrite1h, "Usage.cache_write_1h"));
  return withExtra(out, usage.extraJson, "Usage", SHAPES.usage);
}

function costToPi(cost: Cost): JsonObject {
  // JSON.stringify writes integral doubles without a fraction, as pi does: no conversion needed.
  const out: JsonObject = {};
  put(out, "input", cost.input);
  put(out, "output", cost.output);
  put(out, "cacheRead", cost.cacheRead);
  put(out, "cacheWrite", cost.cacheWrite);
  put(out, "total", cost.total);
  put(out, "totalFromProvider", cost.totalFromProvider);
  return withExtra(out, cost.extraJson, "Cost", SHAPES.cost);
}

function toolToPi(tool: Tool): JsonObject {
  const out: JsonObject = { name: tool.name };
  put(out, "description", tool.description);
  if (tool.parametersJson !== undefined) out.parameters = parseJson(tool.parametersJson, "Tool.parameters_json");
  if (tool.constrainedSampling !== undefined) {
    out.constrainedSampling = constrainedSamplingToPi(tool.constrainedSampling);
  }
  return withExtra(out, tool.extraJson, "Tool", SHAPES.tool);
}

function toolsToPi(tools: readonly Tool[]): JsonObject[] | undefined {
  return tools.length > 0 ? tools.map(toolToPi) : undefined;
}

function toolReferencesToPi(references: readonly ToolReference[]): JsonObject[] | undefined {
  if (references.length === 0) return undefined;
  return references.map((reference) =>
    withExtra({ name: reference.name }, reference.extraJson, "ToolReference", SHAPES.toolReference),
  );
}

function sectionsToPi(sections: readonly SystemSection[]): JsonObject | undefined {
  if (sections.length === 0) return undefined;
  const entries: Array<[string, string | null]> = [];
  const names = new Set<string>();
  for (const [index, section] of sections.entries()) {
    if (names.has(section.name)) {
      const detail = `${JSON.stringify(section.name)} is named twice, and pi's sections are an object`;
      throw new PiJsonError(`SystemMessage.sections[${index}].name`, detail);
    }
    names.add(section.name);
    entries.push([section.name, section.text ?? null]);
  }
  return Object.fromEntries(entries) as JsonObject;
}

function constrainedSamplingToPi(sampling: ConstrainedSampling): JsonValue {
  const config = sampling.config;
  switch (config.case) {
    case "off":
      return false;
    case "jsonSchema": {
      const out = { type: "json_schema", strict: STRICTNESS.name(config.value.strict, "JsonSchemaSampling.strict") };
      return withExtra(out, config.value.extraJson, "JsonSchemaSampling", SHAPES.jsonSchema);
    }
    case "grammar": {
      const grammar = config.value;
      const variants: JsonObject = {};
      put(variants, "openai_lark", grammar.openaiLark);
      put(variants, "openai_regex", grammar.openaiRegex);
      const where = "GrammarSampling.variants";
      const out = { type: "grammar", variants: withExtra(variants, grammar.variantsExtraJson, where, SHAPES.variants) };
      return withExtra(out, grammar.extraJson, "GrammarSampling", SHAPES.grammar);
    }
  }
  throw new PiJsonError("ConstrainedSampling.config", "no choice is set");
}

function diagnosticsToPi(diagnostics: readonly Diagnostic[]): JsonObject[] | undefined {
  return diagnostics.length > 0 ? diagnostics.map(diagnosticToPi) : undefined;
}

function diagnosticToPi(diagnostic: Diagnostic): JsonObject {
  const out: JsonObject = {
    type: diagnostic.type,
    timestamp: int64ToPi(diagnostic.timestamp, "Diagnostic.timestamp"),
  };
  if (diagnostic.error !== undefined) out.error = diagnosticErrorToPi(diagnostic.error);
  if (diagnostic.detailsJson !== undefined) {
    out.details = parseJson(diagnostic.detailsJson, "Diagnostic.details_json");
  }
  return withExtra(out, diagnostic.extraJson, "Diagnostic", SHAPES.diagnostic);
}

function diagnosticErrorToPi(error: DiagnosticError): JsonObject {
  const out: JsonObject = {};
  put(out, "name", error.name);
  out.message = error.message;
  put(out, "stack", error.stack);
  put(out, "code", error.code.value);
  return withExtra(out, error.extraJson, "DiagnosticError", SHAPES.diagnosticError);
}

function deferredToPi(handle: DeferredHandle): JsonObject {
  const out: JsonObject = { provider: handle.provider, modelId: handle.modelId, api: handle.api, id: handle.id };
  put(out, "expiresAt", optionalInt64ToPi(handle.expiresAt, "DeferredHandle.expires_at"));
  put(out, "pollAfterMs", optionalInt64ToPi(handle.pollAfterMs, "DeferredHandle.poll_after_ms"));
  if (handle.dataJson !== undefined) out.data = parseJson(handle.dataJson, "DeferredHandle.data_json");
  return withExtra(out, handle.extraJson, "DeferredHandle", SHAPES.deferred);
}

function nestedCallsToPi(nested: NestedToolCalls): JsonObject {
  const out = { calls: nested.calls.map(nestedCallToPi), complete: nested.complete };
  return withExtra(out, nested.extraJson, "NestedToolCalls", SHAPES.nestedCalls);
}

function nestedCallToPi(call: NestedToolCall): JsonObject {
  const out: JsonObject = { id: call.id, name: call.name };
  if (call.argumentsJson !== undefined) {
    out.arguments = parseJson(call.argumentsJson, "NestedToolCall.arguments_json");
  }
  put(out, "argumentsBytes", optionalInt64ToPi(call.argumentsBytes, "NestedToolCall.arguments_bytes"));
  out.status = NESTED_CALL_STATUSES.name(call.status, "NestedToolCall.status");
  put(out, "durationMs", optionalInt64ToPi(call.durationMs, "NestedToolCall.duration_ms"));
  put(out, "error", call.error);
  return withExtra(out, call.extraJson, "NestedToolCall", SHAPES.nestedCall);
}

/** An int64 as a JSON number; one beyond 2^53 would change on the way, so it is refused. */
function int64ToPi(value: bigint, where: string): number {
  const number = Number(value);
  if (BigInt(number) !== value) {
    throw new PiJsonError(where, `${value} is no double, so a JavaScript JSON number cannot hold it exactly`);
  }
  return number;
}

export function optionalInt64ToPi(value: bigint | undefined, where: string): number | undefined {
  return value === undefined ? undefined : int64ToPi(value, where);
}

/**
 * `out` with the object's extras, in the order it had its keys (the shape's, the writer's, when it
 * had them in that). A key the fields wrote wins over the same key in the extras, which only an
 * empty list or object may be (Reader.omittedWhenEmpty): an edit is never undone. `where` is the
 * message type, `field` the one holding the extras (`extra_json` but for a few).
 */
export function withExtra(
  out: JsonObject,
  extraJson: string,
  where: string,
  shape: Shape,
  field = "extra_json",
): JsonObject {
  if (!extraJson) return out;
  const path = `${where}.${field}`;
  const extra = jsonObject(extraJson, path);
  const order = keyList(extra, ORDER_KEY, path) ?? shape.keys;
  const kept = Object.entries(extra).filter(([key]) => !Object.hasOwn(out, key));
  // Object.fromEntries defines each key as an own property, "__proto__" included.
  return inOrder(Object.fromEntries([...Object.entries(out), ...kept]) as JsonObject, order);
}

/** The list of keys `extra` holds under `marker`, taken out of it; undefined when it has none. */
function keyList(extra: JsonObject, marker: string, path: string): string[] | undefined {
  if (!Object.hasOwn(extra, marker)) return undefined;
  const keys = extra[marker];
  delete extra[marker];
  if (!Array.isArray(keys) || !keys.every((key) => typeof key === "string")) {
    throw new PiJsonError(path, `${marker} is not a list of keys`);
  }
  return keys;
}

function jsonObject(text: string, where: string): JsonObject {
  const value = parseJson(text, where);
  if (!isObject(value)) throw new PiJsonError(where, `expected a JSON object, got ${typeName(value)}`);
  return value as JsonObject;
}

export function parseJson(text: string, where: string): JsonValue {
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

export function isObject(value: unknown): value is JsonRecord {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !ArrayBuffer.isView(value);
}

/** The JSON type's name, with its article. */
export function typeName(value: unknown): string {
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
export const eventFromPi = reads(function eventFromPi(value: unknown, where: string = ""): ModelEvent {
  const read = new Reader(value, where);
  const kind = read.string("type");
  if (kind === "done" || kind === "error") {
    const reasonName = read.string("reason");
    const reason = STOP_REASONS.values.get(reasonName);
    if (reason === undefined) {
      const detail = `expected one of ${STOP_REASONS.list}, got ${JSON.stringify(reasonName)}`;
      throw new PiJsonError(at(where, "reason"), detail);
    }
    const key = kind === "done" ? "message" : "error";
    const message = read.child(key, assistantFromPi);
    if (message === undefined) throw new PiJsonError(at(where, key), "required");
    noExtra(read);
    return create(ModelEventSchema, { event: { case: kind, value: { reason, message } } });
  }

  const partial = read.child("partial", assistantFromPi);
  if (partial === undefined) return deltaOnlyEvent(read, kind);
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
});

/** The body of a block event, from the keys of the pi event and the block of its partial. */
/** A `*_delta` event of a block family. */
function deltaEvent(read: Reader, family: Family, contentIndex: number): EventInit {
  const value = { contentIndex, delta: read.string("delta") };
  if (family === "text") return { case: "textDelta", value };
  return family === "thinking" ? { case: "thinkingDelta", value } : { case: "toolcallDelta", value };
}

function blockEvent(
  read: Reader,
  family: Family,
  step: string,
  block: AssistantContent["block"],
  contentIndex: number,
): EventInit {
  if (step === "delta") return deltaEvent(read, family, contentIndex);
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

/**
 * An event as pi 1.6 writes it in its json and RPC modes (and pi-messages): no `partial`;
 * `toolcall_start` names the call (`id`, `toolName`), and an `*_end` event carries the block's text
 * (`content`, which a receiver rebuilds anyway) and its signature (`contentSignature`).
 */
function deltaOnlyEvent(read: Reader, kind: string): ModelEvent {
  if (kind === "start") {
    noExtra(read);
    return create(ModelEventSchema, { event: { case: "start", value: { header: {} } } });
  }
  const split = kind.indexOf("_");
  const family = (split < 0 ? kind : kind.slice(0, split)) as Family;
  const step = split < 0 ? "" : kind.slice(split + 1);
  if (!Object.hasOwn(FAMILIES, family) || !["start", "delta", "end"].includes(step)) {
    throw new PiJsonError(at(read.where, "type"), `not a pi event type: ${JSON.stringify(kind)}`);
  }
  const index = read.integer("contentIndex");
  if (index < 0n) throw new PiJsonError(at(read.where, "contentIndex"), `${index} is not a block index`);
  const contentIndex = Number(index);
  let event: EventInit;
  if (step === "delta") {
    event = deltaEvent(read, family, contentIndex);
  } else if (family === "toolcall" && step === "start") {
    event = { case: "toolcallStart", value: { contentIndex, id: read.string("id"), name: read.string("toolName") } };
  } else if (step === "start") {
    event =
      family === "text"
        ? { case: "textStart", value: { contentIndex } }
        : { case: "thinkingStart", value: { contentIndex } };
  } else if (family === "toolcall") {
    const call = read.child("toolCall", assistantBlock);
    if (call?.block.case !== "toolCall")
      throw new PiJsonError(at(read.where, "toolCall"), "required, a toolCall block");
    event = { case: "toolcallEnd", value: { contentIndex, toolCall: call.block.value } };
  } else {
    read.optionalString("content"); // the block's text, which the receiver has rebuilt
    const signature = read.optionalString("contentSignature");
    event =
      family === "text"
        ? { case: "textEnd", value: { contentIndex, textSignature: signature } }
        : {
            case: "thinkingEnd",
            value: { contentIndex, thinkingSignature: signature, redacted: read.optionalBoolean("redacted") },
          };
  }
  noExtra(read);
  return create(ModelEventSchema, { event });
}

/** The toolCall block of a `toolcall_end` event. */
function toolCallToPi(call: ToolCall | undefined): JsonObject {
  return assistantBlockToPi(
    create(AssistantContentSchema, { block: call === undefined ? undefined : { case: "toolCall", value: call } }),
  );
}

/** pi 1.6's delta-only form of a non-terminal event (see deltaOnlyEvent). */
function deltaOnlyToPi(event: ModelEvent): JsonObject {
  const body = event.event;
  if (body.case === undefined) throw new PiJsonError("ModelEvent.event", "no event kind is set");
  if (body.case === "start") return { type: "start" };
  if (body.case === "done" || body.case === "error") throw new PiJsonError(eventKind(event), "a terminal event");
  const contentIndex = body.value.contentIndex;
  const out: JsonObject = { type: eventKind(event), contentIndex };
  if (body.case === "toolcallStart") {
    out.id = body.value.id;
    out.toolName = body.value.name;
  } else if (body.case === "textDelta" || body.case === "thinkingDelta" || body.case === "toolcallDelta") {
    out.delta = body.value.delta;
  } else if (body.case === "toolcallEnd") {
    out.toolCall = toolCallToPi(body.value.toolCall);
  } else if (body.case === "textEnd" || body.case === "thinkingEnd") {
    const block = event.partial?.content[contentIndex]?.block;
    if (block?.case === "text") out.content = block.value.text;
    if (block?.case === "thinking") out.content = block.value.thinking;
    const signature = body.case === "textEnd" ? body.value.textSignature : body.value.thinkingSignature;
    if (signature !== undefined) out.contentSignature = signature;
    if (body.case === "thinkingEnd" && body.value.redacted !== undefined) out.redacted = body.value.redacted;
  }
  return out;
}

/** What eventToPi writes. */
export interface EventToPiOptions {
  /** pi 1.6's json and RPC form: no `partial` (an `*_end` event's `content` comes from it when set). */
  readonly deltaOnly?: boolean;
}

/** Convert an event to pi's AssistantMessageEvent; non-terminal events need their `partial`. */
export const eventToPi = writes(function eventToPi(event: ModelEvent, options: EventToPiOptions = {}): JsonObject {
  const kind = eventKind(event);
  const body = event.event;
  if (options.deltaOnly && body.case !== "done" && body.case !== "error") return deltaOnlyToPi(event);
  if (body.case === "done" || body.case === "error") {
    const reason = STOP_REASONS.names.get(body.value.reason);
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
    out.delta = body.value.delta;
  } else if (body.case === "toolcallEnd") {
    out.toolCall = toolCallToPi(body.value.toolCall);
  } else if (body.case === "textEnd" || body.case === "thinkingEnd") {
    const block = partial.content[contentIndex]?.block;
    if (block === undefined) {
      throw new PiJsonError(`${kind}.content_index`, `${contentIndex} is not a block of the partial`);
    }
    out.content = block.case === "text" ? block.value.text : block.case === "thinking" ? block.value.thinking : "";
  }
  out.partial = assistantToPi(partial);
  return out;
});

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
