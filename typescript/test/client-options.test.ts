// The client's options against an in-process fake server: a bearer token, TLS with a certificate
// made for this run, the response metadata, one connection per address, requests refused before
// they are sent, and a server that holds the call open after its terminal event.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { Code, ConnectError, decodeBinaryHeader, encodeBinaryHeader, type HandlerContext } from "@connectrpc/connect";
import {
  createModelTransport,
  eventKind,
  type ModelCallStream,
  type ModelEvent,
  StopReason,
  type StreamRequest,
  streamModel,
  textOf,
} from "pi-proto";
import { type FakeServer, hang, play, selfSigned, startFakeServer } from "./support/fake-server.js";
import { assistantMessage, eventsOf, TEST_TIMEOUT, text, userContext } from "./support/messages.js";

const TOKEN = "s3cret-token";
const DENIED = "missing or invalid bearer token";
const TRAILER = new Uint8Array([0xab, 0xab, 0xab]);

/** Answers "ok", with a header and a binary trailer, to a call that carries the token. */
function guarded(_request: StreamRequest, context: HandlerContext): AsyncIterable<ModelEvent> {
  if (context.requestHeader.get("authorization") !== `Bearer ${TOKEN}`) {
    throw new ConnectError(DENIED, Code.Unauthenticated);
  }
  context.responseHeader.set("x-served-by", "fake");
  context.responseTrailer.set("x-done-bin", encodeBinaryHeader(TRAILER));
  return play(eventsOf(assistantMessage([text("ok")])), context);
}

let certificate: { cert: string; key: string } | undefined; // for 127.0.0.1 and localhost
let plain: FakeServer; // no TLS
let secure: FakeServer | undefined; // TLS, when openssl could make a certificate

before(async () => {
  certificate = await selfSigned();
  plain = await startFakeServer(guarded);
  if (certificate !== undefined) secure = await startFakeServer(guarded, certificate);
});

after(async () => {
  await Promise.all([plain?.close(), secure?.close()]);
});

async function drain(events: ModelCallStream) {
  const kinds: string[] = [];
  for await (const event of events) kinds.push(eventKind(event));
  return { kinds, message: await events.result() };
}

test("a server that wants a bearer token gets it from `token`", { timeout: TEST_TIMEOUT }, async () => {
  for (const token of [undefined, "wrong", `${TOKEN}x`, ""]) {
    const events = streamModel(plain.target, userContext("hi"), { token });
    const { kinds, message } = await drain(events);
    assert.deepEqual(kinds, ["error"], `token ${token}`);
    assert.equal(message.stopReason, StopReason.ERROR);
    assert.equal(message.errorMessage, DENIED);
    assert.deepEqual(events.failure, { kind: "status", statusCode: "UNAUTHENTICATED", detail: DENIED });
  }
  const accepted = await streamModel(plain.target, userContext("hi"), { token: TOKEN }).result();
  assert.equal(accepted.stopReason, StopReason.STOP);
  // `token` takes the place of an authorization header given with the others.
  const headers = { authorization: "Bearer wrong", "x-other": "kept" };
  const both = await streamModel(plain.target, userContext("hi"), { token: TOKEN, headers }).result();
  assert.equal(both.stopReason, StopReason.STOP);
  const header = { authorization: `Bearer ${TOKEN}` };
  const plainHeader = await streamModel(plain.target, userContext("hi"), { headers: header }).result();
  assert.equal(plainHeader.stopReason, StopReason.STOP);
});

test("TLS: `ca` trusts the server's certificate", { timeout: TEST_TIMEOUT }, async (t) => {
  if (secure === undefined || certificate === undefined) return t.skip("no openssl to make a certificate");
  const trusted = streamModel(secure.target, userContext("hi"), { ca: certificate.cert, token: TOKEN });
  const { kinds, message } = await drain(trusted);
  assert.equal(kinds.at(-1), "done");
  assert.equal(textOf(message), "ok");

  // The same as bytes, through a transport of one's own, given an https:// base URL.
  const transport = createModelTransport(`https://${secure.target}`, { ca: Buffer.from(certificate.cert) });
  const own = await streamModel(transport, userContext("hi"), { token: TOKEN }).result();
  assert.equal(own.stopReason, StopReason.STOP);

  const denied = await streamModel(secure.target, userContext("hi"), { ca: certificate.cert }).result();
  assert.equal(denied.errorMessage, DENIED);
});

