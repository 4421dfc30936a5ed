/**
 * The client of pi.ai.v1.ModelService, over gRPC, Connect or gRPC-web: streams of ModelEvents whose
 * iteration never throws, read through StreamBatched (or Stream), and the model catalog
 * (ListModels, GetModel).
 */

import http from "node:http";
import https from "node:https";
import { setTimeout as sleep } from "node:timers/promises";

import { create, type MessageInitShape } from "@bufbuild/protobuf";
import {
  type Client,
  Code,
  type CallOptions as ConnectCallOptions,
  ConnectError,
  createClient,
  type Transport,
} from "@connectrpc/connect";
import {
  createConnectTransport,
  createGrpcTransport,
  createGrpcWebTransport,
  Http2SessionManager,
} from "@connectrpc/connect-node";
import { StreamProtocolError } from "./accumulator.js";
import { AssistantMessageEventStream, type StreamOptions } from "./assistant-message-event-stream.js";
import { decodeEvent, STREAM_BATCHED_VIEW, type StreamCallOptions, serverStream } from "./batched.js";
import { isTerminal } from "./events.js";
import type { AgentContextSchema } from "./gen/pi/ai/v1/context_pb.js";
import { type ModelEvent, StreamRule } from "./gen/pi/ai/v1/event_pb.js";
import { StopReason } from "./gen/pi/ai/v1/message_pb.js";
import type { Model } from "./gen/pi/ai/v1/model_pb.js";
import {
  CancelRequestSchema,
  type GenerationOptionsSchema,
  GetModelRequestSchema,
  ListModelsRequestSchema,
  ModelService,
  ResumeRequestSchema,
  type StreamBatchedView,
  type StreamRequest,
  StreamRequestSchema,
} from "./gen/pi/ai/v1/service_pb.js";
import { Numbering } from "./numbering.js";
import { violations } from "./validate.js";

/** The deadline of a stream that sets none: 15 minutes, longer than the server's own stream limit. */
export const DEFAULT_TIMEOUT_MS = 15 * 60 * 1000;

/** The deadline of a catalog call (listModels, getModel) that sets none: 30 seconds. */
export const DEFAULT_UNARY_TIMEOUT_MS = 30 * 1000;

/** How long the trailers may take after the terminal event before the call is cut. */
const TRAILER_GRACE_MS = 1000;

/**
 * A call cut off after its stream id arrived is resumed (ModelService.Resume) up to this many times
 * in a row without an event applied between them, waiting RESUME_BACKOFF_MS before the first
 * attempt, doubled before each next one.
 */
export const MAX_RESUMES = 5;

/** How long a client waits before its first Resume of a call cut off: 50 ms, doubled on each attempt in a row. */
export const RESUME_BACKOFF_MS = 50;

/** How long a Cancel call (ModelService.Cancel, sent when the caller cancels a kept stream) may take. */
const CANCEL_TIMEOUT_MS = 1000;

/**
 * The longest deadline a call gets, in milliseconds: 99,999,999 (about 27.8 hours), the most the
 * eight digits of gRPC's `grpc-timeout` header carry in milliseconds (a server may refuse more),
 * and well within the longest delay of a Node timer (2^31 - 1; a timer set for longer fires at
 * once).
 */
const MAX_TIMEOUT_MS = 99_999_999;

/** The protocols of the transports the client makes (TransportOptions.protocol). */
export type Protocol = "grpc" | "connect" | "grpc-web";

/** The protocols a transport of createModelTransport speaks. */
export const PROTOCOLS: readonly Protocol[] = ["grpc", "connect", "grpc-web"];

/** How to reach the server. */
export interface TransportOptions {
  /**
   * PEM certificates to trust (a CA, or the server's self-signed certificate): the connection
   * uses TLS, and a host:port target means `https://host:port`.
   */
  ca?: string | Uint8Array;
  /**
   * The protocol of the calls: "grpc" (the default), "connect" or "grpc-web" (binary messages;
   * what `pi-proto serve --http-port` serves). The streams behave the same on each.
   */
  protocol?: Protocol;
  /**
   * The HTTP version of a Connect or gRPC-web transport: "1.1" (the default, which every server
   * of those protocols speaks) or "2" (cleartext HTTP/2, or TLS with `ca`). gRPC is HTTP/2 alone.
   */
  httpVersion?: "1.1" | "2";
}

