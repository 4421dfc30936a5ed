// The client's options against Python's `pi-proto serve`: a bearer token, TLS with a certificate
// made for this run, the response metadata, and requests refused before they are sent.

import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { toBinary } from "@bufbuild/protobuf";
import { decodeBinaryHeader, encodeBinaryHeader } from "@connectrpc/connect";
import {
  type ModelCallStream,
  ModelEventSchema,
  StopReason,
  createModelTransport,
  eventKind,
  streamModel,
  textOf,
} from "pi-proto";
import { TEST_TIMEOUT, assistantMessage, eventsOf, text, userContext } from "./support/messages.js";
import { runPython } from "./support/python.js";
import { startRawServer } from "./support/raw-server.js";
import { type Server, startServer } from "./support/server.js";

const TOKEN = "s3cret-token";
const ECHO_INITIAL = "x-grpc-test-echo-initial";
const ECHO_TRAILING = "x-grpc-test-echo-trailing-bin";
const DENIED = "missing or invalid bearer token";

let directory: string;
let certificate: string; // PEM of a self-signed certificate for 127.0.0.1 and localhost
let plain: Server; // no token, no TLS
let guarded: Server; // --token-file
let secure: Server; // --tls-cert, --tls-key and --token-file

before(async () => {
  directory = await mkdtemp(join(tmpdir(), "pi-proto-options-"));
  const [tokenFile, certFile, keyFile] = ["token", "cert.pem", "key.pem"].map((name) => join(directory, name)) as [
    string,
    string,
    string,
  ];
  await writeFile(tokenFile, `${TOKEN}\n`);
  const make = [
    "import sys",
    "from tests.certs import self_signed",
    "made = self_signed()",
    "open(sys.argv[1], 'wb').write(made.certificate_pem)",
    "open(sys.argv[2], 'wb').write(made.private_key_pem)",
  ].join("\n");
  await runPython(make, "", certFile, keyFile);
  certificate = await readFile(certFile, "utf8");
  [plain, guarded, secure] = await Promise.all([
    startServer(),
    startServer("--token-file", tokenFile),
    startServer("--tls-cert", certFile, "--tls-key", keyFile, "--token-file", tokenFile),
  ]);
}, { timeout: 60_000 });

after(async () => {
  await Promise.all([plain?.stop(), guarded?.stop(), secure?.stop()]);
  if (directory !== undefined) await rm(directory, { recursive: true, force: true });
}, { timeout: TEST_TIMEOUT });

async function drain(events: ModelCallStream) {
  const kinds: string[] = [];
  for await (const event of events) kinds.push(eventKind(event));
  return { kinds, message: await events.result() };
}

test("a server that wants a bearer token gets it from `token`", { timeout: TEST_TIMEOUT }, async () => {
  for (const token of [undefined, "wrong", `${TOKEN}x`, ""]) {
    const { kinds, message } = await drain(streamModel(guarded.target, userContext("hi"), { token }));
    assert.deepEqual(kinds, ["error"], `token ${token}`);
    assert.equal(message.stopReason, StopReason.ERROR);
    assert.equal(message.errorMessage, DENIED);
  }
  const accepted = await streamModel(guarded.target, userContext("hi"), { token: TOKEN }).result();
  assert.equal(accepted.stopReason, StopReason.TOOL_USE);
  // `token` takes the place of an authorization header given with the others.
  const headers = { authorization: "Bearer wrong", "x-other": "kept" };
  const both = await streamModel(guarded.target, userContext("hi"), { token: TOKEN, headers }).result();
  assert.equal(both.stopReason, StopReason.TOOL_USE);
  const header = { authorization: `Bearer ${TOKEN}` };
  const plainHeader = await streamModel(guarded.target, userContext("hi"), { headers: header }).result();
  assert.equal(plainHeader.stopReason, StopReason.TOOL_USE);
});

test("TLS: `ca` trusts the server's certificate", { timeout: TEST_TIMEOUT }, async () => {
  const trusted = streamModel(secure.target, userContext("hi"), { ca: certificate, token: TOKEN });
  const { kinds, message } = await drain(trusted);
  assert.equal(kinds.at(-1), "done");
  assert.equal(message.stopReason, StopReason.TOOL_USE);
  assert.equal(textOf(message), "我先读取项目说明。");

  // The same as bytes, through a transport of one's own, given an https:// base URL.
  const transport = createModelTransport(`https://${secure.target}`, { ca: Buffer.from(certificate) });
  const own = await streamModel(transport, userContext("hi"), { token: TOKEN }).result();
  assert.equal(own.stopReason, StopReason.TOOL_USE);

  const denied = await streamModel(secure.target, userContext("hi"), { ca: certificate }).result();
  assert.equal(denied.errorMessage, DENIED);
});

