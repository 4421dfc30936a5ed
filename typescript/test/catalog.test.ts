// The model catalog and naming a model by provider and id, against an in-process fake server.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { create } from "@bufbuild/protobuf";
import {
  CallError,
  calculateCost,
  getModel,
  InputKind,
  listModels,
  type Model,
  ModelSchema,
  StopReason,
  type StreamRequest,
  streamModel,
  ThinkingLevel,
  ToolChoiceMode,
  UsageSchema,
} from "pi-proto";
import { type FakeServer, play, startFakeServer } from "./support/fake-server.js";
import { assistantMessage, eventsOf, TEST_TIMEOUT, text, userContext } from "./support/messages.js";

const OPUS = create(ModelSchema, {
  id: "claude-opus-4-5",
  name: "Claude Opus 4.5",
  api: "anthropic-messages",
  provider: "anthropic",
  reasoning: true,
  input: [InputKind.TEXT, InputKind.IMAGE],
  cost: { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 },
  contextWindow: 200_000n,
  maxTokens: 64_000n,
});
const MINI = create(ModelSchema, { id: "gpt-4o-mini", provider: "openai", input: [InputKind.TEXT] });
const MINI_ELSEWHERE = create(ModelSchema, { id: "gpt-4o-mini", provider: "openrouter", input: [InputKind.TEXT] });

let server: FakeServer;
const requests: StreamRequest[] = [];

before(async () => {
  server = await startFakeServer(
    (request, context) => {
      requests.push(request);
      return play(eventsOf(assistantMessage([text("ok")])), context);
    },
    undefined,
    [OPUS, MINI, MINI_ELSEWHERE],
  );
});

after(async () => {
  await server?.close();
});

function sameModels(got: readonly Model[], want: readonly Model[]): void {
  assert.deepEqual(
    got.map((model) => `${model.provider}/${model.id}`),
    want.map((model) => `${model.provider}/${model.id}`),
  );
}

test("listModels lists the catalog in its order, or one provider's models", { timeout: TEST_TIMEOUT }, async () => {
  const all = await listModels(server.target);
  sameModels(all, [OPUS, MINI, MINI_ELSEWHERE]);
  assert.equal(all[0]!.contextWindow, 200_000n);
  assert.deepEqual(all[0]!.input, [InputKind.TEXT, InputKind.IMAGE]);
  sameModels(await listModels(server.target, "openai"), [MINI]);
  sameModels(await listModels(server.target, "nobody"), []);
});

test("getModel finds a model by id, and by provider and id", { timeout: TEST_TIMEOUT }, async () => {
  const opus = await getModel(server.target, "claude-opus-4-5", "", { token: "t0k" });
  assert.equal(opus.name, "Claude Opus 4.5");
  assert.equal(server.lastHeaders?.get("authorization"), "Bearer t0k");
  // The rates price a call's usage.
  const usage = create(UsageSchema, { input: 1n, output: 114n, cacheWrite: 33637n });
  assert.equal(calculateCost(opus, usage).total, 0.21308625);
  assert.equal((await getModel(server.target, "gpt-4o-mini", "openrouter")).provider, "openrouter");
});

test("getModel fails with a CallError carrying the status code", { timeout: TEST_TIMEOUT }, async () => {
  await assert.rejects(getModel(server.target, "gpt-5", "openai"), (error) => {
    assert.ok(error instanceof CallError);
    assert.equal(error.statusCode, "NOT_FOUND");
    assert.match(error.detail, /served: anthropic\/claude-opus-4-5/);
    return true;
  });
  // An empty id breaks the request's rules: refused before anything is sent.
  const calls = server.calls;
  await assert.rejects(getModel(server.target, ""), { name: "CallError", statusCode: "INVALID_ARGUMENT" });
  assert.equal(server.calls, calls);
  // No server there.
  const gone = listModels("127.0.0.1:1", "", { timeoutMs: 5000 });
  await assert.rejects(gone, { name: "CallError", statusCode: "UNAVAILABLE" });
});

test("a catalog call's deadline and options: passed, refused, or whole milliseconds", {
  timeout: TEST_TIMEOUT,
}, async () => {
  const calls = server.calls;
  // A deadline of 0 or less has passed (connect alone would read it as none); nothing is sent.
  for (const timeoutMs of [0, -1, -Infinity]) {
    await assert.rejects(listModels(server.target, "", { timeoutMs }), {
      name: "CallError",
      statusCode: "DEADLINE_EXCEEDED",
    });
  }
  // Options it cannot use reject with a CallError too, not a TypeError.
  for (const [target, options] of [
    [server.target, { timeoutMs: NaN }],
    ["", {}],
    [server.target, { protocol: "sse" as never }],
    [server.target, { token: "a\nb" }],
  ] as const) {
    await assert.rejects(getModel(target, "gpt-4o-mini", "", options), {
      name: "CallError",
      statusCode: "INVALID_ARGUMENT",
    });
  }
  assert.equal(server.calls, calls);
  // A fractional deadline goes as whole milliseconds (`grpc-timeout: 1234.5m` is malformed).
  sameModels(await listModels(server.target, "openai", { timeoutMs: 1234.5 }), [MINI]);
});

test("a stream names its model by provider and id, with pi's call options", { timeout: TEST_TIMEOUT }, async () => {
  const generation = {
    reasoning: ThinkingLevel.HIGH,
    toolChoice: { mode: ToolChoiceMode.TOOL, tool: "read" },
    sessionId: "s-1",
    headers: { "x-trace": "1", "anthropic-beta": "b" },
    metadataJson: '{"user_id":"u1"}',
  };
  const options = { provider: "openrouter", model: "gpt-4o-mini", generation };
  const message = await streamModel(server.target, userContext("hi"), options).result();
  assert.equal(message.stopReason, StopReason.STOP);
  const sent = requests.at(-1)!;
  assert.deepEqual([sent.provider, sent.model], ["openrouter", "gpt-4o-mini"]);
  assert.equal(sent.options?.toolChoice?.tool, "read");
  // The headers arrive as sent, in key order: map entries are encoded sorted.
  assert.deepEqual(Object.entries(sent.options?.headers ?? {}), [
    ["anthropic-beta", "b"],
    ["x-trace", "1"],
  ]);
  // A tool choice that names no tool breaks the schema's CEL rule: refused before it is sent.
  const calls = server.calls;
  const bad = { ...options, generation: { toolChoice: { mode: ToolChoiceMode.TOOL } } };
  const refused = streamModel(server.target, userContext("hi"), bad);
  assert.equal((await refused.result()).stopReason, StopReason.ERROR);
  assert.equal(refused.failure?.kind === "status" && refused.failure.statusCode, "INVALID_ARGUMENT");
  assert.equal(server.calls, calls);
});
