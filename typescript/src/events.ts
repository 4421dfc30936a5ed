/** ModelEvent helpers: an event's kind, terminal events and the message they carry. */

import { type ModelEvent, ModelEventSchema } from "./gen/pi/ai/v1/event_pb.js";
import type { AssistantMessage } from "./gen/pi/ai/v1/message_pb.js";

/**
 * The event's kind: pi's event type name, the proto field name of the oneof member set
 * ("start", "text_delta", "toolcall_end", ..., "done", "error"); "" when none is set.
 */
export function eventKind(event: ModelEvent): string {
  const member = event.event.case;
  return member === undefined ? "" : ModelEventSchema.field[member]!.name;
}

/** Whether an event ends its stream: `done` or `error`. */
export function isTerminal(event: ModelEvent): boolean {
  return event.event.case === "done" || event.event.case === "error";
}

/** The final message a terminal event carries; other events cannot produce a result. */
export function terminalMessage(event: ModelEvent): AssistantMessage {
  const body = event.event;
  if ((body.case === "done" || body.case === "error") && body.value.message !== undefined) {
    return body.value.message;
  }
  throw new Error("only a done or error event carrying a message produces the final message");
}
