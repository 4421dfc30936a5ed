// Numbered, kept streams through the client: a call cut off (UNAVAILABLE, or an end without the
// terminal event) resumes by itself after the last event applied, so the consumer sees one
// stream; a caller's cancel tells the server with Cancel. Over gRPC, Connect and gRPC-web, against
// in-process fake servers. (The corpus's resume cases run the same against the reference server.)

import assert from "node:assert/strict";
import { test } from "node:test";
import { Code, ConnectError, type Transport } from "@connectrpc/connect";
import {
  type AssistantMessage,
  type AssistantMessageEventStream,
  contentSha256,
  createModelTransport,
  eventKind,
  MAX_RESUMES,
  type ModelEvent,
  type Protocol,
  RESUME_BACKOFF_MS,
  StopReason,
  type StreamFailure,
  type StreamModelOptions,
  streamModel,
  textOf,
} from "pi-proto";
import {
  type FakeServer,
  type FakeServerOptions,
  hang,
  play,
  type ResumeScript,
  type Script,
  startFakeServer,
} from "./support/fake-server.js";
import { assistantMessage, eventsOf, TEST_TIMEOUT, text, toolCall, until, userContext } from "./support/messages.js";

const STREAM_ID = "stream-7f3a";
const RESUME = "/pi.ai.v1.ModelService/Resume";
const CANCEL = "/pi.ai.v1.ModelService/Cancel";
const PROTOCOLS: readonly Protocol[] = ["grpc", "connect", "grpc-web"];

const MESSAGE = assistantMessage([text("我先读取项目说明。"), toolCall("call_1", "read", { path: "README.md" })], {
  stopReason: StopReason.TOOL_USE,
  timestamp: 1010n,
});

/** The events of `message` as a server that keeps its streams sends them: numbered from 1, with the stream id and the digest. */
function kept(message: AssistantMessage, streamId = STREAM_ID, size = 4): ModelEvent[] {
  const events = eventsOf(message, size);
  events.forEach((event, at) => {
    event.seq = BigInt(at + 1);
    const body = event.event;
    if (body.case === "start") body.value.streamId = streamId;
    if (body.case === "done" || body.case === "error") body.value.contentSha256 = contentSha256(message.content);
  });
  return events;
}

const EVENTS = kept(MESSAGE);
const KINDS = EVENTS.map(eventKind);

/** Stream: the first `count` events, then the connection lost (UNAVAILABLE), or an end with status OK. */
function cutAfter(count: number, events = EVENTS, status: "unavailable" | "ok" = "unavailable"): Script {
  return async function* (_request, context) {
    yield* play(events.slice(0, count), context);
    if (status === "unavailable") throw new ConnectError("connection lost", Code.Unavailable);
  };
}

/** Resume: the events after `afterSeq`, and `repeats` events before them again, as a server may send. */
function resumeFrom(events = EVENTS, repeats = 0): ResumeScript {
  return (request, context) =>
    play(
      events.filter((event) => event.seq > request.afterSeq - BigInt(repeats)),
      context,
    );
}

/** A server for the protocol: HTTP/2 for gRPC, HTTP/1.1 (the client's default) for Connect and gRPC-web. */
function serve(protocol: Protocol, script: Script, options: FakeServerOptions = {}): Promise<FakeServer> {
  const httpVersion = protocol === "grpc" ? "2" : "1.1";
  return startFakeServer(script, undefined, [], "grouped", { ...options, httpVersion });
}

function call(server: FakeServer, protocol: Protocol, options: StreamModelOptions = {}): AssistantMessageEventStream {
  return streamModel(server.target, userContext("hi"), { protocol, ...options });
}

async function drain(events: AssistantMessageEventStream): Promise<[ModelEvent[], AssistantMessage]> {
  const seen: ModelEvent[] = [];
  for await (const event of events) seen.push(event);
  return [seen, await events.result()];
}

function statusOf(failure: StreamFailure | undefined): string | undefined {
  return failure?.kind === "status" ? failure.statusCode : undefined;
}

/**
 * A transport to `server` that notes the method of every unary call made through it: a Cancel,
 * sent when a kept stream is cancelled, is one. The stream starts it at once, so a stream that
 * sends none can be told right after its cancel, without waiting to see whether one comes.
 */
function watched(server: FakeServer): { transport: Transport; unary: string[] } {
  const transport = createModelTransport(server.target);
  const unary: string[] = [];
  return {
    unary,
    transport: {
      unary(method, signal, timeoutMs, header, input, contextValues) {
        unary.push(method.name);
        return transport.unary(method, signal, timeoutMs, header, input, contextValues);
      },
      stream(method, signal, timeoutMs, header, input, contextValues) {
        return transport.stream(method, signal, timeoutMs, header, input, contextValues);
      },
    },
  };
}

