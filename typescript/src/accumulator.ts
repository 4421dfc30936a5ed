/**
 * The accumulator: applies a stream's events, in order, to the partial message they describe.
 *
 * It follows the Python runtime rule for rule and message for message, so a partial rebuilt from
 * the wire is the partial the sender had (the stream contract in service.proto, rule 4). It also
 * enforces the event-sequence rules; an event that breaks one throws StreamProtocolError naming
 * the event's index and the rule:
 *
 * - `event-kind`: an event has exactly one kind set.
 * - `start-first`: a stream opens with `start` (a call that failed before it started may consist
 *   of its terminal event alone); `start-once`: there is only one `start`.
 * - `next-index`: a `*_start` event opens the next index of the content.
 * - `block-exists`, `block-kind`, `block-open`: a delta or end event refers to a block that
 *   exists, of its own kind, and not yet ended; `tool-call-id`: a tool call ends with the id it
 *   started with.
 * - `terminal-message`: a `done` or `error` event carries a message; `terminal-reason`: `done`
 *   has STOP, LENGTH or TOOL_USE and `error` has ERROR or ABORTED, equal to the message's stop
 *   reason; `terminal-agrees`: the message has the blocks that were streamed, in number and kind;
 *   `message-valid`: the message passes the message rules of `checkAssistant`.
 */

import { create } from "@bufbuild/protobuf";
import {
  type AssistantContent,
  AssistantContentSchema,
  type ToolCall,
  ToolCallSchema,
} from "./gen/pi/ai/v1/content_pb.js";
import type { ModelEvent } from "./gen/pi/ai/v1/event_pb.js";
import { type AssistantMessage, AssistantMessageSchema, StopReason } from "./gen/pi/ai/v1/message_pb.js";
import { eventKind } from "./events.js";
import { DEFAULT_LIMITS, type Limits, ValidationError, checkAssistant } from "./validate.js";

/** An event that does not fit the stream received so far, naming its index and the rule. */
export class StreamProtocolError extends Error {
  override name = "StreamProtocolError";
}

const DONE_REASONS = [StopReason.STOP, StopReason.LENGTH, StopReason.TOOL_USE];
const ERROR_REASONS = [StopReason.ERROR, StopReason.ABORTED];

type BlockCase = NonNullable<AssistantContent["block"]["case"]>;
type BlockEvent = Exclude<ModelEvent["event"], { case: "start" | "done" | "error" | undefined }>;

// Each block event's block, and that block's name in the messages.
const BLOCK_OF_EVENT: Record<string, BlockCase> = { text: "text", thinking: "thinking", toolcall: "toolCall" };
const BLOCK_NAMES: Record<BlockCase, string> = { text: "text", thinking: "thinking", toolCall: "tool call" };
const MEMBER_NAMES: Record<BlockCase | "none", string> = {
  text: "text",
  thinking: "thinking",
  toolCall: "tool_call",
  none: "none",
};

/**
 * Rebuilds the partial AssistantMessage of one stream and attaches it to every event.
 *
 * The partial is one live object updated in place, as in pi: an event's `partial` shows the
 * message after that event, until the next event changes it.
 */
export class Accumulator {
  partial: AssistantMessage = create(AssistantMessageSchema);
  count = 0;
  private started = false;
  private readonly open: boolean[] = []; // per block: not yet ended

  constructor(readonly limits: Readonly<Limits> = DEFAULT_LIMITS) {}

  /** Apply `event` to the partial, set `event.partial`, and return the event. */
  apply(event: ModelEvent): ModelEvent {
    const kind = eventKind(event);
    const index = this.count;
    this.count += 1;
    const body = event.event;
    if (body.case === undefined) {
      throw new StreamProtocolError(`event ${index} breaks rule 'event-kind': no event kind is set`);
    }
    const broken = (rule: string, detail: string): StreamProtocolError =>
      new StreamProtocolError(`event ${index} (${kind}) breaks rule '${rule}': ${detail}`);
    if (body.case === "done" || body.case === "error") {
      this.finish(broken, kind, body.value.reason, body.value.message);
    } else if (body.case === "start") {
      if (this.started || index > 0) {
        throw broken(this.started ? "start-once" : "start-first", "start must be the first event");
      }
      this.started = true;
      const header = body.value.header ?? create(AssistantMessageSchema);
      this.partial = { ...header, content: [...header.content] };
      this.open.splice(0, this.open.length, ...header.content.map(() => false));
    } else if (!this.started) {
      throw broken("start-first", "a stream opens with start");
    } else {
      this.applyBlock(broken, kind, body);
    }
    event.partial = this.partial;
    return event;
  }

  /** Attach the message of a terminal event built from this partial, without the rules. */
  close(event: ModelEvent): ModelEvent {
    const body = event.event;
    if (body.case === "done" || body.case === "error") {
      this.partial = body.value.message ?? create(AssistantMessageSchema);
    }
    event.partial = this.partial;
    return event;
  }

