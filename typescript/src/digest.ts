/** The digest a terminal event carries of the content its stream built (DoneEvent.content_sha256). */

import { createHash } from "node:crypto";
import { create, toBinary } from "@bufbuild/protobuf";
import type { AssistantContent } from "./gen/pi/ai/v1/content_pb.js";
import { AssistantMessageSchema } from "./gen/pi/ai/v1/message_pb.js";

/**
 * SHA-256 of the encoding of an AssistantMessage holding only `content`: what the sender and every
 * receiver compute alike, since each block's fields are written in field-number order.
 */
export function contentSha256(content: readonly AssistantContent[]): Uint8Array {
  const message = create(AssistantMessageSchema, { content: [...content] });
  return new Uint8Array(createHash("sha256").update(toBinary(AssistantMessageSchema, message)).digest());
}
