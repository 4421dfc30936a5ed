/**
 * The accumulator: applies a stream's events, in order, to the partial message they describe.
 *
 * Server-side code, the client and the tests share it, so a partial rebuilt from the wire is the
 * partial the sender had (the stream contract in service.proto, rule 4). It also enforces the
 * stream rules, stated once as the `StreamRule` enum in proto/pi/ai/v1/event.proto; an event
 * that breaks one throws a StreamProtocolError carrying the event's index and the rule.
 *
 * While a tool call streams, its `rawArguments` hold the text so far and its `argumentsJson` that
 * text completed into a JSON object (partial-json.ts). Both grow by appending, which JavaScript
 * engines do without copying the text so far, so a call streamed in many deltas costs linear
 * time. A non-terminal event that carries `usage` sets the partial's usage (a terminal event's
 * message carries its own). A terminal event's `contentSha256`, when it carries one, must be the
 * digest of the content the partial holds as it arrives (digest.ts; rule `terminal-digest`).
 */

import { create, toBinary } from "@bufbuild/protobuf";
import { contentSha256 } from "./digest.js";
import { eventKind } from "./events.js";
import {
  type AssistantContent,
  AssistantContentSchema,
  type ToolCall,
  ToolCallSchema,
} from "./gen/pi/ai/v1/content_pb.js";
import { type ModelEvent, ModelEventSchema, StreamRule, StreamRuleSchema } from "./gen/pi/ai/v1/event_pb.js";
import { type AssistantMessage, AssistantMessageSchema } from "./gen/pi/ai/v1/message_pb.js";
import { ArgumentsCompletion } from "./partial-json.js";
import { describeViolation, type Violation, violations } from "./validate.js";

/** The most a receiver accumulates from block events unless told otherwise: 64 MiB of UTF-8. */
export const DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

const RULE_PREFIX = "STREAM_RULE_";

/**
 * The text id of a stream rule, as the conformance corpus and error messages name it: the enum
 * value's name without its prefix, in lower case with hyphens (STREAM_RULE_BLOCK_OPEN is
 * "block-open"). A value the schema does not know is named by its number.
 */
export function streamRuleId(rule: StreamRule): string {
  const name = StreamRuleSchema.value[rule]?.name;
  if (name === undefined) return String(rule);
  return name.slice(RULE_PREFIX.length).toLowerCase().replaceAll("_", "-");
}

/** An event that does not fit the stream received so far: its index, the rule it breaks and why. */
export class StreamProtocolError extends Error {
  override name = "StreamProtocolError";
  /** The rule's text id, e.g. "block-exists" (streamRuleId). */
  readonly ruleId: string;

  constructor(
    /** The index of the offending event, from 0; for TERMINAL_MISSING, the number of events. */
    readonly eventIndex: number,
    /** The broken rule. */
    readonly rule: StreamRule,
    /** What is wrong, in words. */
    readonly detail: string,
    /** For TERMINAL_VALID: the terminal event's violations, with paths from the ModelEvent. */
    readonly violations: readonly Violation[] = [],
  ) {
    super(`event ${eventIndex} breaks rule ${streamRuleId(rule)}: ${detail}`);
    this.ruleId = streamRuleId(rule);
  }
}

type BlockCase = NonNullable<AssistantContent["block"]["case"]>;
type BlockEvent = Exclude<ModelEvent["event"], { case: "start" | "done" | "error" | undefined }>;

// Each block event family's block, and that block's name in the details.
const BLOCK_OF_EVENT: Record<string, BlockCase> = { text: "text", thinking: "thinking", toolcall: "toolCall" };
const BLOCK_NAMES: Record<BlockCase | "none", string> = {
  text: "text",
  thinking: "thinking",
  toolCall: "tool call",
  none: "empty",
};

/**
 * Rebuilds the partial AssistantMessage of one stream and attaches it to every event.
 *
 * The partial is one live object updated in place, as in pi: an event's `partial` shows the
 * message after that event, until the next event changes it.
 */
