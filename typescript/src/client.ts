/** The gRPC client: streams of ModelEvents whose iteration never throws. */

import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { type CallOptions, Code, ConnectError, createClient, type Client, type Transport } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import type { AgentContextSchema } from "./gen/pi/ai/v1/context_pb.js";
import type { ModelEvent } from "./gen/pi/ai/v1/event_pb.js";
import { StopReason } from "./gen/pi/ai/v1/message_pb.js";
import {
  type GenerationOptionsSchema,
  ModelService,
  type StreamRequest,
  StreamRequestSchema,
} from "./gen/pi/ai/v1/service_pb.js";
import { StreamProtocolError } from "./accumulator.js";
import { AssistantMessageEventStream } from "./assistant-message-event-stream.js";
import { isTerminal } from "./events.js";
import { DEFAULT_LIMITS, type Limits, ValidationError, checkRequest } from "./validate.js";

/** How long the trailers may take after the terminal event before the call is cut (as in Python). */
const TRAILER_GRACE_MS = 1000;

/** How to reach the server. */
export interface TransportOptions {
  /**
   * PEM certificates to trust (a CA, or the server's self-signed certificate): the connection
   * uses TLS, and a host:port target means `https://host:port`.
   */
  ca?: string | Uint8Array;
}

/** Options of one model call. */
export interface StreamModelOptions extends TransportOptions {
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
  /** Sent as `authorization: Bearer <token>` (in place of any authorization in `headers`). */
  token?: string;
  /** The bounds `checkRequest` applies before anything is sent; the server's defaults if absent. */
  limits?: Readonly<Limits>;
}

/** The events of one call, plus the response metadata the server sent with them. */
export class ModelCallStream extends AssistantMessageEventStream {
  /** The response headers (gRPC initial metadata), in place before the first event arrives. */
  headers = new Headers();
  /** The response trailers (gRPC trailing metadata) of a call that ends with status OK. */
  trailers = new Headers();
}

/**
 * A gRPC transport (HTTP/2; TLS with `options.ca`) to `target`, given as host:port or as a base
 * URL, for calls that share one connection. An idle connection does not keep the process alive.
 */
export function createModelTransport(target: string, options: TransportOptions = {}): Transport {
  const ca = options.ca;
  if (ca === undefined) return createGrpcTransport({ baseUrl: baseUrlOf(target, "http") });
  const baseUrl = baseUrlOf(target, "https");
  if (!baseUrl.startsWith("https://")) throw new TypeError(`a CA certificate needs TLS, not ${target}`);
  return createGrpcTransport({ baseUrl, nodeOptions: { ca: typeof ca === "string" ? ca : Buffer.from(ca) } });
}

const transports = new Map<string, Transport>();

/**
 * The one transport of this process to `target` (with these certificates): calls to the same
 * address share a connection, which closes after 15 idle minutes and, while idle, does not keep
 * the process alive.
 */
function sharedTransport(target: string, options: TransportOptions): Transport {
  const ca = options.ca;
  const key = ca === undefined ? target : `${target}\n${Buffer.from(ca).toString("latin1")}`;
  let transport = transports.get(key);
  if (transport === undefined) {
    transport = createModelTransport(target, options);
    transports.set(key, transport);
  }
  return transport;
}

/**
 * Start one call of pi.ai.v1.ModelService.Stream at `target` (host:port or a base URL, over the
 * connection this process keeps to it; or a transport of your own); the events arrive with
 * `partial` rebuilt.
 *
 * Every failure becomes the stream's `error` event, carrying everything received before it: a
 * request that breaks the message rules is ERROR "invalid request: ..." and is never sent; a
 * non-OK status or transport failure is ERROR with the status message; a stream that closes
 * without a terminal event is ERROR "stream ended without a terminal event"; `cancel()` on the
 * returned stream, or aborting `options.signal`, is ABORTED.
 */
export function streamModel(
  target: string | Transport,
  context: MessageInitShape<typeof AgentContextSchema>,
  options: StreamModelOptions = {},
): ModelCallStream {
  const events = new ModelCallStream();
  const request = create(StreamRequestSchema, {
    model: options.model ?? "",
    context,
    options: options.generation,
  });
  try {
    checkRequest(request, options.limits ?? DEFAULT_LIMITS);
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    events.fail(StopReason.ERROR, `invalid request: ${error.message}`);
    return events;
  }
  const transport = typeof target === "string" ? sharedTransport(target, options) : target;
  const client = createClient(ModelService, transport);
  events.drive((signal) => receive(events, client, request, options, signal));
  const caller = options.signal;
  const cancel = (): void => events.cancel();
  if (caller?.aborted) cancel();
  caller?.addEventListener("abort", cancel, { once: true });
  void events.result().then(() => caller?.removeEventListener("abort", cancel));
  return events;
}

/** A call that failed with a status or in transport, worded for the `error` event. */
class CallFailure extends Error {}

async function receive(
  events: ModelCallStream,
  client: Client<typeof ModelService>,
  request: StreamRequest,
  options: StreamModelOptions,
  signal: AbortSignal,
): Promise<void> {
  try {
    const terminal = await relay(events, client, request, options, signal);
    if (terminal !== undefined) await events.send(terminal);
  } catch (error) {
    if (signal.aborted) return; // cancel() has already ended the stream
    if (error instanceof StreamProtocolError || error instanceof CallFailure) {
      events.fail(StopReason.ERROR, error.message);
    } else {
      throw error;
    }
  }
}

/**
 * Pass the call's events on to `events`, except the terminal one, which is returned once the
 * call has ended: by then the trailers are in place, so a consumer that has the terminal event
 * has all the metadata too.
 */
async function relay(
  events: ModelCallStream,
  client: Client<typeof ModelService>,
  request: StreamRequest,
  options: StreamModelOptions,
  signal: AbortSignal,
): Promise<ModelEvent | undefined> {
  const call = new AbortController();
  const abort = (): void => call.abort();
  signal.addEventListener("abort", abort, { once: true });
  const headers = new Headers(options.headers);
  if (options.token !== undefined) headers.set("authorization", `Bearer ${options.token}`);
  let terminal: ModelEvent | undefined;
  let grace: ReturnType<typeof setTimeout> | undefined;
  let received = 0;
  try {
    const stream = client.stream(request, {
      signal: call.signal,
      timeoutMs: options.timeoutMs,
      headers,
      onHeader: (sent) => (events.headers = sent),
      onTrailer: (sent) => (events.trailers = sent),
    });
    for await (const event of stream) {
      received += 1;
      if (terminal !== undefined) continue; // anything sent after the terminal event is ignored
      if (isTerminal(event)) {
        terminal = event;
        // The trailers follow the terminal event at once; a server that holds on is cut off.
        grace = setTimeout(abort, TRAILER_GRACE_MS);
      } else {
        await events.send(event); // waits while the consumer is behind
      }
    }
  } catch (error) {
    if (terminal !== undefined || signal.aborted) return terminal;
    if (error instanceof ConnectError) throw new CallFailure(statusMessage(error, received));
    throw error;
  } finally {
    clearTimeout(grace);
    signal.removeEventListener("abort", abort);
    call.abort(); // the call is over for us: release its HTTP/2 stream if the server has not
  }
  return terminal;
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

/** `target` as a base URL: a URL is kept, host:port gets `scheme`. */
function baseUrlOf(target: string, scheme: "http" | "https"): string {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(target) ? target : `${scheme}://${target}`;
}

/** The gRPC name of a status code, e.g. DEADLINE_EXCEEDED, as other gRPC clients print it. */
function codeName(code: Code): string {
  return Code[code].replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase();
}
