/**
 * `@connectrpc/connect-node` as client.ts names it, for the browser: its transports need Node's
 * http modules, so each refuses. The page passes a transport of `@connectrpc/connect-web` to
 * streamModel and listModels instead of a target, and client.ts then never calls these.
 */

import type { Transport } from "@connectrpc/connect";

function refuse(): never {
  throw new Error("a Node transport cannot be made in a browser: pass a transport of @connectrpc/connect-web");
}

export function createConnectTransport(_options: unknown): Transport {
  return refuse();
}

export function createGrpcTransport(_options: unknown): Transport {
  return refuse();
}

export function createGrpcWebTransport(_options: unknown): Transport {
  return refuse();
}

export class Http2SessionManager {
  constructor(..._args: unknown[]) {
    refuse();
  }
}
