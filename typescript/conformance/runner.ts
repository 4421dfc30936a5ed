/**
 * The TypeScript runner of the conformance corpus: runs every case against pi-proto's public API.
 *
 *     node --import tsx conformance/runner.ts --corpus DIR [--known-failures FILE] [--server HOST:PORT]
 *         [--http-server HOST:PORT] [--protocol grpc|connect|grpc-web ...] [--only KIND ...]
 *
 * The client cases run against the reference server (`pi-proto serve --conformance DIR`): over
 * gRPC at `--server`, and over Connect and gRPC-web at its HTTP port (`--http-port`), given as
 * `--http-server`. `--protocol` (repeatable; default grpc) says over which protocols each client
 * case runs; `--only` (repeatable) runs the cases of those kinds alone (e.g. `--only client`).
 *
 * Prints one line per case (PASS, FAIL, KNOWN, FIXED or SKIP; a client case run over Connect or
 * gRPC-web is named with the protocol, e.g. `client/x [connect]`), then, when the client cases ran
 * over more than one protocol, `typescript [PROTOCOL]: ...` for each, and last
 * `typescript: N passed, M failed, K known failures, S skipped`; exits 1 when a case fails or a
 * known failure passes. A known failure names a case (every protocol) or `case [protocol]`.
 * Outcomes are compared as structured values, never as message text.
 */

