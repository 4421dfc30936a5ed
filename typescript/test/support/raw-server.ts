/**
 * A gRPC server that answers every call with frames a test scripts, to show how the client
 * copes with what a correct server never sends.
 */

import http2 from "node:http2";
import type { AddressInfo } from "node:net";

export interface RawServer {
  target: string;
  /** How many client connections the server has accepted. */
  connections(): number;
  close(): Promise<void>;
}

/** A gRPC status: its numeric code and message (printable ASCII, sent as is). */
export interface Status {
  code: number;
  message?: string;
}

/**
 * Serve `messages` (each sent as one gRPC message) followed by `status`, on a free port; with
 * `hold`, the status never comes: each call stays open until the server closes.
 */
export async function startRawServer(
  messages: Uint8Array[],
  status: Status = { code: 0 },
  options: { hold?: boolean } = {},
): Promise<RawServer> {
  const trailers: http2.OutgoingHttpHeaders = { "grpc-status": String(status.code) };
  if (status.message !== undefined) trailers["grpc-message"] = status.message;
  const server = http2.createServer();
  const sessions = new Set<http2.ServerHttp2Session>();
  let accepted = 0;
  server.on("session", (session) => {
    accepted += 1;
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
  });
  server.on("stream", (stream) => {
    stream.respond({ ":status": 200, "content-type": "application/grpc+proto" }, { waitForTrailers: true });
    stream.once("wantTrailers", () => stream.sendTrailers(trailers));
    for (const message of messages) stream.write(frame(message));
    if (!options.hold) stream.end();
    stream.resume(); // the request is not needed
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    target: `127.0.0.1:${port}`,
    connections: () => accepted,
    close: async () => {
      for (const session of sessions) session.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A gRPC length-prefixed message: no compression flag, 4-byte big-endian length, the bytes. */
function frame(message: Uint8Array): Uint8Array {
  const out = new Uint8Array(5 + message.length);
  new DataView(out.buffer).setUint32(1, message.length);
  out.set(message, 5);
  return out;
}
