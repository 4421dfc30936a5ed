/**
 * Message and request rules: what a well-formed message is, beyond what the wire format checks.
 * Each failure throws ValidationError naming the path of the field and the rule, with the same
 * text as the Python runtime, e.g.
 * `StreamRequest.context.messages[2].assistant.content[1].tool_call.arguments_json: must be a JSON
 * object, got list`. The rules for a stream of events live with the Accumulator that applies them.
 */

import type { AgentContext } from "./gen/pi/ai/v1/context_pb.js";
import {
  type AgentMessage,
  type AssistantMessage,
  StopReason,
  type ToolResultMessage,
  type UserMessage,
} from "./gen/pi/ai/v1/message_pb.js";
import type { StreamRequest } from "./gen/pi/ai/v1/service_pb.js";
import { pyFloat } from "./py-text.js";

/** A message that breaks a rule, with the path of the offending field. */
export class ValidationError extends Error {
  override name = "ValidationError";
}

/** Bounds on the JSON text a message may carry; requests above them are refused. */
export interface Limits {
  /** Largest `*_json` field, in bytes of UTF-8. */
  maxJsonBytes: number;
  /** Deepest nesting of objects and arrays in a `*_json` field. */
  maxJsonDepth: number;
}

/** Room for a 4 MiB tool argument or result, nested at most 64 deep. */
export const DEFAULT_LIMITS: Readonly<Limits> = Object.freeze({ maxJsonBytes: 4 * 1024 * 1024, maxJsonDepth: 64 });

// Proto field names, as the paths in the messages spell them.
const ROLE_NAMES = {
  user: "user",
  assistant: "assistant",
  toolResult: "tool_result",
  custom: "custom",
  sessionEntry: "session_entry",
} as const;
const ROLE_LIST = Object.values(ROLE_NAMES).join(", ");
const BLOCK_NAMES = { text: "text", thinking: "thinking", toolCall: "tool_call", image: "image" } as const;

/** Check a StreamRequest: a context is required, and everything in it must be well formed. */
export function checkRequest(request: StreamRequest, limits: Readonly<Limits> = DEFAULT_LIMITS): void {
  if (request.context === undefined) throw new ValidationError("StreamRequest.context: required");
  checkContext(request.context, "StreamRequest.context", limits);
  const options = request.options;
  if (options?.maxTokens !== undefined && options.maxTokens < 1n) {
    throw new ValidationError(`StreamRequest.options.max_tokens: must be at least 1, got ${options.maxTokens}`);
  }
  const temperature = options?.temperature;
  // Written as the negation, like Python's `not 0 <= t <= 2`, so NaN is refused too.
  if (temperature !== undefined && !(temperature >= 0 && temperature <= 2)) {
    throw new ValidationError(
      `StreamRequest.options.temperature: must be between 0 and 2, got ${pyFloat(temperature)}`,
    );
  }
}

/** Check every message and tool of a context. */
export function checkContext(
  context: AgentContext,
  path = "AgentContext",
  limits: Readonly<Limits> = DEFAULT_LIMITS,
): void {
  context.messages.forEach((message, index) => checkMessage(message, `${path}.messages[${index}]`, limits));
  context.tools.forEach((tool, index) => {
    const where = `${path}.tools[${index}]`;
    if (!tool.name) throw new ValidationError(`${where}.name: must not be empty`);
    parseJsonObject(tool.parametersJson, `${where}.parameters_json`, limits, "a JSON Schema object");
  });
  checkExtra(context.extraJson, path, limits);
}

/** Check one transcript entry: exactly one role set, and that message's rules. */
export function checkMessage(
  message: AgentMessage,
  path = "AgentMessage",
  limits: Readonly<Limits> = DEFAULT_LIMITS,
): void {
  const role = message.role;
  if (role.case === undefined) {
    throw new ValidationError(`${path}.role: exactly one of ${ROLE_LIST} must be set, found none`);
  }
  const where = `${path}.${ROLE_NAMES[role.case]}`;
  switch (role.case) {
    case "user":
      checkUser(role.value, where, limits);
      break;
    case "assistant":
      checkAssistant(role.value, where, limits);
      break;
    case "toolResult":
      checkToolResult(role.value, where, limits);
      break;
    case "custom":
      if (!role.value.role) throw new ValidationError(`${where}.role: must not be empty`);
      parseJsonObject(role.value.fieldsJson, `${where}.fields_json`, limits);
      break;
    case "sessionEntry":
      if (!role.value.type) throw new ValidationError(`${where}.type: must not be empty`);
      parseJsonObject(role.value.fieldsJson, `${where}.fields_json`, limits);
      break;
  }
  if (message.sessionJson) parseJsonObject(message.sessionJson, `${path}.session_json`, limits);
}