/** Options of any call: how to reach the server, and what goes with the call. */
export interface CallOptions extends TransportOptions {
  /**
   * The call's deadline in milliseconds from its start; Infinity for none, 0 or less for one that
   * has passed already (nothing is sent). It is rounded up to a whole millisecond, and capped at
   * 99,999,999 (about 27.8 hours, the most gRPC's `grpc-timeout` header carries). A stream's default is
   * 15 minutes (DEFAULT_TIMEOUT_MS), passing it ends the stream with ERROR (status
   * DEADLINE_EXCEEDED); a catalog call's is 30 seconds (DEFAULT_UNARY_TIMEOUT_MS). NaN is refused.
   */
  timeoutMs?: number;
  /** Aborting it cancels the call: a stream ends with ABORTED, a catalog call fails with CANCELED. */
  signal?: AbortSignal;
  /** Request metadata sent with the call. */
  headers?: ConnectCallOptions["headers"];
  /** Sent as `authorization: Bearer <token>` (in place of any authorization in `headers`). */
  token?: string;
}

/** Options of one model call. */
export interface StreamModelOptions extends CallOptions, StreamOptions {
  /** The provider serving the model, as pi names a model; empty or absent for the only one serving it. */
  provider?: string;
  /** The model's id, as its provider names it; empty or absent for the server's default model. */
  model?: string;
  /** pi's call options (temperature, reasoning, tool choice, headers...); absent for the model's defaults. */
  generation?: MessageInitShape<typeof GenerationOptionsSchema>;
  /** Let the server merge deltas that wait while this client reads slower than the model writes. */
  coalesceDeltas?: boolean;
  /**
   * Call StreamBatched (true, the default), which sends the events that are ready together in one
   * message, and fall back to Stream, within the same deadline, when the server answers
   * UNIMPLEMENTED before any event; false calls Stream alone. The events are the same either way.
   */
  batched?: boolean;
}

/** A catalog call (listModels, getModel) that ended with a status other than OK. */
export class CallError extends Error {
  override name = "CallError";

  constructor(
    /** The gRPC status code's name, e.g. "NOT_FOUND", "UNAVAILABLE". */
    readonly statusCode: string,
    /** The status message. */
    readonly detail: string,
  ) {
    super(`${statusCode}: ${detail}`);
  }
}

/** The events of one call, plus the response metadata the server sent with them. */
export class ModelCallStream extends AssistantMessageEventStream {
  /**
   * The response headers (gRPC initial metadata), in place before the first event arrives: those
   * of the first call, when the stream was resumed.
   */
  headers: Headers = new Headers();
  /** The response trailers (gRPC trailing metadata) of the call (the last, if resumed) that ends with status OK. */
  trailers: Headers = new Headers();
  /**
   * The id the server keeps the stream under (its start event's `streamId`), which the client
   * resumes and cancels it by; empty until the start event arrives, and when the server keeps no
   * streams.
   */
  streamId = "";
}

/**
 * A transport to `target`, given as host:port or as a base URL, for calls that share its
 * connections: gRPC (HTTP/2) by default, Connect or gRPC-web with `options.protocol` (HTTP/1.1,
 * or HTTP/2 with `httpVersion: "2"`); TLS with `options.ca`. Idle connections do not keep the
 * process alive.
 */
