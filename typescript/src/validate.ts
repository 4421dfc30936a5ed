/**
 * Message rules: what a well-formed finished assistant message is, beyond what the wire format
 * checks. Each failure throws ValidationError naming the path of the field and the rule, with the
 * same text as the Python runtime, e.g.
 * `message.content[1].tool_call.arguments_json: must be a JSON object, got list`.
 */

import { type AssistantMessage, StopReason } from "./gen/pi/ai/v1/message_pb.js";

/** A message that breaks a rule, with the path of the offending field. */
export class ValidationError extends Error {
  override name = "ValidationError";
}

/** Bounds on the JSON text a message may carry. */
export interface Limits {
  /** Largest `*_json` field, in bytes of UTF-8. */
  maxJsonBytes: number;
  /** Deepest nesting of objects and arrays in a `*_json` field. */
  maxJsonDepth: number;
}

/** Room for a 4 MiB tool argument or result, nested at most 64 deep. */
export const DEFAULT_LIMITS: Readonly<Limits> = Object.freeze({ maxJsonBytes: 4 * 1024 * 1024, maxJsonDepth: 64 });

// Proto field names, as the paths in the messages spell them.
const BLOCK_NAMES = { text: "text", thinking: "thinking", toolCall: "tool_call" } as const;

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
    const where = `${path}.content[${index}]`;
    const block = content.block;
    if (block.case === undefined) {
      throw new ValidationError(`${where}.block: exactly one of text, thinking, tool_call must be set, found none`);
    }
    const member = `${where}.${BLOCK_NAMES[block.case]}`;
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
    value = JSON.parse(text);
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
