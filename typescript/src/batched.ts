/**
 * StreamBatched as the client reads it. A StreamBatchedResponse is split by hand into the bytes of
 * its events, which the client then decodes one at a time: a generated parser would throw the
 * whole batch away for one malformed event, and the events in front of it would be lost.
 */

import { type DescMethod, create, createFileRegistry } from "@bufbuild/protobuf";
import type { GenMessage } from "@bufbuild/protobuf/codegenv2";
import {
  FieldDescriptorProto_Label,
  FieldDescriptorProto_Type,
  FileDescriptorProtoSchema,
} from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  type UniversalClientFn,
  compressedFlag,
  createAsyncIterable,
  createDeadlineSignal,
  createLinkedAbortController,
  createMethodUrl,
  encodeEnvelope,
  getAbortSignalReason,
  pipe,
  transformSplitEnvelope,
} from "@connectrpc/connect/protocol";
import { requestHeader, validateResponse, validateTrailer } from "@connectrpc/connect/protocol-grpc";
// These are connect's own building blocks of its gRPC transport: exported, but documented as
// internal; package.json pins connect exactly, which keeps them as they are.

/** The events of one batch, as bytes, and what cut the batch short after them, if anything did. */
export interface Batch {
  /** The bytes of each event (field 1 of the StreamBatchedResponse), in order. */
  readonly events: Uint8Array[];
  /** What is wrong with the bytes after the last of `events`; undefined for a whole batch. */
  readonly broken?: string;
}

/**
 * Split the bytes of a StreamBatchedResponse into the bytes of its events (field 1,
 * length-delimited), skipping any other field by its wire type. At the first field that is cut
 * short or of a wire type no message of this schema holds, stop: the events before it are kept,
 * and `broken` says what is wrong.
 */
export function splitBatch(data: Uint8Array): Batch {
  const events: Uint8Array[] = [];
  const end = data.length;
  let position = 0;
  try {
    while (position < end) {
      let key: number;
      [key, position] = varint(data, position);
      const [field, wireType] = [Math.floor(key / 8), key % 8];
      if (field === 0 || (field === 1 && wireType !== 2)) {
        throw new BatchError(`field ${field} with wire type ${wireType} is not one a StreamBatchedResponse holds`);
      }
      if (wireType === 2) {
        let size: number;
        [size, position] = varint(data, position);
        if (position + size > end) {
          throw new BatchError(`a field of ${size} bytes runs past the end of the ${end}-byte message`);
        }
        if (field === 1) events.push(data.subarray(position, position + size));
        position += size;
      } else if (wireType === 0) {
        [, position] = varint(data, position);
      } else if ((wireType === 1 || wireType === 5) && position + (wireType === 1 ? 8 : 4) <= end) {
        position += wireType === 1 ? 8 : 4;
      } else {
        throw new BatchError(`field ${field} (wire type ${wireType}) is cut short or not one this message holds`);
      }
    }
  } catch (error) {
    if (!(error instanceof BatchError)) throw error;
    return { events, broken: error.message };
  }
  return { events };
}

class BatchError extends Error {}

/** The varint at `position` (up to 64 bits, as a number) and the position after it. */
function varint(data: Uint8Array, position: number): [number, number] {
  let value = 0;
  for (let shift = 0; shift <= 63; shift += 7) {
    if (position >= data.length) break;
    const byte = data[position]!;
    position += 1;
    value += (byte & 0x7f) * 2 ** shift; // not <<: a size or key may pass 31 bits
    if (byte < 0x80) return [value, position];
  }
  throw new BatchError(`a varint at byte ${position} is cut short or too long`);
}

/** A StreamBatchedResponse whose events are left as bytes: `repeated bytes events = 1`. */
export type BatchOfBytes = { $typeName: "pi_proto.internal.StreamBatchedResponseBytes"; events: Uint8Array[] };

/**
 * The schema of BatchOfBytes: on the wire it is StreamBatchedResponse, but its events are not
 * parsed. For a transport that is not ours, which gives no access to a message's bytes, the
 * client reads StreamBatched with it: each event is still decoded on its own, but bytes that
 * break the batch itself (a field cut short) fail the whole batch.
 */
export const BatchOfBytesSchema = createFileRegistry(
  create(FileDescriptorProtoSchema, {
    name: "pi_proto/internal/batch_of_bytes.proto",
    package: "pi_proto.internal",
    syntax: "proto3",
    messageType: [
      {
        name: "StreamBatchedResponseBytes",
        field: [
          {
            name: "events",
            jsonName: "events",
            number: 1,
            type: FieldDescriptorProto_Type.BYTES,
            label: FieldDescriptorProto_Label.REPEATED,
          },
        ],
      },
    ],
  }),
  () => undefined,
).getMessage("pi_proto.internal.StreamBatchedResponseBytes") as GenMessage<BatchOfBytes>;

/** What the client keeps of a transport it made, to read a server-streaming call's messages as bytes. */
export interface RawChannel {
  readonly baseUrl: string;
  readonly httpClient: UniversalClientFn;
}

/** Options of one streaming call: those of a connect call, with the callbacks of the response metadata. */
export interface StreamCallOptions {
  signal: AbortSignal;
  /** The deadline in milliseconds from now; undefined for none. */
  timeoutMs: number | undefined;
  headers: Headers;
  onHeader: (headers: Headers) => void;
  onTrailer: (trailers: Headers) => void;
}

/** The most bytes one message may have, as connect's default. */
const READ_MAX_BYTES = 0xffffffff;

/**
 * Call the server-streaming `method` over gRPC (HTTP/2, uncompressed) with the request's bytes,
 * and yield each response message's bytes, unparsed. Fails with a ConnectError as connect's own
 * calls do: the status of the call, DEADLINE_EXCEEDED once `timeoutMs` has passed, CANCELED when
 * `signal` is aborted, or the transport failure. Leaving the iteration early ends the call.
 */
export async function* rawServerStream(
  channel: RawChannel,
  method: DescMethod,
  request: Uint8Array,
  options: StreamCallOptions,
): AsyncGenerator<Uint8Array, void, undefined> {
  const deadline = createDeadlineSignal(options.timeoutMs);
  const controller = createLinkedAbortController(options.signal, deadline.signal);
  try {
    const response = await channel.httpClient({
      url: createMethodUrl(channel.baseUrl, method),
      method: "POST",
      header: requestHeader(true, options.timeoutMs, options.headers),
      signal: controller.signal,
      body: createAsyncIterable([encodeEnvelope(0, request)]),
    });
    const { foundStatus, headerError } = validateResponse(response.status, response.header);
    if (headerError !== undefined) throw headerError;
    options.onHeader(response.header);
    for await (const envelope of pipe(response.body, transformSplitEnvelope(READ_MAX_BYTES))) {
      if ((envelope.flags & compressedFlag) === compressedFlag) {
        throw new ConnectError("the server sent a compressed message, which this client did not accept", Code.Internal);
      }
      yield envelope.data;
    }
    if (!foundStatus) validateTrailer(response.trailer, response.header);
    options.onTrailer(response.trailer);
  } catch (error) {
    // As connect does: once the deadline has passed, whatever failed is that.
    throw ConnectError.from(deadline.signal.aborted ? getAbortSignalReason(deadline.signal) : error);
  } finally {
    deadline.cleanup();
    controller.abort(); // the call is over: release its HTTP/2 stream if the server has not
  }
}
