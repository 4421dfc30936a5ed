/**
 * The lines of a pi session file, typed: a message entry, the header, and every entry type
 * pi-coding-agent defines (a model change, a compaction, a label, ...), with each line's `id`,
 * `parentId` and `timestamp` on its TranscriptEntry, so the session's tree can be walked without
 * reading JSON: `parent` is `parentId` (the entry followed) or `root` (pi's `"parentId":null`).
 *
 * A message entry keeps the keys the schema does not model in `sessionJson`, "{}" for one with none
 * and no id, parent or timestamp either (which tells it from a bare message, whose `sessionJson`
 * is empty). An entry of a type that has no body here keeps its keys but type, id, parentId and
 * timestamp in `SessionEntry.fieldsJson`. Each type's keys are written in the order pi's session
 * manager writes them, which the schema gives as the `modelled_keys` of the body's `extra_json`
 * (read from the generated descriptors, so there is no table of them here); a line whose keys came
 * in another order keeps it under "$order", as pi-json.ts's objects do.
 *
 * The values inside (a compaction's usage and system message, a custom message's blocks) are read
 * and written by pi-json.ts's readers and writers, with the same rules: what the fields say is what
 * is written, and a bad value throws PiJsonError at its path from the line, e.g. `parentId` or
 * `systemMessage.content[0].type`.
 *
 * A whole file is read by `sessionFromPi`, one entry a line: a line that is not one JSON entry (a
 * blank line, text that is not JSON, JSON that is not an object, two entries run together) is kept
 * byte for byte as an `unparsedLine`, with a SessionWarning naming it, and `sessionToPi` writes it
 * back as it was. pi's own loader skips such a line; refusing the file would lose the rest of it.
 */

