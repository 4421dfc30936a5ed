/**
 * StreamBatched as the client reads it: through connect's transport, with the method's output
 * typed as the generated StreamBatchedView, which leaves each event of a batch as its bytes. The
 * client then decodes the events one at a time with the generated ModelEvent parser, so the
 * events in front of one that does not decode are kept, and that one fails at its own index; a
 * batch that does not parse as a view fails whole, at the index of its first event.
 */

import type { DescMessage, DescMethodServerStreaming, MessageShape } from "@bufbuild/protobuf";
import { fromBinary } from "@bufbuild/protobuf";
import type { Transport } from "@connectrpc/connect";
import { createAsyncIterable } from "@connectrpc/connect/protocol";
import { StreamProtocolError } from "./accumulator.js";
import { type ModelEvent, ModelEventSchema, StreamRule } from "./gen/pi/ai/v1/event_pb.js";
import { ModelService, StreamBatchedViewSchema, type StreamRequestSchema } from "./gen/pi/ai/v1/service_pb.js";

/** ModelService.StreamBatched, its responses read as StreamBatchedView: the same bytes on the wire. */
export const STREAM_BATCHED_VIEW: DescMethodServerStreaming<
  typeof StreamRequestSchema,
  typeof StreamBatchedViewSchema
> = { ...ModelService.method.streamBatched, output: StreamBatchedViewSchema };

/** Options of one streaming call: those of a connect call, with the callbacks of the response metadata. */
export interface StreamCallOptions {
  signal: AbortSignal;
  /** The deadline in milliseconds from now; undefined for none. */
  timeoutMs: number | undefined;
  headers: Headers;
  onHeader: (headers: Headers) => void;
  onTrailer: (trailers: Headers) => void;
}

/**
 * The response messages of the server-streaming `method` (Stream, StreamBatched or Resume), called
 * over `transport` with `request`; the response headers go to `onHeader` before the first message,
 * the trailers to `onTrailer` after the last. Fails with connect's ConnectError.
 */
export async function* serverStream<I extends DescMessage, O extends DescMessage>(
  transport: Transport,
  method: DescMethodServerStreaming<I, O>,
  request: MessageShape<I>,
  options: StreamCallOptions,
): AsyncGenerator<MessageShape<O>, void, undefined> {
  const { signal, timeoutMs, headers } = options;
  const response = await transport.stream(method, signal, timeoutMs, headers, createAsyncIterable([request]));
  options.onHeader(response.header);
  yield* response.message;
  options.onTrailer(response.trailer);
}

/** The event whose bytes are `bytes`, the `index`th of its stream; a StreamProtocolError if they are none. */
export function decodeEvent(bytes: Uint8Array, index: number): ModelEvent {
  try {
    return fromBinary(ModelEventSchema, bytes);
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    throw new StreamProtocolError(index, StreamRule.EVENT_DECODE, `the bytes are not a ModelEvent: ${detail}`);
  }
}
