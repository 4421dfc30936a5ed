/** The gRPC client: streams of ModelEvents whose iteration never throws. */

import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { type CallOptions, Code, ConnectError, createClient, type Client, type Transport } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import type { AgentContextSchema } from "./gen/pi/ai/v1/context_pb.js";
import { StopReason } from "./gen/pi/ai/v1/message_pb.js";
import {
  type GenerationOptionsSchema,
  ModelService,
  type StreamRequest,
  StreamRequestSchema,
} from "./gen/pi/ai/v1/service_pb.js";
import { StreamProtocolError } from "./accumulator.js";
import { AssistantMessageEventStream } from "./assistant-message-event-stream.js";

/** Options of one model call. */
export interface StreamModelOptions {
  /** The model id to call; empty or absent for the server's default model. */
  model?: string;
  /** Generation options for this call; absent for the model's defaults. */
  generation?: MessageInitShape<typeof GenerationOptionsSchema>;
  /** The call's deadline in milliseconds; passing it ends the stream with ERROR. */
  timeoutMs?: number;
  /** Aborting it cancels the call, like `cancel()`: the stream ends with ABORTED. */
  signal?: AbortSignal;
  /** Request metadata sent with the call. */
  headers?: CallOptions["headers"];
}

/**
 * A gRPC transport (HTTP/2, plaintext) to `target`, given as host:port or as a base URL, for
 * calls that share one connection. An idle connection does not keep the process alive.
 */
export function createModelTransport(target: string): Transport {
  return createGrpcTransport({ baseUrl: baseUrlOf(target) });
}

const transports = new Map<string, Transport>();

/**
 * The one transport of this process to `target`: calls to the same address share a connection,
 * which closes after 15 idle minutes and, while idle, does not keep the process alive.
 */
function sharedTransport(target: string): Transport {
  let transport = transports.get(target);
  if (transport === undefined) {
    transport = createModelTransport(target);
    transports.set(target, transport);
  }
  return transport;
}

/**
 * Start one call of pi.ai.v1.ModelService.Stream at `target` (host:port or a base URL, over the
 * connection this process keeps to it; or a transport of your own); the events arrive with
 * `partial` rebuilt.
 *
 * Every failure becomes the stream's `error` event, carrying everything received before it: a
 * non-OK status or transport failure is ERROR with the status message; a stream that closes
 * without a terminal event is ERROR "stream ended without a terminal event"; `cancel()` on the
 * returned stream, or aborting `options.signal`, is ABORTED.
 */
export function streamModel(
  target: string | Transport,
  context: MessageInitShape<typeof AgentContextSchema>,
  options: StreamModelOptions = {},
): AssistantMessageEventStream {
  const transport = typeof target === "string" ? sharedTransport(target) : target;
  const client = createClient(ModelService, transport);
  const request = create(StreamRequestSchema, {
    model: options.model ?? "",
    context,
    options: options.generation,
  });
  const events = new AssistantMessageEventStream();
  events.drive((signal) => receive(events, client, request, options, signal));
  const caller = options.signal;
  const cancel = (): void => events.cancel();
  if (caller?.aborted) cancel();
  caller?.addEventListener("abort", cancel, { once: true });
  void events.result().then(() => caller?.removeEventListener("abort", cancel));
  return events;
}

async function receive(
  events: AssistantMessageEventStream,
  client: Client<typeof ModelService>,
  request: StreamRequest,
  options: StreamModelOptions,
  signal: AbortSignal,
): Promise<void> {
  let received = 0;
  try {
    const call = client.stream(request, { signal, timeoutMs: options.timeoutMs, headers: options.headers });
    for await (const event of call) {
      received += 1;
      await events.send(event); // waits while the consumer is behind
      // Leaving the loop cancels the call: anything sent after the terminal event is ignored.
      if (events.done) return;
    }
  } catch (error) {
    if (signal.aborted) return; // cancel() has already ended the stream
    if (error instanceof StreamProtocolError) {
      events.fail(StopReason.ERROR, error.message);
    } else if (error instanceof ConnectError) {
      events.fail(StopReason.ERROR, statusMessage(error, received));
    } else {
      throw error;
    }
  }
}

function statusMessage(error: ConnectError, received: number): string {
  // A status from the server carries its trailers; a message we could not decode has none.
  const undecodable = "parse binary: ";
  if (
    error.code === Code.Internal &&
    error.rawMessage.startsWith(undecodable) &&
    !error.metadata.has("grpc-status")
  ) {
    return `event ${received}: cannot decode ModelEvent: ${error.rawMessage.slice(undecodable.length)}`;
  }
  return error.rawMessage || codeName(error.code);
}

function baseUrlOf(target: string): string {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(target) ? target : `http://${target}`;
}

/** The gRPC name of a status code, e.g. DEADLINE_EXCEEDED, as other gRPC clients print it. */
function codeName(code: Code): string {
  return Code[code].replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase();
}
