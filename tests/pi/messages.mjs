// Messages with every field pi-ai can set, made by pi's own code wherever some code of pi's sets
// the field, and by hand, in the order pi's providers add such fields, where none does. Prints one
// JSON line per message, {"name", "text"}, `text` being JSON.stringify's own text of the message,
// then one line {"declared": {type: [field, ...]}} with the fields pi-ai's type declarations give
// each object type, so that tests/test_pi_oracle.py can tell a field pi gains from one it knew.
import { readFileSync } from "node:fs";
import { Agent } from "@earendil-works/pi-agent-core";
import {
  appendAssistantMessageDiagnostic,
  calculateCost,
  createAssistantMessageDiagnostic,
  createModels,
  fauxAssistantMessage,
  fauxProvider,
  fauxText,
  fauxThinking,
  fauxToolCall,
  normalizeContext,
} from "@earendil-works/pi-ai";
import { stream as piMessagesStream } from "@earendil-works/pi-ai/api/pi-messages";
/** @import { AgentTool } from "@earendil-works/pi-agent-core" */
/** @import { Model, ToolResultMessage, Usage } from "@earendil-works/pi-ai" */

const samples = [];
const add = (name, message) => samples.push({ name, text: JSON.stringify(message) });

// A 1x1 PNG.
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const objectSchema = (properties) => ({ type: "object", properties, required: Object.keys(properties) });

// --- pi's agent loop over the faux provider: system, user, assistant and toolResult messages ----

const faux = fauxProvider({
  api: "faux",
  models: [{ id: "faux-1", reasoning: true, cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 } }],
});
const models = createModels();
models.setProvider(faux.provider);
const fauxModel = faux.getModel();

/** @type {AgentTool} */
const read = {
  name: "read",
  label: "Read",
  description: "Read a file.",
  parameters: objectSchema({ path: { type: "string" } }),
  execute: async () => {
    // A tool that called a model reports that call's usage; pi prices it with calculateCost.
    const cost = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 };
    /** @type {Usage} */
    const usage = { input: 1200, output: 85, cacheRead: 640, cacheWrite: 0, totalTokens: 1925, cost };
    calculateCost(fauxModel, usage);
    return {
      content: [
        { type: "text", text: "# tiny-pi\nA small agent runtime." },
        { type: "image", data: PNG, mimeType: "image/png" },
      ],
      details: { bytes: 33, lines: [1, 2], truncated: false, encoding: null, ratio: 0.5 },
      usage,
    };
  },
};
/** @type {AgentTool} */
const ls = {
  name: "ls",
  label: "List",
  description: "List a folder.",
  parameters: objectSchema({ path: { type: "string" } }),
  constrainedSampling: { type: "json_schema", strict: "require" },
  execute: async () => ({ content: [{ type: "text", text: "README.md" }], details: {} }),
};
/** @type {AgentTool} */
const grep = {
  name: "grep",
  label: "Grep",
  description: "Search files.",
  parameters: objectSchema({ pattern: { type: "string" } }),
  constrainedSampling: { type: "grammar", variants: { openai_lark: 'start: /[a-z]+/', openai_regex: "[a-z]+" } },
  execute: async () => ({ content: [{ type: "text", text: "README.md:1:# tiny-pi" }], details: { matches: 1 } }),
};

faux.setResponses([
  fauxAssistantMessage(
    [
      fauxThinking("The README names the project."),
      fauxText("I'll read the README."),
      fauxToolCall("read", { path: "README.md", range: { from: 1, to: 2 } }, { id: "call_1" }),
      fauxToolCall("missing", {}, { id: "call_2" }),
    ],
    { stopReason: "toolUse" },
  ),
  fauxAssistantMessage("It is tiny-pi."),
  fauxAssistantMessage("Briefly: tiny-pi."),
  fauxAssistantMessage([], { stopReason: "error", errorMessage: "overloaded" }),
]);
const agent = new Agent({
  initialState: { systemPrompt: "You are terse.", model: fauxModel, thinkingLevel: "high", tools: [read, ls] },
  streamFn: (model, context, options) => models.streamSimple(model, context, options),
});
await agent.prompt("What is the project called?", [{ type: "image", data: PNG, mimeType: "image/png" }]);
// A changed tool set and a system message of the caller's: pi adds the change to that message.
agent.state.tools = [read, grep];
await agent.prompt([
  {
    role: "system",
    content: [{ type: "text", text: "Answer in one line." }],
    sections: { "<style>": "<style>terse</style>", draft: null },
    timestamp: Date.now(),
  },
  { role: "user", content: "Again, briefly.", timestamp: Date.now() },
]);
await agent.prompt("Once more.");
for (const [index, message] of agent.state.messages.entries()) add(`agent loop #${index} ${message.role}`, message);