import { create, type DescMessage, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import { NullValue } from "@bufbuild/protobuf/wkt";
import { AssistantContentSchema, type UserContent, UserContentSchema } from "./gen/pi/ai/v1/content_pb.js";
import {
  type BranchSummary,
  BranchSummarySchema,
  type Compaction,
  CompactionSchema,
  type ContentBlock,
  ContentBlockSchema,
  type ContextEdit,
  ContextEditSchema,
  type ContextReplacement,
  ContextReplacementSchema,
  type CustomEntry,
  CustomEntrySchema,
  type CustomMessageEntry,
  CustomMessageEntrySchema,
  type Label,
  LabelSchema,
  type ModelChange,
  ModelChangeSchema,
  type SessionEntry,
  SessionEntrySchema,
  type SessionHeader,
  SessionHeaderSchema,
  type SessionInfo,
  SessionInfoSchema,
  type ThinkingLevelChange,
  ThinkingLevelChangeSchema,
  type TranscriptEntry,
  TranscriptEntrySchema,
  type UsageRecord,
  UsageRecordSchema,
} from "./gen/pi/ai/v1/transcript_pb.js";
import { modelledKeys } from "./json-text.js";
import {
  assistantBlock,
  assistantBlockToPi,
  at,
  inOrder,
  isObject,
  mediaBlock,
  mediaBlockToPi,
  messageFromPi,
  messageToPi,
  optionalInt64ToPi,
  PiJsonError,
  parseJson,
  put,
  Reader,
  reads,
  Shape,
  systemFromPi,
  systemToPi,
  typeName,
  usageFromPi,
  usageToPi,
  withExtra,
  writes,
} from "./pi-json.js";

type Body = SessionEntry["body"];

// --- key order -----------------------------------------------------------------------------------

const shapes = new Map<DescMessage, Shape>();

/** The keys of `schema`'s line (or object) in the order pi writes them, from the schema. */
function shapeOf(schema: DescMessage): Shape {
  let shape = shapes.get(schema);
  if (shape === undefined) {
    // A message entry's unmodelled keys are its session_json; every body's are its extra_json.
    shape = new Shape(modelledKeys(schema, schema === TranscriptEntrySchema ? "session_json" : "extra_json"));
    shapes.set(schema, shape);
  }
  return shape;
}

/** What an entry of a type without a body is written with, in this order; the rest is its own. */
const BASE = new Shape(["type", "id", "parentId", "timestamp"]);

// --- reading -------------------------------------------------------------------------------------

/** Convert one line of a pi session file, or one bare pi-JSON message. */
export const entryFromPi = reads(function entryFromPi(value: unknown, where: string = ""): TranscriptEntry {
  if (!isObject(value)) throw new PiJsonError(where, `expected an object, got ${typeName(value)}`);
  if (Object.hasOwn(value, "role")) {
    return create(TranscriptEntrySchema, { entry: { case: "message", value: messageFromPi(value, where) } });
  }
  const kind = value.type;
  if (kind === "message" && Object.hasOwn(value, "message")) {
    const shape = shapeOf(TranscriptEntrySchema);
    const read = new Reader(value, where, shape);
    const message = read.child("message", messageFromPi)!; // present: hasOwn said so
    const entry = placed(read, shape);
    entry.entry = { case: "message", value: message };
    const bare = entry.id === undefined && entry.parent.case === undefined && entry.timestamp === undefined;
    entry.sessionJson = read.extraJson() || (bare ? "{}" : "");
    return entry;
  }
  if (typeof kind !== "string" || !kind) {
    throw new PiJsonError(where, 'neither a message (it has no "role") nor a session entry (it has no "type")');
  }
  const body = BODIES.get(kind);
  if (body === undefined) {
    const read = new Reader(value, where, BASE);
    const entry = placed(read, BASE);
    const sessionEntry = create(SessionEntrySchema, { type: kind, fieldsJson: read.extraJson() });
    entry.entry = { case: "sessionEntry", value: sessionEntry };
    return entry;
  }
  const [schema, readBody] = body;
  const shape = shapeOf(schema);
  const read = new Reader(value, where, shape);
  const entry = placed(read, shape);
  // Each body's reader reads its keys in pi's order, and its extras last.
  entry.entry = { case: "sessionEntry", value: create(SessionEntrySchema, { type: kind, body: readBody(read) }) };
  return entry;
});

/** A TranscriptEntry with the line's id, parent and timestamp, each where its type has it. */
function placed(read: Reader, shape: Shape): TranscriptEntry {
  read.string("type");
  const entry = create(TranscriptEntrySchema);
  if (shape.known.has("id")) entry.id = read.optionalString("id");
  if (shape.known.has("parentId")) {
    const parent = read.value("parentId");
    if (parent === null) entry.parent = { case: "root", value: NullValue.NULL_VALUE };
    else if (parent !== undefined) entry.parent = { case: "parentId", value: read.string("parentId") };
  }
  if (shape.known.has("timestamp")) entry.timestamp = read.optionalString("timestamp");
  return entry;
}

function header(read: Reader): Body {
  const value = create(SessionHeaderSchema, {
    version: read.optionalInteger("version"),
    cwd: read.optionalString("cwd"),
    parentSession: read.optionalString("parentSession"),
    extraJson: read.extraJson(),
  });
  return { case: "header", value };
}

function thinkingLevelChange(read: Reader): Body {
  const thinkingLevel = read.optionalString("thinkingLevel");
  const value = create(ThinkingLevelChangeSchema, { thinkingLevel, extraJson: read.extraJson() });
  return { case: "thinkingLevelChange", value };
}

function modelChange(read: Reader): Body {
  const provider = read.optionalString("provider");
  const modelId = read.optionalString("modelId");
  return { case: "modelChange", value: create(ModelChangeSchema, { provider, modelId, extraJson: read.extraJson() }) };
}

function usageRecord(read: Reader): Body {
  const value = create(UsageRecordSchema, {
    kind: read.optionalString("kind"),
    provider: read.optionalString("provider"),
    model: read.optionalString("model"),
    usage: read.child("usage", usageFromPi),
    note: read.optionalString("note"),
    extraJson: read.extraJson(),
  });
  return { case: "usage", value };
}

function compaction(read: Reader): Body {
  const value = create(CompactionSchema, {
    summary: read.optionalString("summary"),
    firstKeptEntryId: read.optionalString("firstKeptEntryId"),
    tokensBefore: read.optionalInteger("tokensBefore"),
    detailsJson: read.jsonText("details") ?? "",
    usage: read.child("usage", usageFromPi),
    fromHook: read.optionalBoolean("fromHook"),
    systemMessage: read.child("systemMessage", systemFromPi),
    extraJson: read.extraJson(),
  });
  return { case: "compaction", value };
}

function branchSummary(read: Reader): Body {
  const value = create(BranchSummarySchema, {
    fromId: read.optionalString("fromId"),
    summary: read.optionalString("summary"),
    detailsJson: read.jsonText("details") ?? "",
    usage: read.child("usage", usageFromPi),
    fromHook: read.optionalBoolean("fromHook"),
    extraJson: read.extraJson(),
  });
  return { case: "branchSummary", value };
}

function custom(read: Reader): Body {
  const customType = read.optionalString("customType");
  const dataJson = read.jsonText("data") ?? "";
  return { case: "custom", value: create(CustomEntrySchema, { customType, dataJson, extraJson: read.extraJson() }) };
}

function customMessage(read: Reader): Body {
  const customType = read.optionalString("customType");
  const given = read.value("content");
  let content: UserContent[];
  if (typeof given === "string") {
    content = [create(UserContentSchema, { block: { case: "text", value: { text: given } } })];
  } else {
    const blocks = given === undefined ? [] : read.items("content", mediaBlock);
    content = blocks.map((block) => create(UserContentSchema, { block }));
  }
  const value = create(CustomMessageEntrySchema, {
    customType,
    content,
    stringContent: typeof given === "string",
    display: read.optionalBoolean("display"),
    detailsJson: read.jsonText("details") ?? "",
    extraJson: read.extraJson(),
  });
  return { case: "customMessage", value };
}

function label(read: Reader): Body {
  const targetId = read.optionalString("targetId");
  const text = read.optionalString("label");
  return { case: "label", value: create(LabelSchema, { targetId, label: text, extraJson: read.extraJson() }) };
}

function sessionInfo(read: Reader): Body {
  const name = read.optionalString("name");
  return { case: "sessionInfo", value: create(SessionInfoSchema, { name, extraJson: read.extraJson() }) };
}

function contextEdit(read: Reader): Body {
  const targetId = read.optionalString("targetId");
  const given = read.value("replacement"); // null (or none): the target is left out of the context
  const replacement =
    given === null || given === undefined ? undefined : replacementFromPi(given, at(read.where, "replacement"));
  return {
    case: "contextEdit",
    value: create(ContextEditSchema, { targetId, replacement, extraJson: read.extraJson() }),
  };
}

function replacementFromPi(value: unknown, where: string): ContextReplacement {
  const read = new Reader(value, where, shapeOf(ContextReplacementSchema));
  const given = read.obj.content;
  let content: ContentBlock[];
  if (typeof given === "string") {
    read.string("content");
    content = [create(ContentBlockSchema, { block: { case: "text", value: { text: given } } })];
  } else {
    content = read.items("content", contentBlock);
  }
  const stringContent = typeof given === "string";
  return create(ContextReplacementSchema, { content, stringContent, extraJson: read.extraJson() });
}

/** A block of any role's content: what a context edit may put in place of a message's. */
function contentBlock(value: unknown, where: string): ContentBlock {
  const image = isObject(value) && value.type === "image";
  return create(ContentBlockSchema, { block: image ? mediaBlock(value, where) : assistantBlock(value, where).block });
}

// The typed entry types: pi's type name -> the body's message, and its reader.
const BODIES = new Map<string, readonly [DescMessage, (read: Reader) => Body]>([
  ["session", [SessionHeaderSchema, header]],
  ["thinking_level_change", [ThinkingLevelChangeSchema, thinkingLevelChange]],
  ["model_change", [ModelChangeSchema, modelChange]],
  ["usage", [UsageRecordSchema, usageRecord]],
  ["compaction", [CompactionSchema, compaction]],
  ["branch_summary", [BranchSummarySchema, branchSummary]],
  ["custom", [CustomEntrySchema, custom]],
  ["custom_message", [CustomMessageEntrySchema, customMessage]],
  ["label", [LabelSchema, label]],
  ["session_info", [SessionInfoSchema, sessionInfo]],
  ["context_edit", [ContextEditSchema, contextEdit]],
]);

// --- writing -------------------------------------------------------------------------------------

/** Convert a transcript entry back to its line: a session file's entry if it came from one. */
export const entryToPi = writes(function entryToPi(entry: TranscriptEntry): JsonObject {
  const body = entry.entry;
  if (body.case === "unparsedLine") {
    throw new PiJsonError("TranscriptEntry.unparsed_line", "a line that is not one JSON entry has no object to write");
  }
  if (body.case === "sessionEntry") {
    const session = body.value;
    const out = placedToPi(session.type, entry);
    if (session.body.case === undefined) {
      return withExtra(out, session.fieldsJson, "SessionEntry", BASE, "fields_json"); // out is in BASE's order
    }
    return bodyToPi(out, session.body);
  }
  if (body.case !== "message") throw new PiJsonError("TranscriptEntry.entry", "no entry is set");
  const message = messageToPi(body.value);
  if (
    entry.id === undefined &&
    entry.parent.case === undefined &&
    entry.timestamp === undefined &&
    !entry.sessionJson
  ) {
    return message; // a bare message
  }
  const out = placedToPi("message", entry);
  out.message = message;
  return finish(out, entry.sessionJson, TranscriptEntrySchema, "session_json");
});

function placedToPi(kind: string, entry: TranscriptEntry): JsonObject {
  const out: JsonObject = { type: kind };
  put(out, "id", entry.id);
  if (entry.parent.case === "parentId") out.parentId = entry.parent.value;
  else if (entry.parent.case === "root") out.parentId = null;
  put(out, "timestamp", entry.timestamp);
  return out;
}

/** `out` with the line's extras, its keys in the order pi writes the type's. */
function finish(out: JsonObject, extraJson: string, schema: DescMessage, field = "extra_json"): JsonObject {
  const shape = shapeOf(schema);
  return extraJson ? withExtra(out, extraJson, schema.name, shape, field) : inOrder(out, shape.keys);
}

/** Write a JSON-text field: empty leaves the key out. */
function putJson(out: JsonObject, key: string, text: string, where: string): void {
  if (text) out[key] = parseJson(text, where);
}

function bodyToPi(out: JsonObject, body: Exclude<Body, { case: undefined }>): JsonObject {
  switch (body.case) {
    case "header":
      return finish(headerToPi(out, body.value), body.value.extraJson, SessionHeaderSchema);
    case "thinkingLevelChange":
      return finish(thinkingLevelChangeToPi(out, body.value), body.value.extraJson, ThinkingLevelChangeSchema);
    case "modelChange":
      return finish(modelChangeToPi(out, body.value), body.value.extraJson, ModelChangeSchema);
    case "usage":
      return finish(usageRecordToPi(out, body.value), body.value.extraJson, UsageRecordSchema);
    case "compaction":
      return finish(compactionToPi(out, body.value), body.value.extraJson, CompactionSchema);
    case "branchSummary":
      return finish(branchSummaryToPi(out, body.value), body.value.extraJson, BranchSummarySchema);
    case "custom":
      return finish(customToPi(out, body.value), body.value.extraJson, CustomEntrySchema);
    case "customMessage":
      return finish(customMessageToPi(out, body.value), body.value.extraJson, CustomMessageEntrySchema);
    case "label":
      return finish(labelToPi(out, body.value), body.value.extraJson, LabelSchema);
    case "sessionInfo":
      return finish(sessionInfoToPi(out, body.value), body.value.extraJson, SessionInfoSchema);
    case "contextEdit":
      return finish(contextEditToPi(out, body.value), body.value.extraJson, ContextEditSchema);
  }
}

function headerToPi(out: JsonObject, header: SessionHeader): JsonObject {
  put(out, "version", optionalInt64ToPi(header.version, "SessionHeader.version"));
  put(out, "cwd", header.cwd);
  put(out, "parentSession", header.parentSession);
  return out;
}

function thinkingLevelChangeToPi(out: JsonObject, change: ThinkingLevelChange): JsonObject {
  put(out, "thinkingLevel", change.thinkingLevel);
  return out;
}

function modelChangeToPi(out: JsonObject, change: ModelChange): JsonObject {
  put(out, "provider", change.provider);
  put(out, "modelId", change.modelId);
  return out;
}

function usageRecordToPi(out: JsonObject, record: UsageRecord): JsonObject {
  put(out, "kind", record.kind);
  put(out, "provider", record.provider);
  put(out, "model", record.model);
  if (record.usage !== undefined) out.usage = usageToPi(record.usage);
  put(out, "note", record.note);
  return out;
}

function compactionToPi(out: JsonObject, compaction: Compaction): JsonObject {
  put(out, "summary", compaction.summary);
  put(out, "firstKeptEntryId", compaction.firstKeptEntryId);
  put(out, "tokensBefore", optionalInt64ToPi(compaction.tokensBefore, "Compaction.tokens_before"));
  putJson(out, "details", compaction.detailsJson, "Compaction.details_json");
  if (compaction.usage !== undefined) out.usage = usageToPi(compaction.usage);
  put(out, "fromHook", compaction.fromHook);
  if (compaction.systemMessage !== undefined) out.systemMessage = systemToPi(compaction.systemMessage);
  return out;
}

function branchSummaryToPi(out: JsonObject, summary: BranchSummary): JsonObject {
  put(out, "fromId", summary.fromId);
  put(out, "summary", summary.summary);
  putJson(out, "details", summary.detailsJson, "BranchSummary.details_json");
  if (summary.usage !== undefined) out.usage = usageToPi(summary.usage);
  put(out, "fromHook", summary.fromHook);
  return out;
}

function customToPi(out: JsonObject, custom: CustomEntry): JsonObject {
  put(out, "customType", custom.customType);
  putJson(out, "data", custom.dataJson, "CustomEntry.data_json");
  return out;
}

function customMessageToPi(out: JsonObject, custom: CustomMessageEntry): JsonObject {
  put(out, "customType", custom.customType);
  const only = custom.content.length === 1 ? custom.content[0]!.block : undefined;
  out.content =
    custom.stringContent && only?.case === "text"
      ? only.value.text
      : custom.content.map((item) => mediaBlockToPi(item.block));
  put(out, "display", custom.display);
  putJson(out, "details", custom.detailsJson, "CustomMessageEntry.details_json");
  return out;
}

function labelToPi(out: JsonObject, label: Label): JsonObject {
  put(out, "targetId", label.targetId);
  put(out, "label", label.label);
  return out;
}

function sessionInfoToPi(out: JsonObject, info: SessionInfo): JsonObject {
  put(out, "name", info.name);
  return out;
}

function contextEditToPi(out: JsonObject, edit: ContextEdit): JsonObject {
  put(out, "targetId", edit.targetId);
  out.replacement = edit.replacement === undefined ? null : replacementToPi(edit.replacement);
  return out;
}

function replacementToPi(replacement: ContextReplacement): JsonObject {
  const only = replacement.content.length === 1 ? replacement.content[0]!.block : undefined;
  const content: JsonValue =
    replacement.stringContent && only?.case === "text" ? only.value.text : replacement.content.map(contentBlockToPi);
  return withExtra({ content }, replacement.extraJson, "ContextReplacement", shapeOf(ContextReplacementSchema));
}

function contentBlockToPi(content: ContentBlock): JsonObject {
  const block = content.block;
  if (block.case === undefined) throw new PiJsonError("ContentBlock.block", "no block is set");
  if (block.case === "image") return mediaBlockToPi(block);
  return assistantBlockToPi(create(AssistantContentSchema, { block }));
}

// --- session files -------------------------------------------------------------------------------

/** A line of a session file that is not one JSON entry, read as an `unparsedLine`. */
export interface SessionWarning {
  /** The line's number, counted from 1. */
  readonly line: number;
  /** Why the line is not one JSON entry. */
  readonly message: string;
}

/** A line of a session file that is JSON of no entry pi-JSON can read: its line, and the error on it. */
export class SessionLineError extends PiJsonError {
  override name = "SessionLineError";

  constructor(
    /** The line's number, counted from 1. */
    readonly line: number,
    error: PiJsonError,
  ) {
    super(error.path, error.detail);
    this.message = `line ${line}: ${error.message}`;
  }
}

/**
 * A pi session file's text as its entries, one a line: the entry of line n is `entries[n - 1]`. A
 * line that is not one JSON entry is an `unparsedLine`, and a SessionWarning naming it is pushed
 * onto `warnings`. A line of JSON that is no entry throws SessionLineError.
 */
export function sessionFromPi(text: string, warnings?: SessionWarning[]): TranscriptEntry[] {
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop(); // the newline that ends the last line starts no line after it
  return lines.map((line, index) => {
    const [entry, unparsed] = sessionLineFromPi(line, index + 1);
    if (unparsed) warnings?.push({ line: index + 1, message: `not one JSON entry (${unparsed}); kept as it is` });
    return entry;
  });
}

/** One line, without its newline: its entry, and why it is not one JSON entry ("" when it is). */
function sessionLineFromPi(line: string, number: number): [TranscriptEntry, string] {
  const unparsed = create(TranscriptEntrySchema, { entry: { case: "unparsedLine", value: line } });
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    if (line.replace(/[ \t\r]/g, "") === "") return [unparsed, "a blank line"];
    return [unparsed, `not JSON: ${error instanceof Error ? error.message : String(error)}`];
  }
  if (!isObject(value)) return [unparsed, `JSON that is not an object: ${typeName(value)}`];
  try {
    return [entryFromPi(value, "entry"), ""];
  } catch (error) {
    throw error instanceof PiJsonError ? new SessionLineError(number, error) : error;
  }
}

/** Entries as the text of a pi session file: each entry's line and a newline, as pi writes them. */
export function sessionToPi(entries: readonly TranscriptEntry[]): string {
  return entries.map((entry) => `${sessionLineToPi(entry)}\n`).join("");
}

/** An entry's line, without its newline: an unparsed line as it was read. */
function sessionLineToPi(entry: TranscriptEntry): string {
  if (entry.entry.case !== "unparsedLine") return JSON.stringify(entryToPi(entry)); // as pi writes a line
  if (entry.entry.value.includes("\n")) {
    throw new PiJsonError("TranscriptEntry.unparsed_line", "holds a newline, so it would be read back as two lines");
  }
  return entry.entry.value;
}
