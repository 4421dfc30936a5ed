/**
 * The conformance executor of the TypeScript runtime, run by tests/conformance/harness.py:
 *
 *     node --import tsx conformance/executor.ts < requests > results
 *
 * It reads size-delimited `pi.conformance.v1.CaseRequest`s from standard input until it ends,
 * runs each case through pi-proto's public API, and writes one size-delimited `CaseResult` per
 * request to standard output, in order. It compares nothing: the harness does. Whatever a case
 * raises becomes that case's `error`; diagnostics go to standard error, never to standard output.
 */

import {
  clone,
  create,
  createRegistry,
  fromBinary,
  fromJsonString,
  type JsonValue,
  toBinary,
  toJson,
} from "@bufbuild/protobuf";
import { sizeDelimitedDecodeStream, sizeDelimitedEncode } from "@bufbuild/protobuf/wire";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import * as conformance from "../src/gen/pi/conformance/v1/conformance_pb.js";
import * as pi from "../src/index.js";

const CASE_HEADER = "pi-conformance-case";
/**
 * A case with no outcome by then is answered with an error, so one case cannot stall the rest;
 * within the harness's own 90 s a case, and past the 60 s a client case takes at most.
 */
const CASE_TIMEOUT_MS = 75_000;
/** The largest request read: the corpus holds cases of several megabytes. */
const READ_MAX_BYTES = 0x7fffffff;
/** The longest error text written back: a case's text may be megabytes long. */
const MAX_ERROR_CHARS = 2000;

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

type Result = conformance.CaseResult["result"];

/** A case the executor cannot run; its message is the case's error. */
class Unrunnable extends Error {}

function runWire(wire: conformance.WireCase): Result {
  const schema = types.getMessage(wire.type);
  if (schema === undefined) throw new Unrunnable(`no pi.ai.v1 message type ${JSON.stringify(wire.type)}`);
  const decoded = fromBinary(schema, wire.binary);
  const jsonText = jsonTextOf(toJson(ValueSchema, wire.json ?? create(ValueSchema)));
  const value = {
    binary: toBinary(schema, decoded),
    json: JSON.stringify(toJson(schema, decoded)),
    jsonBinary: toBinary(schema, fromJsonString(schema, jsonText)),
  };
  return { case: "wire", value: create(conformance.WireResultSchema, value) };
}

/**
 * `value` as JSON text, as the corpus writes it: object keys sorted (a Struct carries its keys in
 * no order, and protobuf-es encodes a map's entries in the order the JSON gave them) and -0 kept
 * (which JSON.stringify prints as 0).
 */
