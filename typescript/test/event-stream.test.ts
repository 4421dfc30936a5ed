// EventStream and AssistantMessageEventStream: terminal events, results, and the seed's error test.

import assert from "node:assert/strict";
import { test } from "node:test";
import { setImmediate as nextTurn } from "node:timers/promises";
import {
  AssistantMessageEventStream,
  EventStream,
  eventKind,
  type ModelEvent,
  StopReason,
  type StreamFailure,
  terminalMessage,
  textOf,
} from "../src/index.js";
import { assistantMessage, event, TEST_TIMEOUT } from "./support/messages.js";

async function collect<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const seen: T[] = [];
  for await (const item of stream) seen.push(item);
  return seen;
}

function start(): ModelEvent {
  return event({ case: "start", value: { header: assistantMessage([]) } });
}

test("an error event ends the stream by itself and result() is the same message", {
  timeout: TEST_TIMEOUT,
}, async () => {
  // The seed's second focused test: no end() call; the error event alone ends iteration.
  const stream = new AssistantMessageEventStream();
  const failed = assistantMessage([], { stopReason: StopReason.ERROR, errorMessage: "socket reset" });
  const error = event({ case: "error", value: { reason: StopReason.ERROR, message: failed } });
  stream.push(error);

  const seen = await collect(stream);

  assert.equal(seen.length, 1);
  assert.equal(seen[0], error);
  const result = await stream.result();
  assert.equal(result, failed);
  assert.equal(result.errorMessage, "socket reset");
});

test("done resolves the result and later events are ignored", { timeout: TEST_TIMEOUT }, async () => {
  const stream = new AssistantMessageEventStream();
  const final = assistantMessage([]);
  stream.push(start());
  stream.push(event({ case: "done", value: { reason: StopReason.STOP, message: final } }));
  stream.push(event({ case: "textDelta", value: { delta: "late" } }));
  stream.push(event({ case: "error", value: { reason: StopReason.ERROR, message: assistantMessage([]) } }));

  const seen = await collect(stream);

  assert.deepEqual(seen.map(eventKind), ["start", "done"]);
  assert.equal(await stream.result(), final);
  assert.ok(stream.done);
});

test("only terminal events produce a result", { timeout: TEST_TIMEOUT }, () => {
  assert.throws(
    () => terminalMessage(event({ case: "textDelta", value: { delta: "x" } })),
    /only a done or error event carrying a message produces the final message/,
  );
  const final = assistantMessage([]);
  assert.equal(terminalMessage(event({ case: "done", value: { reason: StopReason.STOP, message: final } })), final);
});

test("a waiting consumer receives events pushed later", { timeout: TEST_TIMEOUT }, async () => {
  const stream = new EventStream<number, string>(
    (n) => n < 0,
    (n) => `ended at ${n}`,
  );
  const consumer = collect(stream);
  await nextTurn();
  for (const n of [1, 2, -3, 4]) {
    stream.push(n);
    await nextTurn();
  }
  assert.deepEqual(await consumer, [1, 2, -3]);
  assert.equal(await stream.result(), "ended at -3");
});

test("end() releases every waiting consumer and can set the result", { timeout: TEST_TIMEOUT }, async () => {
  const stream = new EventStream<number, string>(() => false, String);
  const consumers = [collect(stream), collect(stream)];
  await nextTurn();
  stream.push(7);
  stream.end("over");
  const [first, second] = await Promise.all(consumers);
  assert.deepEqual([...first!, ...second!], [7]);
  assert.equal(await stream.result(), "over");
  stream.push(8);
  assert.deepEqual(await collect(stream), []);
});

test("fail() ends the stream with an error event that keeps the partial", { timeout: TEST_TIMEOUT }, async () => {
  const stream = new AssistantMessageEventStream();
  stream.push(start());
  stream.push(event({ case: "textStart", value: { contentIndex: 0 } }));
  stream.push(event({ case: "textDelta", value: { contentIndex: 0, delta: "kept" } }));
  stream.fail(StopReason.ERROR, "socket reset");
  stream.fail(StopReason.ABORTED, "ignored: the stream has ended");

  const seen = await collect(stream);
  const message = await stream.result();

  assert.deepEqual(seen.map(eventKind), ["start", "text_start", "text_delta", "error"]);
  assert.equal(message.stopReason, StopReason.ERROR);
  assert.equal(message.errorMessage, "socket reset");
  assert.equal(textOf(message), "kept");
  assert.equal(seen.at(-1)!.partial, message);
});