// --- pi's pi-messages client, fed a gateway's answer: what a backend can tell pi ----------------

/** @type {Model<"pi-messages">} */
const gateway = {
  id: "gw-1",
  name: "Gateway",
  api: "pi-messages",
  provider: "gateway",
  baseUrl: "http://localhost:0",
  reasoning: true,
  input: ["text"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 200000,
  maxTokens: 8192,
};
const answer = (status, body) => async () => {
  const type = status === 200 ? "text/event-stream" : "application/json";
  return new Response(body, { status, headers: { "content-type": type } });
};
const sse = (events) => events.map((event) => `data: ${JSON.stringify(event)}\n\n`).join("");
/** @type {Usage} */
const gatewayUsage = {
  input: 10,
  output: 20,
  cacheRead: 3,
  cacheWrite: 4,
  totalTokens: 37,
  cost: {
    input: 0.00003,
    output: 0.0003,
    cacheRead: 9e-7,
    cacheWrite: 0.000015,
    total: 0.0003459,
    totalFromProvider: true,
  },
  cacheWrite1h: 2,
  reasoning: 5,
};
async function viaGateway(name, status, body) {
  const context = normalizeContext({ messages: [{ role: "user", content: "hi", timestamp: 1 }] });
  const events = piMessagesStream(gateway, context, { apiKey: "key", fetch: answer(status, body) });
  add(name, await events.result());
}
await viaGateway(
  "pi-messages toolUse with every block field",
  200,
  sse([
    { type: "start" },
    { type: "thinking_start", contentIndex: 0 },
    { type: "thinking_delta", contentIndex: 0, delta: "Thinking." },
    { type: "thinking_end", contentIndex: 0, content: "Thinking.", contentSignature: "sig-0", redacted: false },
    { type: "thinking_start", contentIndex: 1 },
    { type: "thinking_end", contentIndex: 1, content: "", contentSignature: "opaque-redacted", redacted: true },
    { type: "text_start", contentIndex: 2 },
    { type: "text_delta", contentIndex: 2, delta: "Reading." },
    {
      type: "text_end",
      contentIndex: 2,
      content: "Reading.",
      contentSignature: JSON.stringify({ v: 1, id: "msg_1", phase: "commentary" }),
    },
    { type: "toolcall_start", contentIndex: 3, id: "call_a", toolName: "read" },
    { type: "toolcall_delta", contentIndex: 3, delta: '{"path":"a.md"}' },
    {
      type: "toolcall_end",
      contentIndex: 3,
      toolCall: {
        type: "toolCall",
        id: "call_a",
        name: "read",
        arguments: { path: "a.md" },
        thoughtSignature: "ts-3",
        namespace: "files",
      },
    },
    { type: "toolcall_start", contentIndex: 4, id: "call_b", toolName: "read" },
    { type: "toolcall_delta", contentIndex: 4, delta: '{"pa' },
    {
      type: "toolcall_end",
      contentIndex: 4,
      toolCall: {
        type: "toolCall",
        id: "call_b",
        name: "read",
        arguments: {},
        argumentsError: 'not a JSON object: {"pa',
      },
    },
    {
      type: "done",
      reason: "toolUse",
      usage: gatewayUsage,
      responseId: "resp_1",
      responseModel: "gw-1-2026-05-01",
      providerThinkingLevel: "high",
      rewrite: {
        policyId: "trim",
        policyVersion: 3,
        changed: true,
        tokenCountChange: -120,
        messageCountChange: -1,
        systemPromptChanged: false,
      },
    },
  ]),
);
await viaGateway(
  "pi-messages error event",
  200,
  sse([
    { type: "start" },
    { type: "text_start", contentIndex: 0 },
    { type: "text_delta", contentIndex: 0, delta: "Part" },
    { type: "error", reason: "error", usage: gatewayUsage, errorMessage: "upstream reset", responseId: "resp_2" },
  ]),
);
await viaGateway("pi-messages HTTP failure", 503, JSON.stringify({ error: { message: "overloaded", code: "busy" } }));

// --- by hand: fields no code of pi-ai 1.6 sets on this path, placed as providers add them -------

add(
  "deferred with every handle field",
  fauxAssistantMessage([], {
    stopReason: "deferred",
    deferred: {
      provider: "faux",
      modelId: "faux-1",
      api: "faux",
      id: "batch_1:row_7",
      expiresAt: 1767225600000,
      pollAfterMs: 5000,
      data: { batch: "batch_1", row: 7, parts: [1, "two", null, true, 0.25] },
    },
    timestamp: 1767225500000,
  }),
);
add(
  "deferred with the required handle fields",
  fauxAssistantMessage([], {
    stopReason: "deferred",
    deferred: { provider: "faux", modelId: "faux-1", api: "faux", id: "resp_9" },
    timestamp: 1767225500001,
  }),
);
const cut = fauxAssistantMessage("Cut sh", { stopReason: "length", timestamp: 1767225500002 });
Object.assign(cut, { responseId: "resp_3", rawStopReason: "max_tokens", endTurn: false });
appendAssistantMessageDiagnostic(
  cut,
  createAssistantMessageDiagnostic("retry", Object.assign(new Error("rate limited"), { code: 429 }), { attempt: 2 }),
);
appendAssistantMessageDiagnostic(cut, createAssistantMessageDiagnostic("thrown_value", "boom"));
add("length with raw stop reason, end turn and diagnostics", cut);

const toolResult = /** @type {ToolResultMessage} */ (
  agent.state.messages.find((message) => message.role === "toolResult" && message.usage)
);
const { isError, durationMs, timestamp, ...head } = toolResult;
add("toolResult with nested calls", {
  ...head,
  nestedCalls: {
    calls: [
      { id: "n1", name: "ls", arguments: { path: "." }, status: "ok", durationMs: 3 },
      { id: "n2", name: "read", argumentsBytes: 2000000, status: "error", durationMs: 1, error: "arguments too large" },
      { id: "n3", name: "grep", arguments: {}, status: "unfinished" },
    ],
    complete: false,
  },
  isError,
  durationMs,
  timestamp,
});

for (const sample of samples) process.stdout.write(`${JSON.stringify(sample)}\n`);

// --- the fields pi-ai declares for each object type a message holds ------------------------------

const dist = new URL(".", import.meta.resolve("@earendil-works/pi-ai"));
const declarations = ["types.d.ts", "utils/diagnostics.d.ts"]
  .map((file) => readFileSync(new URL(file, dist), "utf8"))
  .join("\n")
  .replace(/\/\*[\s\S]*?\*\//g, "")
  .replace(/\/\/[^\n]*/g, "");
const TYPES = [
  "SystemMessage",
  "UserMessage",
  "AssistantMessage",
  "ToolResultMessage",
  "TextContent",
  "ThinkingContent",
  "ImageContent",
  "ToolCall",
  "Usage",
  "DeferredHandle",
  "AssistantMessageDiagnostic",
  "DiagnosticErrorInfo",
  "NestedToolCalls",
  "NestedToolCallRecord",
  "Tool",
  "ToolReference",
  "ConstrainedSamplingConfig",
];

// The text from the brace at `open` to its match.
function braced(text, open) {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === "{") depth++;
    else if (text[i] === "}" && --depth === 0) return text.slice(open + 1, i);
  }
  throw new Error(`unbalanced braces after ${text.slice(open, open + 40)}`);
}