export function createModelTransport(target: string, options: TransportOptions = {}): Transport {
  const { ca, protocol = "grpc" } = options;
  if (!PROTOCOLS.includes(protocol)) {
    throw new TypeError(`protocol ${JSON.stringify(protocol)}: expected one of ${PROTOCOLS.join(", ")}`);
  }
  const httpVersion = options.httpVersion ?? (protocol === "grpc" ? "2" : "1.1");
  if (httpVersion !== "1.1" && httpVersion !== "2") {
    throw new TypeError(`httpVersion ${JSON.stringify(httpVersion)}: expected "1.1" or "2"`);
  }
  if (protocol === "grpc" && httpVersion !== "2") throw new TypeError("gRPC needs HTTP/2, not HTTP/1.1");
  const baseUrl = baseUrlOf(target, ca === undefined ? "http" : "https");
  if (!URL.canParse(baseUrl) || new URL(baseUrl).host === "") {
    throw new TypeError(`target ${JSON.stringify(target)}: expected host:port or a base URL`);
  }
  if (ca !== undefined && !baseUrl.startsWith("https://")) {
    throw new TypeError(`a CA certificate needs TLS, not ${target}`);
  }
  const caOption = ca === undefined ? {} : { ca: typeof ca === "string" ? ca : Buffer.from(ca) };
  if (httpVersion === "2") {
    // One HTTP/2 session for every call of the transport.
    const sessionManager = new Http2SessionManager(baseUrl, {}, ca === undefined ? undefined : caOption);
    const common = { baseUrl, httpVersion, sessionManager } as const;
    if (protocol === "grpc") return createGrpcTransport(common);
    return protocol === "connect" ? createConnectTransport(common) : createGrpcWebTransport(common);
  }
  // One pool of HTTP/1.1 connections. An idle connection is unref'd by the agent; it is closed
  // after 4 s, before the 5 s after which servers such as uvicorn and Node's close theirs (a
  // request sent down a connection the server is closing would fail).
  const agentOptions = { keepAlive: true, timeout: IDLE_HTTP1_MS, scheduling: "lifo", ...caOption } as const;
  const agent = baseUrl.startsWith("https://") ? new https.Agent(agentOptions) : new http.Agent(agentOptions);
  const common = { baseUrl, httpVersion, nodeOptions: { agent, ...caOption } } as const;
  return protocol === "connect" ? createConnectTransport(common) : createGrpcWebTransport(common);
}

/** How long an idle HTTP/1.1 connection is kept for the next call. */
const IDLE_HTTP1_MS = 4000;

const transports = new Map<string, Transport>();

/**
 * The one transport of this process to `target` (with these certificates): calls to the same
 * address share a connection, which closes after 15 idle minutes and, while idle, does not keep
 * the process alive.
 */
function sharedTransport(target: string, options: TransportOptions): Transport {
  const { ca, protocol = "grpc", httpVersion = "" } = options;
  const reached = `${protocol} ${httpVersion} ${target}`;
  const key = ca === undefined ? reached : `${reached}\n${Buffer.from(ca).toString("latin1")}`;
  let transport = transports.get(key);
  if (transport === undefined) {
    transport = createModelTransport(target, options);
    transports.set(key, transport);
  }
  return transport;
}

/**
 * Start one model call at `target` (host:port or a base URL, over the connections this process
 * keeps to it, in `options.protocol`: gRPC, Connect or gRPC-web; or a transport of your own); the
 * events arrive with `partial` rebuilt, whatever the protocol.
 *
 * The call is pi.ai.v1.ModelService.StreamBatched, whose messages each carry the events that were
 * ready together; the events of a batch are applied one at a time, as they are consumed, so each
 * event's partial is the message as of that event. A server that answers UNIMPLEMENTED before any
 * event is called again through Stream, within the same deadline; `batched: false` calls Stream
 * alone.
 *
 * A server that keeps its streams numbers their events and names the stream in its start event
 * (`streamId`). A repeated event is then dropped and a missing one breaks rule `sequence`; a call
 * cut off (UNAVAILABLE, or the connection lost) or ended without a terminal event is resumed by
 * itself (ModelService.Resume after the last event applied, up to MAX_RESUMES times in a row,
 * waiting RESUME_BACKOFF_MS doubled each time, within the same deadline), so the consumer sees one
 * stream; when it cannot resume, the stream ends as it would have without resuming, and a Resume
 * refused (NOT_FOUND, OUT_OF_RANGE...) ends it ERROR with that status. A cancel of such a stream
 * also sends ModelService.Cancel, without waiting for it.
 *
 * Every failure becomes the stream's one `error` event, carrying everything received before it,
 * and `failure` on the stream says which it was: a request that breaks the schema's rules is never
 * sent (status INVALID_ARGUMENT, as a server would answer); a non-OK status or transport failure
 * is ERROR with the status message (its status code); an event that breaks a stream rule, bytes
 * that are no ModelEvent (`event-decode`) and a call that ends without a terminal event
 * (`terminal-missing`) are ERROR (the rule); `cancel()` on the returned stream, from any task, or
 * aborting `options.signal` is ABORTED (no failure). Options it cannot use (a target that is no
 * address, an unknown protocol, a header value HTTP cannot carry, a NaN deadline, a NaN or
 * negative `maxMessageBytes`) are refused the same way as a broken request: nothing is sent, and
 * the stream's one event is ERROR with status INVALID_ARGUMENT. streamModel itself never throws.
 */
