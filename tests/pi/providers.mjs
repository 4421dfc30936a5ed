// Runs pi-ai's own provider code for one API over a batch of calls, all at once, and prints one
// JSON line per event each call streams and one with each call's final message.
// tests/providers/test_differential.py compares them with what our providers make of the same
// recorded streams.
//
//   node providers.mjs < '{"api": "anthropic-messages",
//                          "jobs": [{"name": "...", "model": {...}, "context": {...}, "options": {...}}]}'
//
// Each job is a streamSimple call of the API module (dist/api/<api>.js), with a pi Model whose
// baseUrl is the job's own replay server, and the context normalized first, as pi's Models
// registry does before it calls a provider (the prompt and tools become a leading system
// message). Printed: {"job", "event"} for each event, without the partial message it carries,
// then {"job", "message"}: the message of `done` or `error`.
import { normalizeContext } from "@earendil-works/pi-ai";
/** @import { AssistantMessage, AssistantMessageEvent, Context, Model, SimpleStreamOptions } from "@earendil-works/pi-ai" */
/** @import { AssistantMessageEventStream } from "@earendil-works/pi-ai" */

/**
 * @typedef {object} Job
 * @property {string} name
 * @property {Model<string>} model
 * @property {Context} context
 * @property {SimpleStreamOptions} options
 */

/** @typedef {(model: Model<string>, context: Context, options?: SimpleStreamOptions) => AssistantMessageEventStream} StreamSimple */

const print = (line) => process.stdout.write(`${JSON.stringify(line)}\n`);

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

/** What an event says besides the partial message (and the final one, printed on its own line). */
function bare(event) {
  const { partial: _partial, message: _message, error: _error, ...rest } = /** @type {any} */ (event);
  return rest;
}

/**
 * @param {StreamSimple} streamSimple
 * @param {Job} job
 */
async function run(streamSimple, job) {
  /** @type {AssistantMessage | undefined} */
  let final;
  try {
    for await (const event of streamSimple(job.model, normalizeContext(job.context), job.options)) {
      print({ job: job.name, event: bare(event) });
      if (event.type === "done") final = event.message;
      else if (event.type === "error") final = event.error;
    }
  } catch (error) {
    // streamSimple throws before it streams when the options cannot be called with (no key).
    print({ job: job.name, thrown: String(error) });
    return;
  }
  print({ job: job.name, message: final ?? null });
}

const { api, jobs } = await readStdin();
/** @type {{ streamSimple: StreamSimple }} */
const module = await import(`@earendil-works/pi-ai/api/${api}`);
await Promise.all(jobs.map((/** @type {Job} */ job) => run(module.streamSimple, job)));