test("cancel() without a producer ends the stream with ABORTED", { timeout: TEST_TIMEOUT }, async () => {
  const stream = new AssistantMessageEventStream();
  stream.cancel();
  const message = await stream.result();
  assert.equal(message.stopReason, StopReason.ABORTED);
  assert.equal(message.errorMessage, "cancelled");
  assert.equal(stream.failure, undefined); // a cancel is not a failure of the stream
});

test("cancel() from another task reaches a consumer waiting for the next event", {
  timeout: TEST_TIMEOUT,
}, async () => {
  const stream = new AssistantMessageEventStream();
  stream.drive(async (signal) => {
    stream.push(start());
    await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true })); // a model that hangs
  });
  const waiting = stream.result(); // a task waiting for the final message
  const kinds: string[] = [];
  const consumer = (async () => {
    for await (const item of stream) kinds.push(eventKind(item)); // blocks after "start"
  })();
  // Another task: the producer and the consumer ran in this one's microtasks, so by then the
  // consumer has "start" and waits for the next event.
  setImmediate(() => stream.cancel());
  await consumer; // nothing throws, and iteration ends
  assert.deepEqual(kinds, ["start", "error"]);
  const message = await waiting;
  assert.equal(message.stopReason, StopReason.ABORTED);
  assert.equal(stream.failure, undefined);
});

test("cancel() aborts a driven producer; what it pushes later is not delivered", {
  timeout: TEST_TIMEOUT,
}, async () => {
  const stream = new AssistantMessageEventStream();
  let release!: () => void;
  const aborted = new Promise<void>((resolve) => (release = resolve));
  stream.drive(async (signal) => {
    stream.push(start());
    await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
    stream.push(event({ case: "textStart", value: { contentIndex: 0 } }));
    release();
  });

  const first = await stream.next();
  assert.equal(first.done, false);
  assert.equal(eventKind(first.value!), "start");
  stream.cancel("stop now");
  await aborted;

  const rest = await collect(stream);
  assert.deepEqual(rest.map(eventKind), ["error"]);
  const message = await stream.result();
  assert.equal(message.stopReason, StopReason.ABORTED);
  assert.equal(message.errorMessage, "stop now");
});

test("a driven producer that stops early or throws becomes an ERROR event", { timeout: TEST_TIMEOUT }, async () => {
  const quiet = new AssistantMessageEventStream();
  quiet.drive(async () => quiet.push(start()));
  assert.deepEqual((await collect(quiet)).map(eventKind), ["start", "error"]);
  assert.equal((await quiet.result()).errorMessage, "stream ended without a terminal event");

  const broken = new AssistantMessageEventStream();
  broken.drive(async () => {
    throw new TypeError("boom");
  });
  assert.deepEqual((await collect(broken)).map(eventKind), ["error"]);
  assert.equal((await broken.result()).errorMessage, "TypeError: boom");

  const invalid = new AssistantMessageEventStream();
  invalid.drive(async () => invalid.push(event({ case: "textDelta", value: { contentIndex: 2, delta: "x" } })));
  assert.equal((await invalid.result()).stopReason, StopReason.ERROR);
  assert.deepEqual(invalid.failure && pick(invalid.failure), { kind: "rule", eventIndex: 0, ruleId: "start-first" });

  assert.deepEqual(quiet.failure && pick(quiet.failure), { kind: "rule", eventIndex: 1, ruleId: "terminal-missing" });
  assert.equal(broken.failure, undefined); // neither a status nor a stream rule
});

function pick(failure: StreamFailure): Record<string, unknown> {
  return failure.kind === "rule"
    ? { kind: failure.kind, eventIndex: failure.eventIndex, ruleId: failure.ruleId }
    : { kind: failure.kind, statusCode: failure.statusCode };
}

test("consumers take turns: each event goes to the consumer that has waited longest", {
  timeout: TEST_TIMEOUT,
}, async () => {
  const stream = new EventStream<number, string>((n) => n < 0, String);
  const seen: Record<string, number[]> = { a: [], b: [] };
  const consume = async (name: string): Promise<void> => {
    for await (const n of stream) {
      seen[name]!.push(n);
      await nextTurn(); // each consumer does some work per event
    }
  };
  const consumers = [consume("a"), consume("b")]; // a waits first, then b
  await nextTurn();
  for (let n = 0; n < 6; n += 1) {
    stream.push(n);
    await nextTurn();
    await nextTurn();
  }
  stream.push(-1);
  await Promise.all(consumers);
  assert.deepEqual(seen.a, [0, 2, 4, -1]);
  assert.deepEqual(seen.b, [1, 3, 5]);

  // An event handed to a waiting consumer is its own: a consumer that asks later waits its turn.
  const fair = new EventStream<number, string>((n) => n < 0, String);
  const first = fair.next();
  fair.push(10);
  const later = fair.next();
  fair.push(11);
  assert.deepEqual(await first, { done: false, value: 10 });
  assert.deepEqual(await later, { done: false, value: 11 });
});