export function streamModel(
  target: string | Transport,
  context: MessageInitShape<typeof AgentContextSchema>,
  options: StreamModelOptions = {},
): ModelCallStream {
  const events = new ModelCallStream({ maxMessageBytes: options.maxMessageBytes });
  const request = create(StreamRequestSchema, {
    provider: options.provider ?? "",
    model: options.model ?? "",
    context,
    options: options.generation,
    coalesceDeltas: options.coalesceDeltas ?? false,
    resumable: true, // every client here resumes a stream cut off
  });
  const headers = request.options?.headers;
  if (headers !== undefined) {
    // Map entries are encoded in key order, as every runtime encodes them. (An object keeps
    // integer-like keys first whatever is done; no HTTP header is named by digits alone.)
    const sorted = Object.entries(headers).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    request.options = { ...request.options!, headers: Object.fromEntries(sorted) }; // the caller's stays as it is
  }
  const broken = violations(StreamRequestSchema, request);
  if (broken.length > 0) {
    const detail = `invalid request: ${broken.map((item) => `${item.fieldPath}: ${item.detail}`).join("; ")}`;
    events.fail(StopReason.ERROR, detail, { kind: "status", statusCode: "INVALID_ARGUMENT", detail });
    return events;
  }
  let transport: Transport;
  try {
    const { maxMessageBytes } = options;
    if (maxMessageBytes !== undefined && !(maxMessageBytes >= 0)) {
      throw new RangeError(`maxMessageBytes ${maxMessageBytes}: expected a number of bytes, 0 or more`);
    }
    checkTimeout(options.timeoutMs);
    requestHeaders(options); // a value HTTP cannot carry throws here rather than when the call is made
    transport = typeof target === "string" ? sharedTransport(target, options) : target;
  } catch (error) {
    const detail = `invalid options: ${error instanceof Error ? error.message : String(error)}`;
    events.fail(StopReason.ERROR, detail, { kind: "status", statusCode: "INVALID_ARGUMENT", detail });
    return events;
  }
  const caller = options.signal;
  const cancel = (): void => events.cancel();
  events.drive(async (signal) => {
    // The server keeps a stream running for a while after its client goes away, and cannot tell
    // a cancel from a connection lost: it is told.
    const cancelKept = (): void => {
      if (events.streamId !== "") sendCancel(transport, events.streamId, requestHeaders(options));
    };
    signal.addEventListener("abort", cancelKept, { once: true });
    try {
      await receive(events, transport, request, options, signal);
    } finally {
      signal.removeEventListener("abort", cancelKept);
      caller?.removeEventListener("abort", cancel); // the stream has ended, or is about to
    }
  });
  if (caller?.aborted) cancel();
  else caller?.addEventListener("abort", cancel, { once: true });
  return events;
}

async function receive(
  events: ModelCallStream,
  transport: Transport,
  request: StreamRequest,
  options: StreamModelOptions,
  signal: AbortSignal,
): Promise<void> {
  try {
    const terminal = await relay(events, transport, request, options, signal);
    if (terminal !== undefined) await events.send(terminal);
  } catch (error) {
    if (signal.aborted) return; // cancel() has already ended the stream
    if (error instanceof StreamProtocolError) {
      events.failRule(error);
      return;
    }
    const status = ConnectError.from(error); // UNKNOWN for a failure that is not a status
    const statusCode = codeName(connectionLost(status) ? Code.Unavailable : status.code);
    const detail = status.rawMessage || statusCode;
    events.fail(StopReason.ERROR, detail, { kind: "status", statusCode, detail });
  }
}

/** The messages of one call: batches whose events are bytes (StreamBatched), or ModelEvents (Stream, Resume). */
type Messages =
  | { readonly kind: "batches"; readonly iterator: AsyncIterator<StreamBatchedView> }
  | { readonly kind: "events"; readonly iterator: AsyncIterator<ModelEvent> };

