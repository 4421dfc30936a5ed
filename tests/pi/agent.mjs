// Runs pi's own Agent (pi-agent-core) against a pi-proto server and prints, one JSON line each,
// every event the Agent's subscriber sees, every run of the `read` tool, and at the end the
// Agent's messages. tests/test_pi_oracle.py asserts on them.
//
//   node agent.mjs '{"via": "pi-messages" | "proxy", "url": "http://127.0.0.1:PORT", "token": "...",
//                    "model": "scripted-v1", "prompt": "...", "readme": "...", "abort": false}'
// For the proxy, "provider" and "api" name a model the server serves other than its scripted one.
//
// via "pi-messages": pi-ai's pi-messages API, reached the way pi reaches any provider: a Models
// collection holding a provider built by createProvider (as a models.json custom provider is).
// via "proxy": pi-agent-core's streamProxy, with the server as the proxy.
// abort: the Agent is aborted at the first streamed update.
import { Agent, streamProxy } from "@earendil-works/pi-agent-core";
import { createModels, createProvider, envApiKeyAuth } from "@earendil-works/pi-ai";
import { piMessagesApi } from "@earendil-works/pi-ai/api/pi-messages.lazy";
/** @import { AgentTool } from "@earendil-works/pi-agent-core" */
/** @import { Model } from "@earendil-works/pi-ai" */

const config = JSON.parse(process.argv[2]);
const print = (line) => process.stdout.write(`${JSON.stringify(line)}\n`);

const PROVIDER = "pi-proto";
/** @type {Model<string>} */
const model = {
  id: config.model,
  name: config.model,
  // The proxy forwards the whole model: the server's scripted one unless the config names another.
  api: config.via === "pi-messages" ? "pi-messages" : (config.api ?? "scripted"),
  provider: config.via === "pi-messages" ? PROVIDER : (config.provider ?? "scripted"),
  baseUrl: config.url,
  reasoning: false,
  input: ["text"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 128000,
  maxTokens: 4096,
};

function piMessagesStreamFn() {
  const models = createModels();
  models.setProvider(
    createProvider({
      id: PROVIDER,
      baseUrl: config.url,
      // The token comes from the Agent's getApiKey; no environment variable is read.
      auth: { apiKey: envApiKeyAuth("pi-proto token", []) },
      models: [model],
      api: piMessagesApi(),
    }),
  );
  return (m, context, options) => models.streamSimple(m, context, options);
}

function proxyStreamFn() {
  return (m, context, options) =>
    streamProxy(m, context, { ...options, proxyUrl: config.url, authToken: config.token });
}

/** @type {AgentTool} */
const read = {
  name: "read",
  label: "Read",
  description: "Read a file of the project.",
  parameters: {
    type: "object",
    properties: { path: { type: "string" } },
    required: ["path"],
    additionalProperties: false,
  },
  execute: async (toolCallId, params) => {
    print({ tool: { toolCallId, params } });
    return { content: [{ type: "text", text: config.readme }], details: {} };
  },
};

const agent = new Agent({
  initialState: { systemPrompt: "You are a helpful assistant.", model, tools: [read] },
  streamFn: config.via === "pi-messages" ? piMessagesStreamFn() : proxyStreamFn(),
  getApiKey: () => config.token,
});
agent.subscribe((event) => {
  if (event.type === "message_update") {
    // Not `partial`: it is the message the event already carries, whole.
    print({ event: { ...event, assistantMessageEvent: { ...event.assistantMessageEvent, partial: undefined } } });
    if (config.abort) agent.abort();
  } else {
    print({ event });
  }
});
await agent.prompt(config.prompt);
print({ messages: agent.state.messages, errorMessage: agent.state.errorMessage ?? null });