for (const protocol of PROTOCOLS) {
  test(`${protocol}: a call cut off with UNAVAILABLE resumes after the last event applied, and the consumer sees every event once`, {
    timeout: TEST_TIMEOUT,
  }, async () => {
    // The resumed server sends the two events before the cut again: they are dropped.
    const server = await serve(protocol, cutAfter(4), { resume: resumeFrom(EVENTS, 2) });
    try {
      for (const batched of [true, false]) {
        const events = call(server, protocol, { batched, timeoutMs: 30_000 });
        const [seen, message] = await drain(events);
        assert.deepEqual(seen.map(eventKind), KINDS);
        assert.deepEqual(
          seen.map((event) => event.seq),
          EVENTS.map((event) => event.seq),
        );
        assert.equal(events.failure, undefined);
        assert.equal(message.stopReason, StopReason.TOOL_USE);
        assert.equal(textOf(message), "我先读取项目说明。");
      }
      assert.equal(server.resumes.length, 2);
      for (const resumed of server.resumes) {
        assert.deepEqual([resumed.streamId, resumed.afterSeq, resumed.coalesceDeltas], [STREAM_ID, 4n, false]);
      }
      // The Resume goes on within the first call's deadline.
      const first = server.deadlines[0]!;
      const resumedAt = server.paths.indexOf(RESUME);
      assert.ok(resumedAt > 0);
      assert.ok(server.deadlines[resumedAt]! <= first, `${server.deadlines[resumedAt]} within ${first}`);
    } finally {
      await server.close();
    }
  });

  test(`${protocol}: a caller's cancel of a kept stream sends Cancel with its stream id`, {
    timeout: TEST_TIMEOUT,
  }, async () => {
    const server = await serve(protocol, async function* (_request, context) {
      yield* play(EVENTS.slice(0, 3), context);
      await hang(context);
    });
    try {
      const events = call(server, protocol, { token: "s3cret" });
      let count = 0;
      for await (const event of events) {
        count += 1;
        if (count === 2) events.cancel();
        if (eventKind(event) === "error") assert.equal(event.partial?.stopReason, StopReason.ABORTED);
      }
      assert.equal(count, 3);
      await until(() => server.cancels.length > 0);
      assert.deepEqual(
        server.cancels.map((cancel) => cancel.streamId),
        [STREAM_ID],
      );
      assert.equal(server.paths.at(-1), CANCEL);
      assert.equal(server.lastHeaders?.get("authorization"), "Bearer s3cret"); // the call's own metadata
    } finally {
      await server.close();
    }
  });
}

test("a call that ends OK without its terminal event resumes, asking to coalesce as the call did", {
  timeout: TEST_TIMEOUT,
}, async () => {
  const hello = assistantMessage([text("Hello, world")]);
  const events = kept(hello, STREAM_ID, 3); // start, text_start, "Hel", "lo,", " wo", "rld", text_end, done
  // A resumed server that merges the waiting deltas 5 and 6 into one, numbered 6.
  const merged = structuredClone(events[4]!);
  merged.seq = 6n;
  if (merged.event.case === "textDelta") merged.event.value.delta = " world";
  const rest = [merged, ...events.slice(6)];
  const server = await startFakeServer(cutAfter(4, events, "ok"), undefined, [], "grouped", {
    resume: (_request, context) => play(rest, context),
  });
  try {
    const stream = streamModel(server.target, userContext("hi"), { coalesceDeltas: true });
    const [seen, message] = await drain(stream);
    assert.deepEqual(
      seen.map((event) => event.seq),
      [1n, 2n, 3n, 4n, 6n, 7n, 8n],
    );
    assert.equal(stream.failure, undefined);
    assert.equal(textOf(message), "Hello, world");
    assert.deepEqual(
      server.resumes.map((resumed) => [resumed.afterSeq, resumed.coalesceDeltas]),
      [[4n, true]],
    );
  } finally {
    await server.close();
  }
});

test("a Resume refused with NOT_FOUND ends the stream with that status, keeping what arrived", {
  timeout: TEST_TIMEOUT,
}, async () => {
  const server = await startFakeServer(cutAfter(3)); // a server that keeps no streams: Resume is NOT_FOUND
  try {
    const events = streamModel(server.target, userContext("hi"));
    const [seen, message] = await drain(events);
    assert.deepEqual(seen.map(eventKind), ["start", "text_start", "text_delta", "error"]);
    assert.equal(statusOf(events.failure), "NOT_FOUND");
    assert.equal(message.stopReason, StopReason.ERROR);
    assert.equal(textOf(message), "我先读取");
    assert.equal(server.resumes.length, 1);
  } finally {
    await server.close();
  }
});