export class Accumulator {
  /** The message as rebuilt from the events applied so far. */
  partial: AssistantMessage = create(AssistantMessageSchema);
  /** How many events have been applied (or refused). */
  count = 0;
  /** The bytes of UTF-8 counted toward the limit so far: what the block events brought. */
  receivedBytes = 0;
  private started = false;
  private readonly open: boolean[] = []; // per block: not yet ended
  private readonly completions = new Map<number, ArgumentsCompletion>(); // per tool call still streaming
  private readonly callBytes = new Map<number, number>(); // per tool call still streaming: the bytes it counted

  /** `maxMessageBytes`: the most bytes of UTF-8 the block events may bring (rule `size-limit`). */
  constructor(readonly maxMessageBytes: number = DEFAULT_MAX_MESSAGE_BYTES) {}

  /** Apply `event` to the partial, set `event.partial`, and return the event. */
  apply(event: ModelEvent): ModelEvent {
    const kind = eventKind(event);
    const index = this.count;
    this.count += 1;
    const body = event.event;
    const broken = (rule: StreamRule, detail: string, found: readonly Violation[] = []): StreamProtocolError =>
      new StreamProtocolError(index, rule, kind ? `${kind}: ${detail}` : detail, found);
    if (body.case === undefined) throw broken(StreamRule.EVENT_KIND, "the event has no kind set");
    if (body.case === "done" || body.case === "error") {
      this.finish(broken, event);
    } else if (body.case === "start") {
      if (this.started || index > 0) {
        throw broken(this.started ? StreamRule.START_ONCE : StreamRule.START_FIRST, "start comes first, and only once");
      }
      this.started = true;
      const header = body.value.header ?? create(AssistantMessageSchema);
      this.partial = { ...header, content: [...header.content] };
      this.open.length = header.content.length; // the header's blocks are whole: none is open
      this.open.fill(false);
    } else if (!this.started) {
      throw broken(StreamRule.START_FIRST, "a stream opens with start");
    } else {
      this.applyBlock(broken, kind, body);
    }
    if (event.usage !== undefined && body.case !== "done" && body.case !== "error") {
      this.partial.usage = event.usage; // the sender's usage changed with this event
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
    broken: (rule: StreamRule, detail: string) => StreamProtocolError,
    kind: string,
    body: BlockEvent,
  ): void {
    const [family, step] = kind.split("_") as [string, string];
    const member = BLOCK_OF_EVENT[family]!;
    const content = this.partial.content;
    const at = body.value.contentIndex;
    if (step === "start") {
      if (at !== content.length) {
        throw broken(StreamRule.NEXT_INDEX, `opens block ${at}, but the next block is ${content.length}`);
      }
      if (body.case === "toolcallStart") {
        const size = utf8Bytes(body.value.id) + utf8Bytes(body.value.name);
        this.countBytes(broken, size);
        this.completions.set(at, new ArgumentsCompletion());
        this.callBytes.set(at, size);
      }
      content.push(newBlock(body));
      this.open.push(true);
      return;
    }
    if (at >= content.length)
      throw broken(StreamRule.BLOCK_EXISTS, `block ${at} does not exist (there are ${content.length})`);
    const block = content[at]!.block;
    if (block.case !== member) {
      const kind = BLOCK_NAMES[block.case ?? "none"];
      throw broken(StreamRule.BLOCK_KIND, `block ${at} is a ${kind} block, not a ${BLOCK_NAMES[member]} block`);
    }
    if (!this.open[at]) throw broken(StreamRule.BLOCK_OPEN, `block ${at} has already ended`);
    switch (body.case) {
      case "textDelta":
      case "thinkingDelta":
      case "toolcallDelta": {
        const delta = body.value.delta;
        const size = utf8Bytes(delta);
        this.countBytes(broken, size);
        if (block.case === "text") block.value.text += delta;
        else if (block.case === "thinking") block.value.thinking += delta;
        else if (block.case === "toolCall") {
          this.callBytes.set(at, this.callBytes.get(at)! + size);
          block.value.rawArguments = (block.value.rawArguments ?? "") + delta;
          block.value.argumentsJson = this.completions.get(at)!.push(delta);
        }
        return;
      }
    }
    if (body.case === "textEnd" && block.case === "text") {
      this.countBytes(broken, utf8Bytes(body.value.textSignature ?? ""));
      if (body.value.textSignature !== undefined) block.value.textSignature = body.value.textSignature;
    } else if (body.case === "thinkingEnd" && block.case === "thinking") {
      this.countBytes(broken, utf8Bytes(body.value.thinkingSignature ?? ""));
      if (body.value.thinkingSignature !== undefined) block.value.thinkingSignature = body.value.thinkingSignature;
      if (body.value.redacted !== undefined) block.value.redacted = body.value.redacted;
    } else if (body.case === "toolcallEnd" && block.case === "toolCall") {
      const call: ToolCall = body.value.toolCall ?? create(ToolCallSchema);
      if (call.id !== block.value.id) {
        const [started, ends] = [block.value.id, call.id].map((id) => JSON.stringify(id));
        throw broken(StreamRule.TOOL_CALL_ID, `tool call ${at} started with id ${started} but ends with ${ends}`);
      }
      // The call replaces the streamed one: only what it holds beyond that counts again.
      this.countBytes(broken, Math.max(0, callSize(call) - this.callBytes.get(at)!));
      content[at] = create(AssistantContentSchema, { block: { case: "toolCall", value: call } });
    }
    this.open[at] = false;
    this.completions.delete(at);
    this.callBytes.delete(at);
  }

  /** Count `size` more bytes toward the limit, or refuse the event, counting nothing. */
  private countBytes(broken: (rule: StreamRule, detail: string) => StreamProtocolError, size: number): void {
    if (this.receivedBytes + size > this.maxMessageBytes) {
      throw broken(StreamRule.SIZE_LIMIT, `the block events add up to more than ${this.maxMessageBytes} bytes`);
    }
    this.receivedBytes += size;
  }

  private finish(
    broken: (rule: StreamRule, detail: string, found?: readonly Violation[]) => StreamProtocolError,
    event: ModelEvent,
  ): void {
    // The event alone, as the sender built it: a partial attached here is not the sender's.
    const terminal = create(ModelEventSchema, { event: event.event });
    const found = violations(ModelEventSchema, terminal);
    if (found.length > 0) throw broken(StreamRule.TERMINAL_VALID, found.map(describeViolation).join("; "), found);
    const body = event.event;
    if (body.case !== "done" && body.case !== "error") return;
    const message = body.value.message!; // required, so present once the event is valid
    if (this.started) {
      const streamed = this.partial.content.map((item) => BLOCK_NAMES[item.block.case ?? "none"]);
      const final = message.content.map((item) => BLOCK_NAMES[item.block.case ?? "none"]);
      if (streamed.join() !== final.join()) {
        throw broken(
          StreamRule.TERMINAL_AGREES,
          `the message has blocks [${final.join(", ")}], the stream built [${streamed.join(", ")}]`,
        );
      }
    }
    // The sender's digest of what it streamed: a receiver that rebuilt other content (an event
    // lost, repeated or changed on the way) must not present the sender's message as its own.
    const digest = body.value.contentSha256;
    if (digest.length > 0 && !sameBytes(contentSha256(this.partial.content), digest)) {
      throw broken(
        StreamRule.TERMINAL_DIGEST,
        "content_sha256 is not the digest of the content the stream's events built",
      );
    }
    this.partial = message;
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, at) => byte === b[at]);
}

function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

/** The bytes a tool call holds: the UTF-8 of its strings, and any fields the schema does not know. */
function callSize(call: ToolCall): number {
  const strings = [call.id, call.name, call.argumentsJson, call.rawArguments, call.thoughtSignature, call.extraJson];
  const size = strings.reduce((sum, text) => sum + utf8Bytes(text ?? ""), 0);
  if (call.$unknown === undefined || call.$unknown.length === 0) return size;
  // The unknown fields' encoding, tags included: a call holding nothing else encodes to that alone.
  const unknown = create(ToolCallSchema);
  unknown.$unknown = call.$unknown;
  return size + toBinary(ToolCallSchema, unknown).length;
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