import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { type JsonValue, clone, create, createRegistry, equals, fromBinary, fromJson } from "@bufbuild/protobuf";
import { toBinary, toJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import * as conformance from "../src/gen/pi/conformance/v1/conformance_pb.js";
import * as pi from "../src/index.js";

const RUNTIME = "typescript";
const CASE_HEADER = "pi-conformance-case";
const CASE_TIMEOUT_MS = 30_000;
const types = createRegistry(
  pi.file_pi_ai_v1_json,
  pi.file_pi_ai_v1_content,
  pi.file_pi_ai_v1_tool,
  pi.file_pi_ai_v1_message,
  pi.file_pi_ai_v1_context,
  pi.file_pi_ai_v1_event,
  pi.file_pi_ai_v1_model,
  pi.file_pi_ai_v1_transcript,
  pi.file_pi_ai_v1_service,
);

/** A case whose outcome differs from what it expects. */
class Mismatch extends Error {}

// --- one function per case kind; each throws Mismatch ---------------------------------------------

function runWire(wire: conformance.WireCase): void {
  const schema = types.getMessage(wire.type);
  if (schema === undefined) throw new Mismatch(`no pi.ai.v1 type ${wire.type}`);
  const message = fromBinary(schema, wire.binary);
  if (!sameBytes(toBinary(schema, message), wire.binary)) throw new Mismatch("re-encoding gives other bytes");
  const expected = toJson(ValueSchema, wire.json ?? create(ValueSchema));
  const printed = toJson(schema, message);
  if (!sameJson(printed, expected)) throw new Mismatch(`ProtoJSON differs: ${JSON.stringify(printed)}`);
  const parsed = toBinary(schema, fromJson(schema, expected));
  if (!sameBytes(parsed, wire.jsonBinary.length > 0 ? wire.jsonBinary : wire.binary)) {
    throw new Mismatch("parsing the ProtoJSON gives other bytes");
  }
}

function runValidate(validate: conformance.ValidateCase): void {
  const input = validate.input;
  if (input.case === undefined) throw new Mismatch("the case has no input");
  const schema = types.getMessage(input.value.$typeName)!;
  sameViolations(pi.violations(schema, input.value), validate.violations);
}

function runCost(cost: conformance.CostCase): void {
  const got = pi.calculateCost(cost.rates ?? create(pi.ModelCostSchema), cost.usage ?? create(pi.UsageSchema));
  const want = cost.cost ?? create(pi.CostSchema);
  const parts = ["input", "output", "cacheRead", "cacheWrite", "total"] as const;
  // Bit for bit: Object.is tells 0 from -0 and, unlike ===, holds for NaN.
  const same = parts.every((part) => Object.is(got[part], want[part]));
  // Its presence too: pi sets it false on every cost it computes.
  if (!same || got.totalFromProvider !== want.totalFromProvider) throw new Mismatch(`costs ${printed(got)}`);
}

function runPartialJson(partial: conformance.PartialJsonCase): void {
  // Through the public accumulator: the text as one delta, then one character at a time.
  for (const deltas of [[partial.text], Array.from(partial.text)]) {
    const accumulator = new pi.Accumulator();
    accumulator.apply(create(pi.ModelEventSchema, { event: { case: "start", value: { header: {} } } }));
    const start = { contentIndex: 0, id: "c", name: "n" };
    accumulator.apply(create(pi.ModelEventSchema, { event: { case: "toolcallStart", value: start } }));
    for (const delta of deltas) {
      const event = { case: "toolcallDelta", value: { contentIndex: 0, delta } } as const;
      accumulator.apply(create(pi.ModelEventSchema, { event }));
    }
    const call = accumulator.partial.content[0]!.block;
    const completed = call.case === "toolCall" ? call.value.argumentsJson : undefined;
    if (completed !== partial.completed) {
      throw new Mismatch(`completes as ${JSON.stringify(completed)} from ${deltas.length} deltas`);
    }
  }
}

async function runStream(stream: conformance.StreamCase): Promise<void> {
  const events = new pi.AssistantMessageEventStream({ maxMessageBytes: Number(stream.maxMessageBytes) || undefined });
  const partials: pi.AssistantMessage[] = [];
  for (const event of stream.events) {
    if (events.done) break; // events after a terminal event are not delivered
    try {
      events.push(clone(pi.ModelEventSchema, event));
    } catch (error) {
      if (!(error instanceof pi.StreamProtocolError)) throw error;
      const { eventIndex, ruleId, violations } = error;
      if (stream.expect.case !== "failure") throw new Mismatch(`event ${eventIndex} broke rule ${ruleId}`);
      sameFailure(stream.expect.value, { kind: "rule", eventIndex, ruleId, violations, detail: error.detail });
      return;
    }
    const delivered = await events.next();
    partials.push(clone(pi.AssistantMessageSchema, delivered.value!.partial!));
  }
  if (stream.expect.case !== "success") {
    const want = stream.expect.value;
    throw new Mismatch(`expected rule ${want?.ruleId} at event ${want?.eventIndex}; every event fit`);
  }
  const success = stream.expect.value;
  for (const [index, want] of success.partials.entries()) {
    const got = partials[index];
    if (got !== undefined && !equals(pi.AssistantMessageSchema, got, want)) {
      throw new Mismatch(`the partial after event ${index} differs: ${printed(got)}`);
    }
  }
  if (partials.length !== success.partials.length) {
    throw new Mismatch(`${partials.length} events delivered, the case expects ${success.partials.length}`);
  }
  const result = events.done ? await events.result() : undefined;
  if ((success.result === undefined) !== (result === undefined)) {
    throw new Mismatch(result === undefined ? "the stream has no result" : "the stream has a result, the case none");
  }
  if (result !== undefined && !equals(pi.AssistantMessageSchema, result, success.result!)) {
    throw new Mismatch(`the result differs: ${printed(result)}`);
  }
}

/** Where and how a client case calls the reference server. */
interface Endpoint {
  readonly target: string;
  readonly protocol: pi.Protocol;
}

async function runClient(client: conformance.ClientCase, name: string, endpoint: Endpoint): Promise<void> {
  const settings = client.client ?? create(conformance.ClientSettingsSchema);
  // The case's request, or one user message with one text block "hi".
  const hi = { block: { case: "text", value: { text: "hi" } } } as const;
  const request =
    client.request ??
    create(pi.StreamRequestSchema, { context: { messages: [{ role: { case: "user", value: { content: [hi] } } }] } });
  const events = pi.streamModel(endpoint.target, request.context ?? {}, {
    protocol: endpoint.protocol,
    provider: request.provider,
    model: request.model,
    generation: request.options,
    coalesceDeltas: request.coalesceDeltas,
    headers: { [CASE_HEADER]: name },
    timeoutMs: settings.deadlineMs || undefined,
    maxMessageBytes: Number(settings.maxMessageBytes) || undefined,
  });
  // A cancel from another task, while the consumer waits for the next event.
  const canceller = settings.cancelAfterMs ? setTimeout(() => events.cancel(), settings.cancelAfterMs) : undefined;
  let count = 0;
  let last = create(pi.ModelEventSchema);
  for await (const event of events) {
    count += 1;
    last = event;
    if (count === settings.cancelAfterEvents) events.cancel();
  }
  clearTimeout(canceller);
  const result = await events.result();
  const expect = client.expect ?? create(conformance.ClientOutcomeSchema);
  const body = last.event;
  const reason = body.case === "done" || body.case === "error" ? body.value.reason : undefined;
  if (reason !== expect.reason) {
    const ended = `${pi.eventKind(last)} ${pi.StopReason[reason ?? 0]}`;
    throw new Mismatch(`ended with ${ended}, expected ${pi.StopReason[expect.reason]}`);
  }
  if (count !== expect.events) throw new Mismatch(`${count} events, expected ${expect.events}`);
  const failure = events.failure;
  const want = expect.failure;
  if (want.case === undefined && failure !== undefined) {
    throw new Mismatch(`the client failed the stream itself: ${failure.detail}`);
  }
  if (want.case === "statusCode" && (failure?.kind !== "status" || failure.statusCode !== want.value)) {
    throw new Mismatch(`expected status ${want.value}, got ${describe(failure)}`);
  }
  if (want.case === "rule") sameFailure(want.value, failure);
  if (expect.result !== undefined) sameResult(result, expect.result);
}

function runPiJson(piJson: conformance.PiJsonCase): void {
  const want = piJson.expect;
  let written: string;
  try {
    const value = JSON.parse(piJson.text) as unknown;
    if (want.case === "context") {
      const context = pi.contextFromPi(value);
      if (!equals(pi.AgentContextSchema, context, want.value)) throw new Mismatch(`reads as ${printed(context)}`);
      written = JSON.stringify(pi.contextToPi(context));
    } else {
      const entry = pi.entryFromPi(value);
      if (want.case !== "entry" || !equals(pi.TranscriptEntrySchema, entry, want.value)) {
        const why = want.case === "errorPath" ? `expected an error at "${want.value}"` : printed(entry);
        throw new Mismatch(`reads as ${why}`);
      }
      written = JSON.stringify(pi.entryToPi(entry));
    }
  } catch (error) {
    if (!(error instanceof pi.PiJsonError)) throw error;
    if (want.case !== "errorPath") throw new Mismatch(`cannot read it: ${error.message}`);
    if (error.path !== want.value) throw new Mismatch(`error at "${error.path}", expected "${want.value}"`);
    return;
  }
  if (written !== (piJson.written || piJson.text)) throw new Mismatch(`writes back as ${written}`);
}

// --- comparisons ---------------------------------------------------------------------------------

function sameViolations(found: readonly pi.Violation[], expected: readonly conformance.Violation[]): void {
  const got = found.map((item) => `${item.fieldPath} ${item.ruleId}`).sort();
  const want = expected.map((item) => `${item.fieldPath} ${item.ruleId}`).sort();
  if (got.join("\n") !== want.join("\n")) {
    throw new Mismatch(`violations ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`);
  }
}

function sameFailure(expected: conformance.StreamFailure, failure: pi.StreamFailure | undefined): void {
  if (failure?.kind !== "rule") throw new Mismatch(`expected rule ${expected.ruleId}, got ${describe(failure)}`);
  if (failure.eventIndex !== expected.eventIndex || failure.ruleId !== expected.ruleId) {
    throw new Mismatch(`${describe(failure)}, expected rule ${expected.ruleId} at event ${expected.eventIndex}`);
  }
  sameViolations(failure.violations, expected.violations);
}

function sameResult(result: pi.AssistantMessage, expected: pi.AssistantMessage): void {
  const failed = result.stopReason === pi.StopReason.ERROR || result.stopReason === pi.StopReason.ABORTED;
  if (failed && !result.errorMessage) throw new Mismatch("a failed message without an error_message");
  const [got, want] = [result, expected].map((message) => clone(pi.AssistantMessageSchema, message)) as [
    pi.AssistantMessage,
    pi.AssistantMessage,
  ];
  got.errorMessage = want.errorMessage = undefined;
  if (!equals(pi.AssistantMessageSchema, got, want)) throw new Mismatch(`the result differs: ${printed(result)}`);
}

/** JSON values equal as ProtoJSON compares them: numbers as doubles, object keys in any order. */
function sameJson(a: JsonValue, b: JsonValue): boolean {
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, i) => sameJson(item, b[i]!));
  }
  if (typeof a === "object" && a !== null && typeof b === "object" && b !== null) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((key) => key in b && sameJson(a[key]!, b[key]!));
  }
  return a === b;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.from(a).equals(Buffer.from(b));
}

