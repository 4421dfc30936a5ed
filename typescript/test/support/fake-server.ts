/**
 * An in-process server of pi.ai.v1.ModelService for the client tests: connect-node's handler on a
 * node:http2 server (gRPC, Connect and gRPC-web) or a node:http one (HTTP/1.1: Connect and
 * gRPC-web), playing a script instead of a model (through Stream and StreamBatched) and serving a
 * catalog of models. (The corpus's client cases run the misbehaving servers against the reference
 * server.)
 */

import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import http from "node:http";
import http2 from "node:http2";
import https from "node:https";
import type { AddressInfo, Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import { codeToString } from "@connectrpc/connect/protocol-connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import {
  type CancelRequest,
  type Model,
  type ModelEvent,
  ModelService,
  type ResumeRequest,
  type StreamRequest,
} from "../../src/index.js";

/** What the server does for one call: the events to send; throw a ConnectError for a status. */
export type Script = (request: StreamRequest, context: HandlerContext) => AsyncIterable<ModelEvent>;

/**
 * How the server answers StreamBatched: "grouped" plays the script with the events that are ready
 * together in one message, "unimplemented" does not have the method (as an older server), and a
 * function gives the bytes of each message itself (any bytes, malformed or not) and the status
 * that follows them (OK when it gives none).
 */
export type Batches = "grouped" | "unimplemented" | Raw;

/** What the server does for one Resume call: the events to send; throw a ConnectError for a status. */
export type ResumeScript = (request: ResumeRequest, context: HandlerContext) => AsyncIterable<ModelEvent>;

/** The bytes of each message of a call (any bytes, malformed or not), and the status that follows them (OK when none). */
export type Raw = () => { messages: Uint8Array[]; status?: Code };

/** More of what the server does. */
export interface FakeServerOptions {
  /**
   * "2" (the default): HTTP/2, cleartext or TLS, for gRPC, Connect and gRPC-web; "1.1": HTTP/1.1,
   * for Connect and gRPC-web.
   */
  httpVersion?: "2" | "1.1";
  /** Answer Stream with these bytes and this status, in place of the script. */
  stream?: Raw;
  /** Answer Resume by this script; without one, Resume is NOT_FOUND, as a server that keeps no streams says. */
  resume?: ResumeScript;
}

const STREAM_PATH = "/pi.ai.v1.ModelService/Stream";
const BATCHED_PATH = "/pi.ai.v1.ModelService/StreamBatched";

export interface FakeServer {
  /** host:port to dial. */
  readonly target: string;
  /** The calls received so far (of every method). */
  readonly calls: number;
  /** The path of every request received, in order, e.g. "/pi.ai.v1.ModelService/Stream". */
  readonly paths: readonly string[];
  /** The content-type of every request received, in order, e.g. "application/connect+proto". */
  readonly contentTypes: ReadonlyArray<string | undefined>;
  /** How many events each StreamBatched message carried, when the server grouped them. */
  readonly batchSizes: readonly number[];
  /** The metadata of the last call received. */
  readonly lastHeaders: Headers | undefined;
  /** The connections (HTTP/2 sessions, or HTTP/1.1 sockets) opened so far. */
  readonly connections: number;
  /** The deadline each call asked for, in milliseconds (its grpc-timeout or connect-timeout-ms header). */
  readonly deadlines: ReadonlyArray<number | undefined>;
  /** Every Resume request received, in order. */
  readonly resumes: readonly ResumeRequest[];
  /** Every Cancel request received, in order. */
  readonly cancels: readonly CancelRequest[];
  /** Cut every connection at once, as a server that crashes does. */
  drop(): void;
  close(): Promise<void>;
}

/**
 * A server on a free port of 127.0.0.1 that streams by `script` and serves `catalog`; with `tls`,
 * it speaks TLS with that certificate; it answers StreamBatched as `batches` says.
 */
