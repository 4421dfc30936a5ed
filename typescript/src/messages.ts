/** Reading messages: `textOf`, the text projection. */

import type {
  AgentMessage,
  AssistantMessage,
  CustomMessage,
  SystemMessage,
  ToolResultMessage,
  UserMessage,
} from "./gen/pi/ai/v1/message_pb.js";

/** A system, user, assistant or tool result message, or an AgentMessage wrapping one. */
export type AnyMessage = SystemMessage | UserMessage | AssistantMessage | ToolResultMessage | AgentMessage;

/**
 * The message's text blocks joined with newlines, in order; other blocks are skipped.
 *
 * A lossy projection for display, search and summaries: the message itself is left untouched.
 */
export function textOf(message: AnyMessage): string {
  const inner = unwrap(message);
  if (!("content" in inner)) return ""; // kept verbatim, not modelled: no text blocks to show
  if (inner.$typeName === "pi.ai.v1.SystemMessage") return inner.content.map((block) => block.text).join("\n");
  const texts: string[] = [];
  for (const content of inner.content) {
    if (content.block.case === "text") texts.push(content.block.value.text);
  }
  return texts.join("\n");
}

/** The role-specific message inside an AgentMessage (or the message itself). */
export function unwrap(
  message: AnyMessage,
): SystemMessage | UserMessage | AssistantMessage | ToolResultMessage | CustomMessage {
  if (message.$typeName !== "pi.ai.v1.AgentMessage") return message;
  if (message.role.case === undefined) throw new Error("AgentMessage has no role set");
  return message.role.value;
}