function describe(failure: pi.StreamFailure | undefined): string {
  if (failure === undefined) return "no failure";
  if (failure.kind === "status") return `status ${failure.statusCode}`;
  return `rule ${failure.ruleId} at event ${failure.eventIndex}`;
}

function printed(message: pi.AssistantMessage | pi.TranscriptEntry | pi.AgentContext | pi.Cost): string {
  return JSON.stringify(toJson(types.getMessage(message.$typeName)!, message));
}

// --- the run -------------------------------------------------------------------------------------

type Loaded = conformance.Case | { name: string; unreadable: string };

/** Every case of the corpus, file by file in name order; a case that cannot be read keeps its error. */
function loadCases(directory: string): Loaded[] {
  const files = readdirSync(directory).filter((name) => name.endsWith(".json")).sort();
  if (files.length === 0) throw new Error(`${directory}: no corpus files (*.json) here`);
  const seen = new Set<string>();
  const cases: Loaded[] = [];
  for (const file of files) {
    const suite = JSON.parse(readFileSync(join(directory, file), "utf8")) as { cases?: Array<{ name?: string }> };
    for (const [index, json] of (suite.cases ?? []).entries()) {
      const name = json.name ?? `${file}[${index}]`;
      if (seen.has(name)) throw new Error(`${file}: case ${name} is named twice in the corpus`);
      seen.add(name);
      try {
        cases.push(fromJson(conformance.CaseSchema, json as JsonValue)); // strictly: no field goes unread
      } catch (error) {
        cases.push({ name, unreadable: error instanceof Error ? error.message : String(error) });
      }
    }
  }
  return cases;
}