test("TLS fails as an ERROR event without the certificate, or in plaintext", { timeout: TEST_TIMEOUT }, async (t) => {
  if (secure === undefined || certificate === undefined) return t.skip("no openssl to make a certificate");
  const options = { token: TOKEN, timeoutMs: 5000 };
  const untrusted = await streamModel(`https://${secure.target}`, userContext("hi"), options).result();
  assert.equal(untrusted.stopReason, StopReason.ERROR);
  assert.match(untrusted.errorMessage ?? "", /certificate/);
  const plaintext = await streamModel(secure.target, userContext("hi"), options).result();
  assert.equal(plaintext.stopReason, StopReason.ERROR);
  assert.ok(plaintext.errorMessage);
  // A plaintext server does not speak TLS either.
  const mismatch = await streamModel(plain.target, userContext("hi"), {
    ca: certificate.cert,
    timeoutMs: 5000,
  }).result();
  assert.equal(mismatch.stopReason, StopReason.ERROR);
  assert.throws(() => createModelTransport(`http://${plain.target}`, { ca: certificate!.cert }), {
    name: "TypeError",
    message: `a CA certificate needs TLS, not http://${plain.target}`,
  });
});

test("the response headers and trailers are on the stream", { timeout: TEST_TIMEOUT }, async () => {
  const events = streamModel(plain.target, userContext("hi"), { token: TOKEN });
  const first = await events.next();
  assert.equal(eventKind(first.value!), "start");
  assert.equal(events.headers.get("x-served-by"), "fake"); // with the first event
  const { kinds } = await drain(events);
  assert.equal(kinds.at(-1), "done");
  // In place once the terminal event has arrived, nothing to wait for.
  assert.deepEqual(decodeBinaryHeader(events.trailers.get("x-done-bin") ?? ""), TRAILER);
});

test("calls to the same host:port share one connection", { timeout: TEST_TIMEOUT }, async () => {
  const server = await startFakeServer(guarded);
  try {
    for (let call = 0; call < 3; call += 1) {
      assert.equal(textOf(await streamModel(server.target, userContext("hi"), { token: TOKEN }).result()), "ok");
    }
    assert.equal(server.connections, 1);
  } finally {
    await server.close();
  }
});

test("a request that breaks the schema's rules is refused before anything is sent", {
  timeout: TEST_TIMEOUT,
}, async () => {
  const server = await startFakeServer(guarded);
  try {
    const events = streamModel(server.target, { messages: [{}] }, { generation: { temperature: 3.5 } });
    const { kinds, message } = await drain(events);
    assert.deepEqual(kinds, ["error"]);
    assert.equal(message.stopReason, StopReason.ERROR);
    assert.match(message.errorMessage ?? "", /^invalid request: .*context\.messages\[0\]\.role.*options\.temperature/);
    assert.equal(events.failure?.kind === "status" && events.failure.statusCode, "INVALID_ARGUMENT");
    // A JSON text rule too: the tool's parameters must be a JSON object.
    const tools = [{ name: "read", parametersJson: "[]" }];
    const tooled = await streamModel(server.target, { messages: userContext("hi").messages, tools }).result();
    assert.match(tooled.errorMessage ?? "", /tools\[0\]\.parameters_json/);
    assert.equal(server.calls, 0);
    assert.equal(server.connections, 0);
  } finally {
    await server.close();
  }
});

test("a server that holds the call open after the terminal event is cut off", { timeout: TEST_TIMEOUT }, async () => {
  // The terminal event waits for the trailers, but not for a call that never ends.
  const server = await startFakeServer(async function* (_request, context) {
    yield* play(eventsOf(assistantMessage([text("ok")])), context);
    await hang(context);
  });
  try {
    const events = streamModel(server.target, userContext("hi"));
    const { kinds, message } = await drain(events);
    assert.equal(kinds.at(-1), "done");
    assert.equal(message.stopReason, StopReason.STOP);
    assert.equal(textOf(message), "ok");
    assert.equal(events.failure, undefined);
  } finally {
    await server.close();
  }
});