/**
 * Pass the call's events on to `events`, except the terminal one, which is returned once the
 * call has ended: by then the trailers are in place, so a consumer that has the terminal event
 * has all the metadata too. Throws a StreamProtocolError for an event that breaks a rule or does
 * not decode, and a ConnectError for any other failure of the call.
 *
 * With StreamBatched, each event of a batch is decoded and applied only when a consumer asks for
 * it, and counts as one event for every index; a server without StreamBatched (UNIMPLEMENTED
 * before any event) is called again through Stream, within what is left of the deadline.
 *
 * A numbered stream's repeats are dropped and its gaps break rule `sequence` (Numbering). A call
 * with a stream id that is cut off (UNAVAILABLE, or a connection lost) or that ends without its
 * terminal event is resumed: ModelService.Resume after the last event applied, within what is
 * left of the deadline, its events applied as the first call's, so the consumer sees one stream.
 */
async function relay(
  events: ModelCallStream,
  transport: Transport,
  request: StreamRequest,
  options: StreamModelOptions,
  signal: AbortSignal,
): Promise<ModelEvent | undefined> {
  if (signal.aborted) return undefined; // cancelled before the call could start
  const firstTimeout = callTimeout(options.timeoutMs ?? DEFAULT_TIMEOUT_MS); // throws for a deadline that has passed
  const deadline = firstTimeout === undefined ? Infinity : performance.now() + firstTimeout;
  const left = (): number | undefined =>
    firstTimeout === undefined ? undefined : Math.max(1, Math.floor(deadline - performance.now()));
  const call = new AbortController();
  const abort = (): void => call.abort();
  signal.addEventListener("abort", abort, { once: true });
  const callOptions = (timeoutMs: number | undefined, resumed: boolean): StreamCallOptions => ({
    signal: call.signal,
    timeoutMs,
    headers: requestHeaders(options),
    // The headers are the first call's: the consumer may hold them since its first event.
    onHeader: (sent) => {
      if (!resumed) events.headers = sent;
    },
    onTrailer: (sent) => (events.trailers = sent),
  });
  const open = (batched: boolean, timeoutMs: number | undefined): Messages => {
    const asked = callOptions(timeoutMs, false);
    if (batched) return { kind: "batches", iterator: serverStream(transport, STREAM_BATCHED_VIEW, request, asked) };
    return { kind: "events", iterator: serverStream(transport, ModelService.method.stream, request, asked) };
  };
  const numbering = new Numbering(request.coalesceDeltas);
  let resumes = 0; // Resume calls in a row without an event applied between them
  /** Wait, then resume after the last event applied; undefined when the stream cannot resume. */
  const resume = async (): Promise<Messages | undefined> => {
    if (events.streamId === "" || resumes >= MAX_RESUMES || signal.aborted) return undefined;
    const wait = RESUME_BACKOFF_MS * 2 ** resumes;
    if (performance.now() + wait >= deadline) return undefined;
    resumes += 1;
    await sleep(wait, undefined, { signal }).catch(() => undefined); // a cancel ends the wait
    if (signal.aborted) return undefined;
    const asked = create(ResumeRequestSchema, {
      streamId: events.streamId,
      afterSeq: numbering.last,
      coalesceDeltas: request.coalesceDeltas,
    });
    // Resume streams single events, whichever method the first call was.
    const iterator = serverStream(transport, ModelService.method.resume, asked, callOptions(left(), true));
    return { kind: "events", iterator };
  };
  let messages = open(options.batched ?? true, firstTimeout);
  let terminal: ModelEvent | undefined;
  let grace: ReturnType<typeof setTimeout> | undefined;
  let received = 0; // events applied (repeats are not), not messages
  let reading = false;
  let finished = false; // the call's messages were read to their end, or reading them failed
  /** Apply one event's number, then count it and pass it on; `asked`: push it only once a consumer asks for it. */
  const pass = async (event: ModelEvent, asked: boolean): Promise<void> => {
    if (terminal !== undefined) return; // anything sent after the terminal event is ignored
    if (!numbering.admit(event, received)) return; // a repeat of an event applied already
    received += 1;
    resumes = 0;
    // Known before the event is pushed: a consumer that cancels as soon as it has the event
    // tells the server.
    if (received === 1 && event.event.case === "start") events.streamId = event.event.value.streamId;
    if (isTerminal(event)) {
      terminal = event;
      // The trailers follow the terminal event at once; a server that holds on is cut off.
      grace = setTimeout(abort, TRAILER_GRACE_MS);
      return;
    }
    if (asked) {
      await events.offer(event); // its partial is the message as of this event, as it is consumed
    } else {
      await events.send(event); // waits while the consumer is behind
    }
  };
  try {
    for (;;) {
      reading = true;
      let next: IteratorResult<ModelEvent | StreamBatchedView>;
      try {
        next = await messages.iterator.next();
      } catch (error) {
        if (terminal !== undefined || signal.aborted) throw error;
        const failure = ConnectError.from(error);
        if (messages.kind === "batches" && received === 0 && failure.code === Code.Unimplemented) {
          // A server without StreamBatched: the same call through Stream, within the same deadline.
          messages = open(false, left());
          continue;
        }
        const resumed = cutOff(failure) ? await resume() : undefined;
        if (resumed === undefined) throw error;
        messages = resumed;
        continue;
      }
      reading = false;
      if (next.done === true) {
        // An end without the terminal event: the server lost the model's stream, not the stream itself.
        const resumed = terminal === undefined ? await resume() : undefined;
        if (resumed === undefined) break;
        messages = resumed;
        continue;
      }
      if (messages.kind === "events") {
        await pass(next.value as ModelEvent, false);
        continue;
      }
      // Each event of the batch decoded alone, as a consumer asks for it.
      for (const bytes of (next.value as StreamBatchedView).events) {
        if (terminal !== undefined || signal.aborted) break;
        await pass(decodeEvent(bytes, received), true);
      }
    }
    finished = true;
  } catch (error) {
    finished = reading;
    if (error instanceof StreamProtocolError) throw error;
    if (terminal !== undefined || signal.aborted) return terminal;
    const failure = ConnectError.from(error);
    if (undecodable(failure)) {
      const what = messages.kind === "batches" ? "a StreamBatchedResponse" : "a ModelEvent";
      throw new StreamProtocolError(
        received,
        StreamRule.EVENT_DECODE,
        `the bytes are not ${what}: ${failure.rawMessage}`,
      );
    }
    throw failure;
  } finally {
    clearTimeout(grace);
    signal.removeEventListener("abort", abort);
    call.abort(); // the call is over for us: release its HTTP/2 stream if the server has not
    // connect clears its deadline timer only once a read sees the call end; a call left early
    // would otherwise keep the process alive until its deadline.
    if (!finished) void drain(messages.iterator);
  }
  return terminal;
}