test("resuming gives up after MAX_RESUMES attempts in a row, each waiting twice as long", {
  timeout: TEST_TIMEOUT,
}, async () => {
  const server = await startFakeServer(cutAfter(3), undefined, [], "grouped", {
    resume: () => {
      throw new ConnectError("connection lost", Code.Unavailable);
    },
  });
  try {
    const began = performance.now();
    const events = streamModel(server.target, userContext("hi"));
    const [seen] = await drain(events);
    const elapsed = performance.now() - began;
    assert.deepEqual(seen.map(eventKind), ["start", "text_start", "text_delta", "error"]);
    assert.equal(statusOf(events.failure), "UNAVAILABLE");
    assert.equal(server.resumes.length, MAX_RESUMES);
    assert.ok(server.resumes.every((resumed) => resumed.afterSeq === 3n));
    // 50 + 100 + 200 + 400 + 800 ms at least: a lower bound, which load only makes longer. Node's
    // timers count on the event loop's clock, in whole milliseconds that lag the one read here:
    // a millisecond per wait is allowed for that.
    const waited = RESUME_BACKOFF_MS * (2 ** MAX_RESUMES - 1) - MAX_RESUMES;
    assert.ok(elapsed >= waited, `${elapsed} ms, at least ${waited}`);
  } finally {
    await server.close();
  }
});

test("the attempts count again from zero once a resumed call applies an event", { timeout: TEST_TIMEOUT }, async () => {
  // Every call, the first and each Resume, brings one event more and is then cut off.
  const server = await startFakeServer(cutAfter(1), undefined, [], "grouped", {
    resume: async function* (request, context) {
      yield* play(
        EVENTS.filter((event) => event.seq === request.afterSeq + 1n),
        context,
      );
      throw new ConnectError("connection lost", Code.Unavailable);
    },
  });
  try {
    const events = streamModel(server.target, userContext("hi"));
    const [seen, message] = await drain(events);
    assert.deepEqual(seen.map(eventKind), KINDS);
    assert.equal(events.failure, undefined);
    assert.equal(message.stopReason, StopReason.TOOL_USE);
    assert.ok(server.resumes.length > MAX_RESUMES, `${server.resumes.length} resumes`);
  } finally {
    await server.close();
  }
});

test("the call's deadline bounds the resumes", { timeout: TEST_TIMEOUT }, async () => {
  const server = await startFakeServer(cutAfter(3), undefined, [], "grouped", {
    resume: () => {
      throw new ConnectError("connection lost", Code.Unavailable);
    },
  });
  try {
    // 50 + 100 + 200 + 400 ms fit in a second; the fifth wait, 800 ms, would not.
    const events = streamModel(server.target, userContext("hi"), { timeoutMs: 1000 });
    const [, message] = await drain(events);
    assert.equal(message.stopReason, StopReason.ERROR);
    assert.ok(server.resumes.length < MAX_RESUMES, `${server.resumes.length} resumes`);
    assert.ok(["UNAVAILABLE", "DEADLINE_EXCEEDED"].includes(statusOf(events.failure) ?? ""));
  } finally {
    await server.close();
  }
});

test("a stream without a stream id is neither resumed nor cancelled on the server", {
  timeout: TEST_TIMEOUT,
}, async () => {
  const unkept = kept(MESSAGE, "");
  const cut = await startFakeServer(cutAfter(3, unkept), undefined, [], "grouped", { resume: resumeFrom(unkept) });
  const hanging = await startFakeServer(async function* (_request, context) {
    yield* play(unkept.slice(0, 3), context);
    await hang(context);
  });
  try {
    const events = streamModel(cut.target, userContext("hi"));
    const [seen] = await drain(events);
    assert.deepEqual(seen.map(eventKind), ["start", "text_start", "text_delta", "error"]);
    assert.equal(statusOf(events.failure), "UNAVAILABLE");
    assert.equal(cut.resumes.length, 0);

    const watching = watched(hanging);
    const cancelled = streamModel(watching.transport, userContext("hi"));
    await cancelled.next();
    cancelled.cancel();
    assert.equal((await cancelled.result()).stopReason, StopReason.ABORTED);
    assert.deepEqual(watching.unary, []); // no Cancel was started
    assert.equal(hanging.cancels.length, 0);
  } finally {
    await Promise.all([cut.close(), hanging.close()]);
  }
});

test("aborting the caller's signal sends Cancel; a stream that has ended sends none", {
  timeout: TEST_TIMEOUT,
}, async () => {
  const hanging = await startFakeServer(async function* (_request, context) {
    yield* play(EVENTS.slice(0, 3), context);
    await hang(context);
  });
  const whole = await startFakeServer((_request, context) => play(EVENTS, context));
  try {
    const controller = new AbortController();
    const kept = watched(hanging);
    const events = streamModel(kept.transport, userContext("hi"), { signal: controller.signal });
    assert.equal(eventKind((await events.next()).value!), "start");
    controller.abort();
    assert.equal((await events.result()).stopReason, StopReason.ABORTED);
    assert.deepEqual(kept.unary, ["Cancel"]); // started with the cancel
    await until(() => hanging.cancels.length > 0);
    assert.deepEqual(
      hanging.cancels.map((cancel) => cancel.streamId),
      [STREAM_ID],
    );

    const watching = watched(whole);
    const finished = streamModel(watching.transport, userContext("hi"));
    await drain(finished);
    finished.cancel();
    assert.deepEqual(watching.unary, []); // no Cancel was started
    assert.equal(whole.cancels.length, 0);
  } finally {
    await Promise.all([hanging.close(), whole.close()]);
  }
});
