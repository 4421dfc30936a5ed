/**
 * Messages as the conversation shows them, in the playground and the viewer alike: who said it,
 * its blocks, and for an assistant message its stop reason, usage, cost and any error.
 */

import {
  type AgentMessage,
  type AssistantMessage,
  type Cost,
  type CustomMessage,
  calculateCost,
  type Model,
  StopReason,
  type StreamFailure,
  type SystemMessage,
  type ToolResultMessage,
  type UserMessage,
} from "../../typescript/src/index.ts";
import { AssistantBlocks, mediaBlocks, textBlock } from "./blocks.ts";
import { h } from "./dom.ts";
import { costText, stopReasonName, usageText } from "./format.ts";

/** How an assistant message's cost is found: computed at the model's rates, or the one it records. */
export type Rates = Model | undefined;

/** What the error of a stream that ended ERROR or ABORTED says: the status or rule behind it, and its message. */
export function errorText(message: AssistantMessage, failure?: StreamFailure): string {
  if (failure?.kind === "status") return `${failure.statusCode}: ${failure.detail}`;
  if (failure?.kind === "rule")
    return `stream rule ${failure.ruleId} broken at event ${failure.eventIndex}: ${failure.detail}`;
  const said = message.errorMessage ?? "";
  if (message.stopReason === StopReason.ABORTED) return said ? `aborted: ${said}` : "aborted";
  return said || "the model failed without saying why";
}

/** An assistant message: its blocks, growing while it streams, then how it ended. */
export class AssistantView {
  readonly element: HTMLElement;
  private readonly blocks = new AssistantBlocks();
  private readonly end = h("footer", { class: "message-end", hidden: true });
  private readonly model = h("span", { class: "who-model" });

  constructor() {
    this.element = h(
      "article",
      { class: "message assistant streaming", "data-role": "assistant", "data-testid": "assistant-message" },
      h("header", {}, h("span", { class: "who" }, "Assistant"), " ", this.model),
      this.blocks.element,
      this.end,
    );
  }

  /** Show the message as it stands. */
  update(message: AssistantMessage): void {
    const model = [message.provider, message.model].filter(Boolean).join(" / ");
    if (this.model.textContent !== model) this.model.textContent = model;
    this.blocks.update(message);
  }

  /**
   * Show the final message and how it ended: the stop reason, the usage, the cost (at `rates`
   * when given, as the package's calculateCost computes it, else the one the message records)
   * and, for ERROR and ABORTED, the error in words.
   */
  finish(message: AssistantMessage, rates: Rates, failure?: StreamFailure): void {
    this.update(message);
    const reason = stopReasonName(message.stopReason);
    const failed = message.stopReason === StopReason.ERROR || message.stopReason === StopReason.ABORTED;
    const cost: Cost | undefined =
      rates !== undefined && message.usage !== undefined ? calculateCost(rates, message.usage) : message.usage?.cost;
    this.element.classList.remove("streaming");
    this.element.classList.toggle("failed", failed);
    this.element.dataset.stopReason = reason;
    this.end.replaceChildren(
      h("span", { class: `stop-reason ${stopReasonClass(message.stopReason)}`, "data-testid": "stop-reason" }, reason),
      h("span", { class: "usage", "data-testid": "usage" }, usageText(message.usage)),
      h(
        "span",
        { class: "cost", "data-testid": "cost", title: rates ? "at the model's rates" : "as recorded" },
        costText(cost),
      ),
    );
    if (failed)
      this.end.append(h("p", { class: "error", "data-testid": "error", role: "alert" }, errorText(message, failure)));
    this.end.hidden = false;
  }
}

/** The class of a stop reason: `stop-<name>` for one the schema names, never a value of the file's own. */
function stopReasonClass(reason: StopReason): string {
  const name = StopReason[reason];
  return name === undefined ? "stop-other" : `stop-${name.toLowerCase()}`;
}

/** Any message of a conversation, finished; `rates` price an assistant message (else its recorded cost). */
export function messageElement(message: AgentMessage, rates?: Rates): HTMLElement {
  const role = message.role;
  switch (role.case) {
    case "user":
      return userElement(role.value);
    case "assistant": {
      const view = new AssistantView();
      view.finish(role.value, rates);
      return view.element;
    }
    case "toolResult":
      return toolResultElement(role.value);
    case "system":
      return systemElement(role.value);
    case "custom":
      return customElement(role.value);
  }
  return h("article", { class: "message" }, "(a message with no role)");
}

function userElement(message: UserMessage): HTMLElement {
  return h(
    "article",
    { class: "message user", "data-role": "user", "data-testid": "user-message" },
    h("header", {}, h("span", { class: "who" }, "User")),
    ...mediaBlocks(message.content),
  );
}

/** A tool result: the call it answers, its blocks, and whether it is an error. */
export function toolResultElement(message: ToolResultMessage): HTMLElement {
  const failed = message.isError === true;
  return h(
    "article",
    {
      class: `message tool-result${failed ? " failed" : ""}`,
      "data-role": "toolResult",
      "data-testid": "tool-result",
      "data-error": failed ? "true" : "false",
    },
    h(
      "header",
      {},
      h("span", { class: "who" }, "Tool result"),
      ` ${message.toolName ?? ""} `,
      h("span", { class: "tool-id" }, message.toolCallId),
      failed && h("span", { class: "badge error-badge", "data-testid": "tool-result-is-error" }, "error"),
    ),
    ...mediaBlocks(message.content),
    message.usage !== undefined &&
      h("footer", { class: "message-end" }, h("span", { class: "usage" }, usageText(message.usage))),
  );
}

function systemElement(message: SystemMessage): HTMLElement {
  const parts: HTMLElement[] = [];
  for (const block of message.content) parts.push(textBlock(block.text));
  for (const section of message.sections) {
    parts.push(
      h(
        "div",
        { class: "section" },
        h("strong", {}, section.name),
        h("div", { class: "block text" }, section.text ?? "(removed)"),
      ),
    );
  }
  const added = message.toolsAdded.map((tool) => tool.name);
  const removed = message.toolsRemoved.map((tool) => tool.name);
  if (added.length > 0) parts.push(h("p", { class: "note" }, `tools added: ${added.join(", ")}`));
  if (removed.length > 0) parts.push(h("p", { class: "note" }, `tools removed: ${removed.join(", ")}`));
  return h(
    "article",
    { class: "message system", "data-role": "system", "data-testid": "system-message" },
    h("details", {}, h("summary", {}, h("span", { class: "who" }, "System"), " prompt and tools"), ...parts),
  );
}

function customElement(message: CustomMessage): HTMLElement {
  return h(
    "article",
    // The role is the file's own text: shown, and kept apart from the roles the page gives its messages.
    {
      class: "message custom",
      "data-role": "custom",
      "data-custom-role": message.role,
      "data-testid": "custom-message",
    },
    h("header", {}, h("span", { class: "who" }, message.role), " (a message of the agent's own)"),
    h("pre", { class: "json" }, prettyJson(message.fieldsJson)),
  );
}

/** JSON text indented for reading; text that is no JSON as it is. */
export function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}