test("send() waits for room below highWater; push() does not", { timeout: TEST_TIMEOUT }, async () => {
  const stream = new EventStream<number, string>((n) => n < 0, String, { highWater: 2 });
  await stream.send(1);
  await stream.send(2);
  let sent = false;
  const third = stream.send(3).then(() => (sent = true));
  await nextTurn();
  assert.equal(sent, false);
  assert.equal(stream.queued, 2);
  stream.push(4); // push() is the producer's own choice to skip the bound
  assert.equal(stream.queued, 3);

  assert.deepEqual(await stream.next(), { done: false, value: 1 });
  assert.deepEqual(await stream.next(), { done: false, value: 2 });
  await third;
  assert.equal(sent, true);
  stream.push(-1);
  assert.deepEqual(await collect(stream), [4, 3, -1]);
});

test("offer() pushes only once a consumer asks with nothing queued", { timeout: TEST_TIMEOUT }, async () => {
  const stream = new EventStream<number, string>((n) => n < 0, String);
  const pushed: number[] = [];
  const producer = (async () => {
    for (const n of [1, 2, -3]) {
      await stream.offer(n);
      pushed.push(n);
    }
  })();
  await nextTurn();
  assert.deepEqual(pushed, []); // nobody has asked
  assert.deepEqual(await stream.next(), { done: false, value: 1 });
  await nextTurn();
  assert.deepEqual(pushed, [1]); // 2 waits until the consumer asks again
  assert.equal(stream.queued, 0);
  assert.deepEqual(await stream.next(), { done: false, value: 2 });
  assert.deepEqual(await stream.next(), { done: false, value: -3 });
  await producer;
  assert.equal(await stream.result(), "-3");
});

test("once result() is called, send() and offer() no longer wait", { timeout: TEST_TIMEOUT }, async () => {
  const stream = new EventStream<number, string>((n) => n < 0, String, { highWater: 2 });
  const producer = (async () => {
    for (let n = 1; n <= 10; n += 1) await (n % 2 === 0 ? stream.send(n) : stream.offer(n));
    await stream.offer(-11);
  })();
  await nextTurn();
  assert.equal(stream.queued, 0); // offer(1) waits for a consumer
  assert.equal(await stream.result(), "-11"); // nobody reads, and the result still comes
  await producer;
  assert.deepEqual(await collect(stream), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, -11]);
});

test("ending the stream releases a producer waiting in send()", { timeout: TEST_TIMEOUT }, async () => {
  const stream = new AssistantMessageEventStream();
  stream.push(start());
  stream.push(event({ case: "textStart", value: { contentIndex: 0 } }));
  while (stream.queued < stream.highWater) {
    stream.push(event({ case: "textDelta", value: { contentIndex: 0, delta: "x" } }));
  }
  const blocked = stream.send(event({ case: "textDelta", value: { contentIndex: 0, delta: "late" } }));
  stream.cancel("deadline passed", StopReason.ERROR);
  await blocked;
  const seen = await collect(stream);
  assert.equal(seen.length, stream.highWater + 1);
  const message = await stream.result();
  assert.equal(message.stopReason, StopReason.ERROR);
  assert.equal(message.errorMessage, "deadline passed");
  assert.equal(textOf(message), "x".repeat(stream.highWater - 2));
});

test("a long stream read one event behind stays in order", { timeout: TEST_TIMEOUT }, async () => {
  const stream = new EventStream<number, number>(
    (n) => n < 0,
    (n) => n,
  );
  const count = 5000;
  stream.push(0);
  const seen: number[] = [];
  for (let n = 1; n <= count; n += 1) {
    stream.push(n === count ? -n : n); // the queue never empties until the end
    seen.push((await stream.next()).value!);
  }
  seen.push(...(await collect(stream)));
  assert.deepEqual(seen, [...Array.from({ length: count }, (_, n) => n), -count]);
});