/**
 * Ask the server to stop the stream it keeps as `streamId`, without waiting for the answer. Best
 * effort: a stream nobody reads is cancelled by its server soon after anyway, so errors are ignored.
 */
function sendCancel(transport: Transport, streamId: string, headers: Headers): void {
  const request = create(CancelRequestSchema, { streamId });
  transport.unary(ModelService.method.cancel, undefined, CANCEL_TIMEOUT_MS, headers, request).catch(() => undefined);
}

/**
 * The models the server at `target` serves, in its catalog order; only `provider`'s when given.
 * Rejects with a CallError carrying the status code.
 */
export async function listModels(
  target: string | Transport,
  provider = "",
  options: CallOptions = {},
): Promise<Model[]> {
  const request = create(ListModelsRequestSchema, { provider });
  const reply = await unary(target, options, (client, call) => client.listModels(request, call));
  return reply.models;
}

/**
 * One model of the catalog of the server at `target`, by its id and (when more than one provider
 * serves that id) its provider. Rejects with a CallError carrying the status code: NOT_FOUND, with
 * what is served, when the server does not serve it.
 */
export async function getModel(
  target: string | Transport,
  id: string,
  provider = "",
  options: CallOptions = {},
): Promise<Model> {
  const request = create(GetModelRequestSchema, { provider, id });
  const broken = violations(GetModelRequestSchema, request);
  if (broken.length > 0) {
    throw new CallError("INVALID_ARGUMENT", broken.map((item) => `${item.fieldPath}: ${item.detail}`).join("; "));
  }
  const reply = await unary(target, options, (client, call) => client.getModel(request, call));
  if (reply.model === undefined) throw new CallError("INTERNAL", "the server answered GetModel without a model");
  return reply.model;
}

type UnaryOptions = { timeoutMs?: number; signal?: AbortSignal; headers: Headers };