  private applyBlock(
    broken: (rule: string, detail: string) => StreamProtocolError,
    kind: string,
    body: BlockEvent,
  ): void {
    const [family, step] = kind.split("_") as [string, string];
    const member = BLOCK_OF_EVENT[family]!;
    const content = this.partial.content;
    const at = body.value.contentIndex;
    if (step === "start") {
      if (at !== content.length) {
        throw broken("next-index", `content_index ${at} must open the next block, ${content.length}`);
      }
      content.push(newBlock(body));
      this.open.push(true);
      return;
    }
    if (at >= content.length) {
      throw broken("block-exists", `content_index ${at} refers to no block (the message has ${content.length})`);
    }
    const block = content[at]!.block;
    if (block.case !== member) {
      throw broken("block-kind", `block ${at} is not a ${BLOCK_NAMES[member]} block`);
    }
    if (!this.open[at]) {
      throw broken("block-open", `block ${at} has already ended`);
    }
    switch (body.case) {
      case "textDelta":
      case "thinkingDelta":
      case "toolcallDelta":
        append(block, body.value.delta);
        return;
    }
    this.open[at] = false;
    if (body.case === "textEnd" && block.case === "text") {
      if (body.value.textSignature !== undefined) block.value.textSignature = body.value.textSignature;
    } else if (body.case === "thinkingEnd" && block.case === "thinking") {
      if (body.value.thinkingSignature !== undefined) block.value.thinkingSignature = body.value.thinkingSignature;
      if (body.value.redacted !== undefined) block.value.redacted = body.value.redacted;
    } else if (body.case === "toolcallEnd" && block.case === "toolCall") {
      const call: ToolCall = body.value.toolCall ?? create(ToolCallSchema);
      if (call.id !== block.value.id) {
        throw broken(
          "tool-call-id",
          `tool call ${at} started as ${pythonRepr(block.value.id)} but ends as ${pythonRepr(call.id)}`,
        );
      }
      content[at] = create(AssistantContentSchema, { block: { case: "toolCall", value: call } });
    }
  }

  private finish(
    broken: (rule: string, detail: string) => StreamProtocolError,
    kind: string,
    reason: StopReason,
    message: AssistantMessage | undefined,
  ): void {
    if (message === undefined) throw broken("terminal-message", "carries no message");
    const allowed = kind === "done" ? DONE_REASONS : ERROR_REASONS;
    if (!allowed.includes(reason) || message.stopReason !== reason) {
      throw broken(
        "terminal-reason",
        `reason ${reasonName(reason)} with a message stopped by ${reasonName(message.stopReason)}; ` +
          `${kind} takes ${allowed.map(reasonName).join(", ")}, equal in both`,
      );
    }
    if (this.started) {
      const streamed = this.partial.content.map(memberOf);
      const final = message.content.map(memberOf);
      if (streamed.join() !== final.join()) {
        throw broken(
          "terminal-agrees",
          `the message has blocks ${pythonList(final)}, the stream built ${pythonList(streamed)}`,
        );
      }
    }
    try {
      checkAssistant(message, "message", this.limits);
    } catch (error) {
      if (error instanceof ValidationError) throw broken("message-valid", error.message);
      throw error;
    }
    this.partial = message;
  }
}

function newBlock(body: BlockEvent): AssistantContent {
  switch (body.case) {
    case "textStart":
      return create(AssistantContentSchema, { block: { case: "text", value: { text: "" } } });
    case "thinkingStart":
      return create(AssistantContentSchema, { block: { case: "thinking", value: { thinking: "" } } });
    case "toolcallStart": {
      const { id, name } = body.value;
      const call = create(ToolCallSchema, { id, name, argumentsJson: "{}", rawArguments: "" });
      return create(AssistantContentSchema, { block: { case: "toolCall", value: call } });
    }
    default:
      throw new Error(`${body.case} opens no block`);
  }
}

function append(block: AssistantContent["block"], delta: string): void {
  if (block.case === "text") block.value.text += delta;
  else if (block.case === "thinking") block.value.thinking += delta;
  else if (block.case === "toolCall") block.value.rawArguments = (block.value.rawArguments ?? "") + delta;
}

function memberOf(content: AssistantContent): string {
  return MEMBER_NAMES[content.block.case ?? "none"];
}

function reasonName(reason: StopReason): string {
  return StopReason[reason] ?? String(reason);
}

/** A list of names as Python prints it: ['text', 'tool_call']. */
function pythonList(names: string[]): string {
  return `[${names.map((name) => `'${name}'`).join(", ")}]`;
}

/** A string as Python's repr() prints it, so ids in messages read the same in both runtimes. */
function pythonRepr(value: string): string {
  const quote = value.includes("'") && !value.includes('"') ? '"' : "'";
  let out = quote;
  for (const char of value) {
    const code = char.codePointAt(0)!;
    if (char === "\\" || char === quote) out += `\\${char}`;
    else if (char === "\n") out += "\\n";
    else if (char === "\r") out += "\\r";
    else if (char === "\t") out += "\\t";
    else if (char !== " " && /[\p{C}\p{Z}]/u.test(char)) {
      if (code < 0x100) out += `\\x${code.toString(16).padStart(2, "0")}`;
      else if (code < 0x10000) out += `\\u${code.toString(16).padStart(4, "0")}`;
      else out += `\\U${code.toString(16).padStart(8, "0")}`;
    } else out += char;
  }
  return out + quote;
}