/** Why the case does not have its expected outcome; undefined when it does. */
async function outcome(item: conformance.Case, endpoint: Endpoint): Promise<string | undefined> {
  const kind = item.kind;
  const check = async (): Promise<void> => {
    if (kind.case === "wire") runWire(kind.value);
    else if (kind.case === "validate") runValidate(kind.value);
    else if (kind.case === "stream") await runStream(kind.value);
    else if (kind.case === "client") await runClient(kind.value, item.name, endpoint);
    else if (kind.case === "piJson") runPiJson(kind.value);
    else if (kind.case === "cost") runCost(kind.value);
    else if (kind.case === "partialJson") runPartialJson(kind.value);
    else throw new Mismatch("the case has no kind");
  };
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Mismatch(`no outcome within ${CASE_TIMEOUT_MS} ms`)), CASE_TIMEOUT_MS);
  });
  try {
    await Promise.race([check(), timeout]);
    return undefined;
  } catch (error) {
    const threw = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    const why = error instanceof Mismatch ? error.message : `threw ${threw}`;
    return why.length > 400 ? `${why.slice(0, 400)}...` : why; // a case's text may be megabytes long
  } finally {
    clearTimeout(timer);
  }
}

type Counts = { passed: number; failed: number; known: number; skipped: number };

function summary(name: string, { passed, failed, known, skipped }: Counts): string {
  return `${name}: ${passed} passed, ${failed} failed, ${known} known failures, ${skipped} skipped`;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      corpus: { type: "string" },
      "known-failures": { type: "string" },
      server: { type: "string" },
      "http-server": { type: "string" },
      protocol: { type: "string", multiple: true },
      only: { type: "string", multiple: true },
    },
  });
  if (values.corpus === undefined) throw new Error("--corpus DIR is required");
  const protocols = [...new Set(values.protocol ?? ["grpc"])] as pi.Protocol[];
  for (const protocol of protocols) {
    if (!pi.PROTOCOLS.includes(protocol)) throw new Error(`--protocol ${protocol}: expected one of ${pi.PROTOCOLS.join(", ")}`);
  }
  const only = values.only === undefined ? undefined : new Set(values.only);
  const path = values["known-failures"];
  const text = path ? readFileSync(path, "utf8") : "{}";
  const known = fromJson(conformance.KnownFailuresSchema, JSON.parse(text) as JsonValue);
  const expectedToFail = new Set(known.failures.map((item) => item.case));
  const unsupported = new Map(known.unsupported.map((item) => [item.kind, item.reason]));
  const counts: Counts = { passed: 0, failed: 0, known: 0, skipped: 0 };
  const perProtocol = new Map(protocols.map((protocol) => [protocol, { passed: 0, failed: 0, known: 0, skipped: 0 }]));
  const record = (name: string, problem: string | undefined, tally: Counts[], expected: boolean): void => {
    const counter = expected ? (problem === undefined ? "failed" : "known") : problem === undefined ? "passed" : "failed";
    for (const counted of tally) counted[counter] += 1;
    if (expected && problem === undefined) console.log(`FIXED ${name}: passes now; remove it from the known failures`);
    else if (expected) console.log(`KNOWN ${name}: ${problem}`);
    else console.log(problem === undefined ? `PASS ${name}` : `FAIL ${name}: ${problem}`);
  };
  for (const item of loadCases(values.corpus)) {
    const readable = !("unreadable" in item);
    // Kinds are named as in the .proto (Case.kind's member names), e.g. "pi_json".
    const kind = readable ? (item.kind.case ?? "").replace(/[A-Z]/g, (upper) => `_${upper.toLowerCase()}`) : "";
    if (only !== undefined && readable && !only.has(kind)) continue; // an unreadable case is reported whatever
    // A client case runs once per protocol; any other case once.
    for (const protocol of kind === "client" ? protocols : [undefined]) {
      const name = protocol === undefined || protocol === "grpc" ? item.name : `${item.name} [${protocol}]`;
      const tally = protocol === undefined ? [counts] : [counts, perProtocol.get(protocol)!];
      const target = protocol === "grpc" ? values.server : values["http-server"];
      const skip =
        unsupported.get(kind) ??
        (protocol === undefined || target !== undefined
          ? undefined
          : `no ${protocol === "grpc" ? "--server" : "--http-server"} given`);
      if (skip !== undefined) {
        for (const counted of tally) counted.skipped += 1;
        console.log(`SKIP ${name}: ${skip}`);
        continue;
      }
      const endpoint = { target: target ?? "", protocol: protocol ?? "grpc" };
      const problem = readable ? await outcome(item, endpoint) : `cannot read the case: ${item.unreadable}`;
      record(name, problem, tally, expectedToFail.has(item.name) || expectedToFail.has(name));
    }
  }
  if (perProtocol.size > 1) {
    for (const [protocol, tally] of perProtocol) console.log(summary(`${RUNTIME} [${protocol}]`, tally));
  }
  console.log(summary(RUNTIME, counts));
  return counts.failed === 0 ? 0 : 1;
}

// Exit at once: a connection the client keeps to the server must not hold the process open.
process.exit(await main());