function jsonTextOf(value: JsonValue): string {
  if (typeof value === "number") return Object.is(value, -0) ? "-0" : JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(jsonTextOf).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const keys = Object.keys(value).sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${jsonTextOf(value[key]!)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

function runValidate(validate: conformance.ValidateCase): Result {
  const input = validate.input;
  if (input.case === undefined) throw new Unrunnable("the validate case has no input");
  const schema = types.getMessage(input.value.$typeName);
  if (schema === undefined) throw new Unrunnable(`no schema for ${input.value.$typeName}`);
  const violations = pi.violations(schema, input.value).map(violation);
  return { case: "validate", value: create(conformance.ValidateResultSchema, { violations }) };
}

async function runStream(stream: conformance.StreamCase): Promise<Result> {
  const events = new pi.AssistantMessageEventStream({ maxMessageBytes: Number(stream.maxMessageBytes) || undefined });
  const result = create(conformance.StreamResultSchema);
  for (const event of stream.events) {
    if (events.done) break; // nothing is pushed once a terminal event was delivered
    try {
      events.push(clone(pi.ModelEventSchema, event));
    } catch (error) {
      if (!(error instanceof pi.StreamProtocolError)) throw error;
      result.failure = create(conformance.StreamFailureSchema, {
        eventIndex: error.eventIndex,
        ruleId: error.ruleId,
        violations: error.violations.map(violation),
      });
      return { case: "stream", value: result };
    }
    const delivered = await events.next();
    result.partials.push(clone(pi.AssistantMessageSchema, delivered.value!.partial!));
  }
  if (events.done) result.result = await events.result();
  return { case: "stream", value: result };
}

async function runClient(
  client: conformance.ClientCase,
  name: string,
  request: conformance.CaseRequest,
): Promise<Result> {
  const protocol = (request.protocol || "grpc") as pi.Protocol;
  if (!pi.PROTOCOLS.includes(protocol)) {
    throw new Unrunnable(
      `the client does not speak ${JSON.stringify(request.protocol)} (only ${pi.PROTOCOLS.join(", ")})`,
    );
  }
  const settings = client.client ?? create(conformance.ClientSettingsSchema);
  if (settings.closeAfterEvents > 0) {
    throw new Unrunnable(
      "close_after_events: the client has no close of its own (calls share one transport per target)",
    );
  }
  const call = client.request ?? create(pi.StreamRequestSchema);
  const events = pi.streamModel(request.server, call.context ?? {}, {
    protocol,
    provider: call.provider,
    model: call.model,
    generation: call.options,
    coalesceDeltas: call.coalesceDeltas,
    headers: { [CASE_HEADER]: name },
    timeoutMs: settings.deadlineMs || undefined,
    maxMessageBytes: Number(settings.maxMessageBytes) || undefined,
  });
  // A cancel from another task, while the consumer waits for the next event.
  const canceller = settings.cancelAfterMs ? setTimeout(() => events.cancel(), settings.cancelAfterMs) : undefined;
  let count = 0;
  let last = create(pi.ModelEventSchema);
  try {
    for await (const event of events) {
      count += 1;
      last = event;
      if (count === settings.cancelAfterEvents) events.cancel();
    }
  } finally {
    clearTimeout(canceller);
  }
  const outcome = create(conformance.ClientOutcomeSchema, { events: count, result: await events.result() });
  const body = last.event;
  if (body.case === "done" || body.case === "error") outcome.reason = body.value.reason;
  const failure = events.failure;
  if (failure?.kind === "status") outcome.failure = { case: "statusCode", value: failure.statusCode };
  if (failure?.kind === "rule") {
    const { eventIndex, ruleId } = failure;
    const rule = create(conformance.StreamFailureSchema, {
      eventIndex,
      ruleId,
      violations: failure.violations.map(violation),
    });
    outcome.failure = { case: "rule", value: rule };
  }
  return { case: "client", value: outcome };
}

function runPiJson(piJson: conformance.PiJsonCase): Result {
  const result = create(conformance.PiJsonResultSchema);
  if (piJson.expect.case === "session") {
    const warnings: pi.SessionWarning[] = [];
    const entries = pi.sessionFromPi(piJson.text, warnings);
    const warnedLines = warnings.map((warning) => warning.line);
    result.read = { case: "session", value: create(conformance.PiSessionSchema, { entries, warnedLines }) };
    result.written = pi.sessionToPi(entries);
    return { case: "piJson", value: result };
  }
  const value = JSON.parse(piJson.text) as unknown;
  try {
    if (piJson.expect.case === "context") {
      const context = pi.contextFromPi(value);
      result.read = { case: "context", value: context };
      result.written = JSON.stringify(pi.contextToPi(context));
    } else if (piJson.expect.case === "event") {
      const event = pi.eventFromPi(value);
      result.read = { case: "event", value: event };
      // An event without its partial is pi 1.6's delta-only form, written back in it.
      result.written = JSON.stringify(pi.eventToPi(event, { deltaOnly: event.partial === undefined }));
    } else {
      const entry = pi.entryFromPi(value);
      result.read = { case: "entry", value: entry };
      result.written = JSON.stringify(pi.entryToPi(entry));
      // An edit of the entry, as a user makes it: what its fields say is what is written.
      if (piJson.edited !== undefined) result.editedWritten = JSON.stringify(pi.entryToPi(piJson.edited));
    }
  } catch (error) {
    if (!(error instanceof pi.PiJsonError)) throw error;
    result.read = { case: "errorPath", value: error.path };
    result.written = "";
  }
  return { case: "piJson", value: result };
}

function runCost(cost: conformance.CostCase): Result {
  const rates = cost.rates ?? create(pi.ModelCostSchema);
  return { case: "cost", value: pi.calculateCost(rates, cost.usage ?? create(pi.UsageSchema)) };
}

function runPartialJson(partial: conformance.PartialJsonCase): Result {
  // Through the public accumulator, as a tool call streams: the text as one delta, then one code
  // point per delta.
  const [whole, byCharacter] = [[partial.text], Array.from(partial.text)].map((deltas) => {
    const accumulator = new pi.Accumulator();
    accumulator.apply(create(pi.ModelEventSchema, { event: { case: "start", value: { header: {} } } }));
    const start = { contentIndex: 0, id: "c", name: "n" };
    accumulator.apply(create(pi.ModelEventSchema, { event: { case: "toolcallStart", value: start } }));
    for (const delta of deltas) {
      const event = { case: "toolcallDelta", value: { contentIndex: 0, delta } } as const;
      accumulator.apply(create(pi.ModelEventSchema, { event }));
    }
    const call = accumulator.partial.content[0]!.block;
    if (call.case !== "toolCall") throw new Error(`the partial's block 0 is ${call.case ?? "empty"}, not a tool call`);
    return call.value.argumentsJson;
  }) as [string, string];
  return { case: "partialJson", value: create(conformance.PartialJsonResultSchema, { whole, byCharacter }) };
}

function violation(found: pi.Violation): conformance.Violation {
  return create(conformance.ViolationSchema, { fieldPath: found.fieldPath, ruleId: found.ruleId });
}

async function run(request: conformance.CaseRequest): Promise<Result> {
  const item = request.case ?? create(conformance.CaseSchema);
  const kind = item.kind;
  switch (kind.case) {
    case "wire":
      return runWire(kind.value);
    case "validate":
      return runValidate(kind.value);
    case "stream":
      return runStream(kind.value);
    case "client":
      return runClient(kind.value, item.name, request);
    case "piJson":
      return runPiJson(kind.value);
    case "cost":
      return runCost(kind.value);
    case "partialJson":
      return runPartialJson(kind.value);
    default:
      throw new Unrunnable("the case has no kind");
  }
}

/** The case's result, or its error: whatever it raised, or that it took too long. */
async function answer(request: conformance.CaseRequest): Promise<conformance.CaseResult> {
  const name = request.case?.name ?? "";
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Unrunnable(`no outcome within ${CASE_TIMEOUT_MS} ms`)), CASE_TIMEOUT_MS);
  });
  try {
    const result = await Promise.race([run(request), timeout]);
    return create(conformance.CaseResultSchema, { name, result });
  } catch (error) {
    const said = error instanceof Unrunnable ? error.message : describe(error);
    const text = said.length > MAX_ERROR_CHARS ? `${said.slice(0, MAX_ERROR_CHARS)}...` : said;
    return create(conformance.CaseResultSchema, { name, result: { case: "error", value: text } });
  } finally {
    clearTimeout(timer);
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/** Write `bytes` to standard output and wait until Node has handed them on. */
function write(bytes: Uint8Array): Promise<void> {
  return new Promise((resolve, reject) => process.stdout.write(bytes, (error) => (error ? reject(error) : resolve())));
}

async function main(): Promise<void> {
  // A failure left behind by a case (a call still ending) must not stop the cases after it.
  process.on("unhandledRejection", (reason) => console.error(`unhandled rejection: ${describe(reason)}`));
  const requests = sizeDelimitedDecodeStream(conformance.CaseRequestSchema, process.stdin, {
    readMaxBytes: READ_MAX_BYTES,
  });
  for await (const request of requests) {
    await write(sizeDelimitedEncode(conformance.CaseResultSchema, await answer(request)));
  }
}

try {
  await main();
  process.exitCode = 0;
} catch (error) {
  console.error(`conformance executor: ${describe(error)}`);
  process.exitCode = 1;
}
// Exit at once: a connection the client keeps to the server must not hold the process open.
process.exit();