/** Check a finished assistant message: stop reason set, blocks set, tool calls well formed. */
export function checkAssistant(
  message: AssistantMessage,
  path = "AssistantMessage",
  limits: Readonly<Limits> = DEFAULT_LIMITS,
): void {
  if (message.stopReason === StopReason.UNSPECIFIED) {
    throw new ValidationError(`${path}.stop_reason: must be set`);
  }
  message.content.forEach((content, index) => {
    const block = oneBlock(content.block, `${path}.content[${index}]`, "text, thinking, tool_call");
    const member = `${path}.content[${index}].${BLOCK_NAMES[block.case]}`;
    if (block.case === "toolCall") {
      const call = block.value;
      if (!call.id) throw new ValidationError(`${member}.id: must not be empty`);
      if (!call.name) throw new ValidationError(`${member}.name: must not be empty`);
      parseJsonObject(call.argumentsJson, `${member}.arguments_json`, limits);
    }
    checkExtra(block.value.extraJson, member, limits);
  });
  checkExtra(message.extraJson, path, limits);
}

/** Parse JSON text that must hold an object, within the size and depth limits. */
export function parseJsonObject(
  text: string,
  path: string,
  limits: Readonly<Limits> = DEFAULT_LIMITS,
  what = "a JSON object",
): Record<string, unknown> {
  const size = Buffer.byteLength(text, "utf8");
  if (size > limits.maxJsonBytes) {
    throw new ValidationError(`${path}: ${size} bytes of JSON, above the limit of ${limits.maxJsonBytes}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text); // V8's parser does not recurse, so deep nesting cannot overflow it
  } catch (error) {
    throw new ValidationError(`${path}: not valid JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ValidationError(`${path}: must be ${what}, got ${jsonType(value)}`);
  }
  if (depth(value) > limits.maxJsonDepth) {
    throw new ValidationError(`${path}: JSON nested deeper than the limit of ${limits.maxJsonDepth}`);
  }
  return value as Record<string, unknown>;
}

function checkUser(message: UserMessage, path: string, limits: Readonly<Limits>): void {
  message.content.forEach((content, index) => {
    const where = `${path}.content[${index}]`;
    const block = oneBlock(content.block, where, "text, image");
    checkExtra(block.value.extraJson, `${where}.${BLOCK_NAMES[block.case]}`, limits);
  });
  checkExtra(message.extraJson, path, limits);
}

function checkToolResult(message: ToolResultMessage, path: string, limits: Readonly<Limits>): void {
  if (!message.toolCallId) throw new ValidationError(`${path}.tool_call_id: must not be empty`);
  message.content.forEach((content, index) => {
    const where = `${path}.content[${index}]`;
    const block = oneBlock(content.block, where, "text, image");
    checkExtra(block.value.extraJson, `${where}.${BLOCK_NAMES[block.case]}`, limits);
  });
  if (message.detailsJson !== undefined) parseJsonObject(message.detailsJson, `${path}.details_json`, limits);
  checkExtra(message.extraJson, path, limits);
}

/** The block a content wrapper holds; a oneof holds at most one, so "none" is the only failure. */
function oneBlock<B extends { case: string | undefined }>(
  block: B,
  path: string,
  members: string,
): Exclude<B, { case: undefined }> {
  if (block.case === undefined) {
    throw new ValidationError(`${path}.block: exactly one of ${members} must be set, found none`);
  }
  return block as Exclude<B, { case: undefined }>;
}

function checkExtra(extraJson: string, path: string, limits: Readonly<Limits>): void {
  if (extraJson) parseJsonObject(extraJson, `${path}.extra_json`, limits);
}

/** Nesting depth of parsed JSON, without recursion (the value may be deep). */
function depth(value: unknown): number {
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [item, level] = stack.pop()!;
    deepest = Math.max(deepest, level);
    for (const child of Object.values(item as object)) {
      if (typeof child === "object" && child !== null) stack.push([child, level + 1]);
    }
  }
  return deepest;
}

/** The JSON type's name as the Python runtime words it. */
function jsonType(value: unknown): string {
  if (Array.isArray(value)) return "list";
  if (value === null) return "null";
  return typeof value === "string" || typeof value === "boolean" ? typeof value : "number";
}