/** Make one unary call; a failure becomes a CallError (INVALID_ARGUMENT for options it cannot use). */
async function unary<T>(
  target: string | Transport,
  options: CallOptions,
  call: (client: Client<typeof ModelService>, options: UnaryOptions) => Promise<T>,
): Promise<T> {
  let transport: Transport;
  let headers: Headers;
  try {
    checkTimeout(options.timeoutMs);
    headers = requestHeaders(options);
    transport = typeof target === "string" ? sharedTransport(target, options) : target;
  } catch (error) {
    throw new CallError("INVALID_ARGUMENT", error instanceof Error ? error.message : String(error));
  }
  try {
    const timeoutMs = callTimeout(options.timeoutMs ?? DEFAULT_UNARY_TIMEOUT_MS);
    return await call(createClient(ModelService, transport), { timeoutMs, signal: options.signal, headers });
  } catch (error) {
    const status = ConnectError.from(error);
    throw new CallError(codeName(status.code), status.rawMessage || codeName(status.code));
  }
}

/** The request metadata of a call: `headers`, and the bearer token. */
function requestHeaders(options: CallOptions): Headers {
  const headers = new Headers(options.headers);
  if (options.token !== undefined) headers.set("authorization", `Bearer ${options.token}`);
  return headers;
}

/** Refuse a `timeoutMs` that is not a number of milliseconds (NaN, or not a number at all). */
function checkTimeout(timeoutMs: number | undefined): void {
  if (timeoutMs !== undefined && (typeof timeoutMs !== "number" || Number.isNaN(timeoutMs))) {
    throw new RangeError(`timeoutMs ${String(timeoutMs)}: expected milliseconds, or Infinity for none`);
  }
}

/**
 * `timeoutMs` as connect takes it: undefined for none (Infinity), else whole milliseconds (connect
 * writes the number as it is into the deadline header, and a header such as `grpc-timeout: 0.5m`
 * is malformed: a gRPC server may refuse it, and every later call on the connection with it), at
 * most MAX_TIMEOUT_MS. A deadline of 0 or less has passed already: it throws DEADLINE_EXCEEDED,
 * as connect's timer would, on every transport (connect's own calls read 0 or less as none).
 */
function callTimeout(timeoutMs: number): number | undefined {
  if (timeoutMs === Infinity) return undefined;
  if (!(timeoutMs > 0)) throw new ConnectError("the operation timed out", Code.DeadlineExceeded);
  return Math.min(Math.ceil(timeoutMs), MAX_TIMEOUT_MS);
}

/**
 * Whether the connection under the call was lost (a server that crashed or was killed, a network
 * that went away), not a status the server sent: connect-node reports the HTTP/2 streams a lost
 * session closes as CANCELED, and a reset HTTP/1.1 connection as ABORTED, though the client
 * cancelled nothing (a cancel of its own never gets here). Other gRPC clients say UNAVAILABLE.
 */
function connectionLost(error: ConnectError): boolean {
  const status = error.code === Code.Canceled || error.code === Code.Aborted;
  return status && [...error.metadata.keys()].length === 0; // a status from the server carries metadata
}

/** Whether a call was cut off rather than refused (UNAVAILABLE, or the connection under it lost): it may resume. */
function cutOff(error: ConnectError): boolean {
  return error.code === Code.Unavailable || connectionLost(error);
}

/** Read what is left of an aborted call, to its end. */
async function drain(messages: AsyncIterator<unknown>): Promise<void> {
  try {
    while ((await messages.next()).done !== true);
  } catch {
    // the abort, as expected
  }
}

/** Whether connect failed to decode a message, rather than the server sending a status. */
function undecodable(error: ConnectError): boolean {
  // A status from the server carries metadata (the trailers with grpc-status over gRPC and
  // gRPC-web, the response headers over Connect); a message connect could not parse has none.
  const metadata = [...error.metadata.keys()];
  return error.code === Code.Internal && error.rawMessage.startsWith("parse binary: ") && metadata.length === 0;
}

/** `target` as a base URL: a URL is kept, host:port gets `scheme`. */
function baseUrlOf(target: string, scheme: "http" | "https"): string {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(target) ? target : `${scheme}://${target}`;
}

/** The gRPC name of a status code, e.g. DEADLINE_EXCEEDED, as other gRPC clients print it. */
function codeName(code: Code): string {
  return Code[code].replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase();
}
