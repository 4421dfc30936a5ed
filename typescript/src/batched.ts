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
  type EnvelopedMessage,
  type UniversalClientFn,
  type UniversalClientResponse,
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
import * as connect from "@connectrpc/connect/protocol-connect";
import * as grpc from "@connectrpc/connect/protocol-grpc";
import * as grpcWeb from "@connectrpc/connect/protocol-grpc-web";
// These are connect's own building blocks of its transports (gRPC, Connect, gRPC-web): exported,
// but documented as internal; package.json pins connect exactly, which keeps them as they are.

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

/** The protocols of the transports the client makes (TransportOptions.protocol). */
export type Protocol = "grpc" | "connect" | "grpc-web";

/** What the client keeps of a transport it made, to read a server-streaming call's messages as bytes. */
export interface RawChannel {
  readonly protocol: Protocol;
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
 * Call the server-streaming `method` over the channel's protocol (uncompressed, binary) with the
 * request's bytes, and yield each response message's bytes, unparsed. Fails with a ConnectError as
 * connect's own calls do: the status of the call, DEADLINE_EXCEEDED once `timeoutMs` has passed,
 * CANCELED when `signal` is aborted, or the transport failure. Leaving the iteration early ends
 * the call.
 */
export async function* rawServerStream(
  channel: RawChannel,
  method: DescMethod,
  request: Uint8Array,
  options: StreamCallOptions,
): AsyncGenerator<Uint8Array, void, undefined> {
  const deadline = createDeadlineSignal(options.timeoutMs);
  const controller = createLinkedAbortController(options.signal, deadline.signal);
  const wire = WIRES[channel.protocol];
  try {
    const response = await channel.httpClient({
      url: createMethodUrl(channel.baseUrl, method),
      method: "POST",
      header: wire.requestHeader(options.timeoutMs, options.headers),
      signal: controller.signal,
      body: createAsyncIterable([encodeEnvelope(0, request)]),
    });
    yield* wire.messages(response, options);
  } catch (error) {
    // As connect does: once the deadline has passed, whatever failed is that.
    throw ConnectError.from(deadline.signal.aborted ? getAbortSignalReason(deadline.signal) : error);
  } finally {
    deadline.cleanup();
    controller.abort(); // the call is over: release its HTTP/2 stream (or HTTP/1.1 connection) if the server has not
  }
}

/** One protocol of rawServerStream: the request's headers, and the response read as message bytes. */
interface Wire {
  requestHeader(timeoutMs: number | undefined, headers: Headers): Headers;
  /** The bytes of each message, after the response's status and headers have been checked. */
  messages(response: UniversalClientResponse, options: StreamCallOptions): AsyncGenerator<Uint8Array, void, undefined>;
}

const WIRES: Record<Protocol, Wire> = {
  // gRPC: the status is in the HTTP/2 trailers (or, for a call refused at once, in the headers).
  grpc: {
    requestHeader: (timeoutMs, headers) => grpc.requestHeader(true, timeoutMs, headers),
    async *messages(response, options) {
      const { foundStatus, headerError } = grpc.validateResponse(response.status, response.header);
      if (headerError !== undefined) throw headerError;
      options.onHeader(response.header);
      for await (const envelope of envelopes(response)) yield data(envelope);
      if (!foundStatus) grpc.validateTrailer(response.trailer, response.header);
      options.onTrailer(response.trailer);
    },
  },
  // gRPC-web: the status is a last message flagged as trailers (or, for a call refused at once, in the headers).
  "grpc-web": {
    requestHeader: (timeoutMs, headers) => grpcWeb.requestHeader(true, timeoutMs, headers, true),
    async *messages(response, options) {
      const { foundStatus, headerError } = grpcWeb.validateResponse(response.status, response.header);
      if (headerError !== undefined) throw headerError;
      options.onHeader(response.header);
      let trailer: Headers | undefined;
      for await (const envelope of envelopes(response)) {
        if (trailer !== undefined) {
          throw new ConnectError("protocol error: received extra message after trailer", Code.InvalidArgument);
        }
        if ((envelope.flags & grpcWeb.trailerFlag) === grpcWeb.trailerFlag) {
          trailer = grpcWeb.trailerParse(envelope.data);
          grpcWeb.validateTrailer(trailer, response.header); // a status other than OK fails the call here
          continue;
        }
        yield data(envelope);
      }
      if (!foundStatus && trailer === undefined) throw new ConnectError("protocol error: missing trailer", Code.Internal);
      options.onTrailer(trailer ?? new Headers());
    },
  },
  // Connect: the status is a last message flagged as the end of the stream, in JSON; a call refused
  // before it starts may answer with an HTTP status instead.
  connect: {
    requestHeader: (timeoutMs, headers) => connect.requestHeader("server_streaming", true, timeoutMs, headers, true),
    async *messages(response, options) {
      connect.validateResponse("server_streaming", true, response.status, response.header);
      options.onHeader(response.header);
      let trailer: Headers | undefined;
      for await (const envelope of envelopes(response)) {
        if (trailer !== undefined) {
          throw new ConnectError("protocol error: received extra message after EndStreamResponse", Code.InvalidArgument);
        }
        if ((envelope.flags & connect.endStreamFlag) === connect.endStreamFlag) {
          const end = endStream.parse(envelope.data);
          if (end.error !== undefined) {
            response.header.forEach((value, key) => end.error!.metadata.append(key, value)); // as connect does
            throw end.error;
          }
          trailer = end.metadata;
          continue;
        }
        yield data(envelope);
      }
      if (trailer === undefined) throw new ConnectError("protocol error: missing EndStreamResponse", Code.InvalidArgument);
      options.onTrailer(trailer);
    },
  },
};

const endStream = connect.createEndStreamSerialization({});

/** The messages of a response body, as envelopes (flags and bytes). */
function envelopes(response: UniversalClientResponse): AsyncIterable<EnvelopedMessage> {
  return pipe(response.body, transformSplitEnvelope(READ_MAX_BYTES));
}

/** The bytes of a message; the client asked for none compressed. */
function data(envelope: EnvelopedMessage): Uint8Array {
  if ((envelope.flags & compressedFlag) === compressedFlag) {
    throw new ConnectError("the server sent a compressed message, which this client did not accept", Code.Internal);
  }
  return envelope.data;
}