export async function startFakeServer(
  script: Script,
  tls?: { cert: string; key: string },
  catalog: readonly Model[] = [],
  batches: Batches = "grouped",
  options: FakeServerOptions = {},
): Promise<FakeServer> {
  let calls = 0;
  let connections = 0;
  let lastHeaders: Headers | undefined;
  const batchSizes: number[] = [];
  const resumes: ResumeRequest[] = [];
  const cancels: CancelRequest[] = [];
  const received = (context: HandlerContext): void => {
    calls += 1;
    lastHeaders = context.requestHeader;
  };
  const adapter = connectNodeAdapter({
    routes: (router) =>
      router.service(ModelService, {
        stream(request, context) {
          received(context);
          return script(request, context);
        },
        ...(batches === "grouped" && {
          async *streamBatched(request, context) {
            received(context);
            for await (const events of grouped(script(request, context))) {
              batchSizes.push(events.length);
              yield { events };
            }
          },
        }),
        resume(request, context) {
          received(context);
          resumes.push(request);
          if (options.resume === undefined) throw new ConnectError("this server keeps no streams", Code.NotFound);
          return options.resume(request, context);
        },
        cancel(request, context) {
          received(context);
          cancels.push(request);
          return { cancelled: true };
        },
        listModels(request, context) {
          received(context);
          return { models: catalog.filter((model) => !request.provider || model.provider === request.provider) };
        },
        getModel(request, context) {
          received(context);
          const model = catalog.find(
            (item) => item.id === request.id && (!request.provider || item.provider === request.provider),
          );
          if (model === undefined) {
            const served = catalog.map((item) => `${item.provider}/${item.id}`).join(", ");
            throw new ConnectError(`no model ${request.provider}/${request.id}; served: ${served}`, Code.NotFound);
          }
          return { model };
        },
      }),
  });
  // The deadline is taken off the request: connect starts a timer for it that only an abort
  // clears, and a 15-minute timer left behind would keep the test process alive.
  const deadlines: Array<number | undefined> = [];
  const paths: string[] = [];
  const contentTypes: Array<string | undefined> = [];
  type Request = http.IncomingMessage | http2.Http2ServerRequest;
  type Response = http.ServerResponse | http2.Http2ServerResponse;
  const handler = (request: Request, response: Response): void => {
    const url = request.url ?? "";
    paths.push(url);
    contentTypes.push(request.headers["content-type"]);
    const timeout = request.headers["grpc-timeout"] ?? request.headers["connect-timeout-ms"];
    deadlines.push(request.headers["grpc-timeout"] !== undefined ? milliseconds(timeout) : optionalNumber(timeout));
    delete request.headers["grpc-timeout"];
    delete request.headers["connect-timeout-ms"];
    const raw =
      typeof batches === "function" && url === BATCHED_PATH
        ? batches
        : url === STREAM_PATH
          ? options.stream
          : undefined;
    if (raw !== undefined) {
      calls += 1; // the request itself is not read
      request.resume();
      respond(request.headers["content-type"] ?? "", response, raw());
      return;
    }
    adapter(request, response);
  };
  const server =
    options.httpVersion === "1.1"
      ? tls === undefined
        ? http.createServer(handler)
        : https.createServer(tls, handler)
      : tls === undefined
        ? http2.createServer(handler)
        : http2.createSecureServer(tls, handler);
  const open = new Set<{ destroy(): void }>();
  const opened = (connection: http2.ServerHttp2Session | Socket): void => {
    connections += 1;
    open.add(connection);
    connection.once("close", () => open.delete(connection));
  };
  server.on(
    options.httpVersion === "1.1" ? (tls === undefined ? "connection" : "secureConnection") : "session",
    opened,
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const drop = (): void => {
    for (const connection of open) connection.destroy();
  };
  return {
    target: `127.0.0.1:${port}`,
    get calls() {
      return calls;
    },
    paths,
    contentTypes,
    batchSizes,
    get lastHeaders() {
      return lastHeaders;
    },
    get connections() {
      return connections;
    },
    deadlines,
    resumes,
    cancels,
    drop,
    close: () =>
      new Promise<void>((resolve) => {
        drop();
        server.close(() => resolve());
      }),
  };
}

const UNITS: Record<string, number> = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 0.001, n: 0.000001 };

/** A grpc-timeout header ("900000m") in milliseconds. */
function milliseconds(header: string | string[] | undefined): number | undefined {
  const match = /^(\d+)([HMSmun])$/.exec(typeof header === "string" ? header : "");
  return match === null ? undefined : Number(match[1]) * UNITS[match[2]!]!;
}

/** Send `events`, waiting `delayMs` before each; stop when the client goes away. */
export async function* play(events: ModelEvent[], context: HandlerContext, delayMs = 0): AsyncIterable<ModelEvent> {
  for (const event of events) {
    if (delayMs > 0) await sleep(delayMs, undefined, { signal: context.signal }).catch(() => undefined);
    if (context.signal.aborted) return;
    yield event;
  }
}

