/**
 * An in-process gRPC server of pi.ai.v1.ModelService for the client tests: connect-node's handler
 * on a node:http2 server, playing a script instead of a model (through Stream and StreamBatched)
 * and serving a catalog of models. (The corpus's client cases run the misbehaving servers against
 * the reference server.)
 */

import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { type Model, type ModelEvent, ModelService, type StreamRequest } from "../../src/index.js";

/** What the server does for one call: the events to send; throw a ConnectError for a status. */
export type Script = (request: StreamRequest, context: HandlerContext) => AsyncIterable<ModelEvent>;

/**
 * How the server answers StreamBatched: "grouped" plays the script with the events that are ready
 * together in one message, "unimplemented" does not have the method (as an older server), and a
 * function gives the bytes of each message itself (any bytes, malformed or not) and the status
 * that follows them (OK when it gives none).
 */
export type Batches = "grouped" | "unimplemented" | (() => { messages: Uint8Array[]; status?: Code });

const BATCHED_PATH = "/pi.ai.v1.ModelService/StreamBatched";

export interface FakeServer {
  /** host:port to dial. */
  readonly target: string;
  /** The calls received so far (of every method). */
  readonly calls: number;
  /** The path of every request received, in order, e.g. "/pi.ai.v1.ModelService/Stream". */
  readonly paths: readonly string[];
  /** How many events each StreamBatched message carried, when the server grouped them. */
  readonly batchSizes: readonly number[];
  /** The metadata of the last call received. */
  readonly lastHeaders: Headers | undefined;
  /** The HTTP/2 connections opened so far. */
  readonly connections: number;
  /** The deadline each call asked for, in milliseconds (from its grpc-timeout header). */
  readonly deadlines: ReadonlyArray<number | undefined>;
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
): Promise<FakeServer> {
  let calls = 0;
  let connections = 0;
  let lastHeaders: Headers | undefined;
  const batchSizes: number[] = [];
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
  const handler = (request: http2.Http2ServerRequest, response: http2.Http2ServerResponse): void => {
    paths.push(request.url);
    deadlines.push(milliseconds(request.headers["grpc-timeout"]));
    delete request.headers["grpc-timeout"];
    if (typeof batches === "function" && request.url === BATCHED_PATH) {
      calls += 1; // the request itself is not read
      request.resume();
      const { messages, status } = batches();
      response.writeHead(200, { "content-type": "application/grpc+proto" });
      for (const message of messages) response.write(envelope(message));
      const trailers = status === undefined ? { "grpc-status": "0" } : { "grpc-status": `${status}`, "grpc-message": "said the test" };
      response.addTrailers(trailers);
      response.end();
      return;
    }
    adapter(request, response);
  };
  const server = tls === undefined ? http2.createServer(handler) : http2.createSecureServer(tls, handler);
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (session: http2.ServerHttp2Session) => {
    connections += 1;
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const drop = (): void => {
    for (const session of sessions) session.destroy();
  };
  return {
    target: `127.0.0.1:${port}`,
    get calls() {
      return calls;
    },
    paths,
    batchSizes,
    get lastHeaders() {
      return lastHeaders;
    },
    get connections() {
      return connections;
    },
    deadlines,
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
      const ready = await Promise.race([pending, new Promise<undefined>((resolve) => setImmediate(() => resolve(undefined)))]);
      if (ready === undefined || ready.done === true) break;
      group.push(ready.value);
    }
    yield group;
  }
}

/** A gRPC message: the flags byte (uncompressed), the length, the bytes. */
function envelope(message: Uint8Array): Uint8Array {
  const framed = new Uint8Array(5 + message.length);
  new DataView(framed.buffer).setUint32(1, message.length);
  framed.set(message, 5);
  return framed;
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
      "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
      "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=pi-proto test",
      "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-addext", "basicConstraints=critical,CA:TRUE",
    ]); // prettier-ignore
    return { cert: await readFile(cert, "utf8"), key: await readFile(key, "utf8") };
  } catch {
    return undefined;
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}
