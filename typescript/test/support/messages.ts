/** Builders for test messages and the events that stream them. */

import { setTimeout as sleep } from "node:timers/promises";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import {
  type AgentContext,
  AgentContextSchema,
  type AssistantContent,
  AssistantContentSchema,
  type AssistantMessage,
  AssistantMessageSchema,
  type ModelEvent,
  ModelEventSchema,
  StopReason,
  type ToolCall,
  ToolCallSchema,
} from "../../src/index.js";

/** How long any one test may run before it fails. */
export const TEST_TIMEOUT = 20_000;

/**
 * Wait until `check` holds, looking again every few milliseconds: a test waits for what must
 * happen, not for a time to pass, and only a hang reaches the test's timeout.
 */
export async function until(check: () => boolean): Promise<void> {
  while (!check()) await sleep(5);
}

export function text(value: string, textSignature?: string): AssistantContent {
  return create(AssistantContentSchema, { block: { case: "text", value: { text: value, textSignature } } });
}

export function thinking(value: string, thinkingSignature?: string, redacted?: boolean): AssistantContent {
  return create(AssistantContentSchema, {
    block: { case: "thinking", value: { thinking: value, thinkingSignature, redacted } },
  });
}

export function toolCall(
  id: string,
  name: string,
  args: Record<string, unknown>,
  extra: Partial<Pick<ToolCall, "rawArguments" | "thoughtSignature">> = {},
): AssistantContent {
  const call = create(ToolCallSchema, { id, name, argumentsJson: JSON.stringify(args), ...extra });
  return create(AssistantContentSchema, { block: { case: "toolCall", value: call } });
}

export function assistantMessage(
  content: AssistantContent[],
  header: { stopReason?: StopReason; errorMessage?: string; timestamp?: bigint } = {},
): AssistantMessage {
  return create(AssistantMessageSchema, {
    api: "scripted",
    provider: "scripted",
    model: "scripted-v1",
    usage: {},
    stopReason: StopReason.STOP,
    timestamp: 1n,
    ...header,
    content,
  });
}

/** A context holding one user message: what `pi-proto stream` sends. */
export function userContext(value: string): AgentContext {
  return create(AgentContextSchema, {
    messages: [
      {
        role: {
          case: "user",
          value: { content: [{ block: { case: "text", value: { text: value } } }], timestamp: 1n },
        },
      },
    ],
  });
}

export function event(init: MessageInitShape<typeof ModelEventSchema>["event"]): ModelEvent {
  return create(ModelEventSchema, { event: init });
}

/**
 * The events that stream `message`: start, each block's start/deltas/end, then the terminal
 * event carrying `message` itself. Deltas hold `size` characters (code points).
 */
export function eventsOf(message: AssistantMessage, size = 8): ModelEvent[] {
  const { api, provider, model, timestamp } = message;
  const events = [event({ case: "start", value: { header: { api, provider, model, timestamp, usage: {} } } })];
  message.content.forEach((content, contentIndex) => {
    const block = content.block;
    switch (block.case) {
      case "text":
        events.push(event({ case: "textStart", value: { contentIndex } }));
        for (const delta of chunks(block.value.text, size)) {
          events.push(event({ case: "textDelta", value: { contentIndex, delta } }));
        }
        events.push(event({ case: "textEnd", value: { contentIndex, textSignature: block.value.textSignature } }));
        break;
      case "thinking": {
        const { thinkingSignature, redacted } = block.value;
        events.push(event({ case: "thinkingStart", value: { contentIndex } }));
        for (const delta of chunks(block.value.thinking, size)) {
          events.push(event({ case: "thinkingDelta", value: { contentIndex, delta } }));
        }
        events.push(event({ case: "thinkingEnd", value: { contentIndex, thinkingSignature, redacted } }));
        break;
      }
      case "toolCall": {
        const call = block.value;
        events.push(event({ case: "toolcallStart", value: { contentIndex, id: call.id, name: call.name } }));
        for (const delta of chunks(call.rawArguments ?? call.argumentsJson ?? "", size)) {
          events.push(event({ case: "toolcallDelta", value: { contentIndex, delta } }));
        }
        events.push(event({ case: "toolcallEnd", value: { contentIndex, toolCall: { ...call } } }));
        break;
      }
      default:
        throw new Error(`content[${contentIndex}] has no block set`);
    }
  });
  const reason = message.stopReason;
  const failed = reason === StopReason.ERROR || reason === StopReason.ABORTED;
  events.push(event({ case: failed ? "error" : "done", value: { reason, message } }));
  return events;
}

function chunks(value: string, size: number): string[] {
  const points = Array.from(value);
  const out: string[] = [];
  for (let start = 0; start < points.length; start += size) out.push(points.slice(start, start + size).join(""));
  return out;
}
