/**
 * `node:http` and `node:https` as the package's client.ts names them: only the Agent of its
 * HTTP/1.1 transports, which the page never makes (it hands streamModel a transport of its own).
 */

/** An agent that is never used: a transport of client.ts's own cannot be made in a browser. */
export class Agent {
  constructor(readonly options?: unknown) {}
}

export default { Agent };