test("TLS fails as an ERROR event without the certificate, or in plaintext", { timeout: TEST_TIMEOUT }, async () => {
  const options = { token: TOKEN, timeoutMs: 5000 };
  const untrusted = await streamModel(`https://${secure.target}`, userContext("hi"), options).result();
  assert.equal(untrusted.stopReason, StopReason.ERROR);
  assert.match(untrusted.errorMessage ?? "", /certificate/);
  const plaintext = await streamModel(secure.target, userContext("hi"), options).result();
  assert.equal(plaintext.stopReason, StopReason.ERROR);
  assert.ok(plaintext.errorMessage);
  // A plaintext server does not speak TLS either.
  const mismatch = await streamModel(plain.target, userContext("hi"), { ca: certificate, timeoutMs: 5000 }).result();
  assert.equal(mismatch.stopReason, StopReason.ERROR);
  assert.throws(() => createModelTransport(`http://${plain.target}`, { ca: certificate }), {
    name: "TypeError",
    message: `a CA certificate needs TLS, not http://${plain.target}`,
  });
});

test("the response headers and trailers are on the stream", { timeout: TEST_TIMEOUT }, async () => {
  const trailing = new Uint8Array([0xab, 0xab, 0xab]);
  const headers = { [ECHO_INITIAL]: "test_initial_metadata_value", [ECHO_TRAILING]: encodeBinaryHeader(trailing) };
  const events = streamModel(plain.target, userContext("hi"), { headers });
  const first = await events.next();
  assert.equal(eventKind(first.value!), "start");
  assert.equal(events.headers.get(ECHO_INITIAL), "test_initial_metadata_value"); // with the first event
  const { kinds, message } = await drain(events);
  assert.equal(kinds.at(-1), "done");
  assert.equal(message.stopReason, StopReason.TOOL_USE);
  // In place once the terminal event has arrived, nothing to wait for.
  assert.deepEqual(decodeBinaryHeader(events.trailers.get(ECHO_TRAILING) ?? ""), trailing);

  const none = streamModel(plain.target, userContext("hi"));
  await drain(none);
  assert.equal(none.headers.get(ECHO_INITIAL), null);
  assert.equal(none.trailers.get(ECHO_TRAILING), null);
});

test("an invalid request is refused before anything is sent", { timeout: TEST_TIMEOUT }, async () => {
  const server = await startRawServer([]);
  try {
    const { kinds, message } = await drain(streamModel(server.target, { messages: [{}] }));
    assert.deepEqual(kinds, ["error"]);
    assert.equal(message.stopReason, StopReason.ERROR);
    assert.equal(
      message.errorMessage,
      "invalid request: StreamRequest.context.messages[0].role: exactly one of user, assistant, tool_result, custom, session_entry must be set, found none",
    );
    const hot = await streamModel(server.target, userContext("hi"), { generation: { temperature: 3.5 } }).result();
    assert.equal(hot.errorMessage, "invalid request: StreamRequest.options.temperature: must be between 0 and 2, got 3.5");
    const big = userContext("x".repeat(64));
    big.extraJson = JSON.stringify({ note: "y".repeat(64) });
    const tight = await streamModel(server.target, big, { limits: { maxJsonBytes: 32, maxJsonDepth: 64 } }).result();
    assert.equal(tight.errorMessage, "invalid request: StreamRequest.context.extra_json: 75 bytes of JSON, above the limit of 32");
    assert.equal(server.connections(), 0);
  } finally {
    await server.close();
  }
});

test("a server that holds the call open after the terminal event is cut off", { timeout: TEST_TIMEOUT }, async () => {
  // The terminal event waits for the trailers, but not for a call that never ends.
  const wire = eventsOf(assistantMessage([text("ok")])).map((event) => toBinary(ModelEventSchema, event));
  const server = await startRawServer(wire, { code: 0 }, { hold: true });
  try {
    const events = streamModel(server.target, userContext("hi"));
    const { kinds, message } = await drain(events);
    assert.equal(kinds.at(-1), "done");
    assert.equal(message.stopReason, StopReason.STOP);
    assert.equal(textOf(message), "ok");
    assert.equal([...events.trailers].length, 0); // the call was cut before any trailers
  } finally {
    await server.close();
  }
});