/**
 * The events of `events` in groups, each of the events that are ready together: the first that
 * comes, and those that follow it before the next turn of the event loop. No event waits for
 * another, so paced events come one to a group.
 */
export async function* grouped(events: AsyncIterable<ModelEvent>): AsyncIterable<ModelEvent[]> {
  const iterator = events[Symbol.asyncIterator]();
  let pending = iterator.next();
  for (;;) {
    const first = await pending;
    if (first.done === true) return;
    const group = [first.value];
    for (;;) {
      pending = iterator.next();
      let ready: IteratorResult<ModelEvent> | undefined;
      try {
        ready = await Promise.race([
          pending,
          new Promise<undefined>((resolve) => setImmediate(() => resolve(undefined))),
        ]);
      } catch (error) {
        yield group; // the events in front of a status are sent before it
        throw error;
      }
      if (ready === undefined || ready.done === true) break;
      group.push(ready.value);
    }
    yield group;
  }
}

/** A message as gRPC, Connect and gRPC-web frame it: the flags byte, the length, the bytes. */
function envelope(message: Uint8Array, flags = 0): Uint8Array {
  const framed = new Uint8Array(5 + message.length);
  framed[0] = flags;
  new DataView(framed.buffer).setUint32(1, message.length);
  framed.set(message, 5);
  return framed;
}

/**
 * Answer a call with `messages` and then `status` (OK when undefined), in the protocol the
 * request's content-type names: gRPC (the status in the HTTP/2 trailers), gRPC-web (in a trailer
 * message) or Connect (in the end-of-stream message).
 */
function respond(
  contentType: string,
  response: http.ServerResponse | http2.Http2ServerResponse,
  { messages, status }: ReturnType<Raw>,
): void {
  const message = "said the test";
  const protocol = contentType.startsWith("application/grpc-web")
    ? "grpc-web"
    : contentType.startsWith("application/connect")
      ? "connect"
      : "grpc";
  const types = {
    grpc: "application/grpc+proto",
    "grpc-web": "application/grpc-web+proto",
    connect: "application/connect+proto",
  };
  response.writeHead(200, { "content-type": types[protocol] });
  const write = (bytes: Uint8Array): unknown => (response as { write(chunk: Uint8Array): boolean }).write(bytes);
  for (const data of messages) write(envelope(data));
  if (protocol === "grpc") {
    (response as http2.Http2ServerResponse).addTrailers(
      status === undefined ? { "grpc-status": "0" } : { "grpc-status": `${status}`, "grpc-message": message },
    );
  } else if (protocol === "grpc-web") {
    const trailer =
      status === undefined
        ? "grpc-status: 0\r\n"
        : `grpc-status: ${status}\r\ngrpc-message: ${encodeURIComponent(message)}\r\n`;
    write(envelope(new TextEncoder().encode(trailer), 0x80));
  } else {
    const end = status === undefined ? {} : { error: { code: codeToString(status), message } };
    write(envelope(new TextEncoder().encode(JSON.stringify(end)), 0x02));
  }
  response.end();
}

/** A header that holds a number ("250"), as a number. */
function optionalNumber(header: string | string[] | undefined): number | undefined {
  return typeof header === "string" && /^\d+$/.test(header) ? Number(header) : undefined;
}

/** Wait until the client goes away (or the deadline passes). */
export function hang(context: HandlerContext): Promise<void> {
  return new Promise((resolve) => context.signal.addEventListener("abort", () => resolve(), { once: true }));
}

/**
 * A throwaway self-signed certificate for 127.0.0.1 and localhost, made with the openssl command;
 * undefined when there is none on this machine.
 */
export async function selfSigned(): Promise<{ cert: string; key: string } | undefined> {
  const directory = await mkdtemp(join(tmpdir(), "pi-proto-tls-"));
  try {
    const [cert, key] = [join(directory, "cert.pem"), join(directory, "key.pem")];
    await promisify(execFile)("openssl", [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-keyout",
      key,
      "-out",
      cert,
      "-days",
      "1",
      "-subj",
      "/CN=pi-proto test",
      "-addext",
      "subjectAltName=DNS:localhost,IP:127.0.0.1",
      "-addext",
      "basicConstraints=critical,CA:TRUE",
    ]); // prettier-ignore
    return { cert: await readFile(cert, "utf8"), key: await readFile(key, "utf8") };
  } catch {
    return undefined;
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}