// The members of an object type's body: name -> field names, nested object types as `name.field`.
function members(body, prefix, out) {
  let depth = 0;
  let start = 0;
  const parts = [];
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if ("{([".includes(c)) depth++;
    else if ("})]".includes(c)) depth--;
    else if (c === ";" && depth === 0) {
      parts.push(body.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(body.slice(start));
  const fields = (out[prefix] ??= []);
  for (const part of parts) {
    const member = part.trim().match(/^(?:readonly\s+)?([A-Za-z_$][\w$]*)\??\s*:\s*([\s\S]*)$/);
    if (!member) continue; // an index signature, or nothing
    if (!fields.includes(member[1])) fields.push(member[1]);
    if (member[2].startsWith("{")) members(braced(member[2], 0), `${prefix}.${member[1]}`, out);
  }
}

const declared = {};
for (const name of TYPES) {
  const at = declarations.search(new RegExp(`export (?:interface|type) ${name}\\b`));
  if (at < 0) throw new Error(`pi-ai no longer declares ${name}`);
  // An interface, a type of one object, or a union of objects: each object's fields count.
  let open = declarations.indexOf("{", at);
  for (;;) {
    const body = braced(declarations, open);
    members(body, name, declared);
    const after = open + body.length + 2;
    const next = declarations.slice(after).match(/^\s*\|\s*\{/);
    if (!next) break;
    open = after + next[0].length - 1;
  }
}
process.stdout.write(`${JSON.stringify({ declared })}\n`);
