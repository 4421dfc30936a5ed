/**
 * The playground: a conversation with the chosen model, turn by turn. Send streams the model's
 * answer to the context so far (the user's messages, the assistant's final messages and the tool
 * results), rendered as its events arrive; Abort cancels the stream, which then ends ABORTED.
 * When the assistant stops with TOOL_USE, the user types each call's result and continues.
 */

import { create } from "@bufbuild/protobuf";
import {
  type AgentMessage,
  AgentMessageSchema,
  type AssistantMessage,
  type ModelCallStream,
  StopReason,
  type ToolCall,
} from "../../typescript/src/index.ts";
import * as api from "./api.ts";
import { type AuthPanel, isUnauthenticated } from "./auth.ts";
import { byTestId, h } from "./dom.ts";
import type { EventsPanel } from "./events-panel.ts";
import { FormError, type GenerationForm } from "./generation-form.ts";
import { AssistantView, messageElement } from "./message-view.ts";
import type { ModelPicker } from "./model-picker.ts";

/** A message of text, from the user. */
function userMessage(text: string): AgentMessage {
  const content = [{ block: { case: "text" as const, value: { text } } }];
  return create(AgentMessageSchema, { role: { case: "user", value: { content, timestamp: BigInt(Date.now()) } } });
}

/** The user's result of one tool call. */
function toolResult(call: ToolCall, text: string, isError: boolean): AgentMessage {
  const content = [{ block: { case: "text" as const, value: { text } } }];
  const value = { toolCallId: call.id, toolName: call.name, content, isError, timestamp: BigInt(Date.now()) };
  return create(AgentMessageSchema, { role: { case: "toolResult", value } });
}

function toolCalls(message: AssistantMessage): ToolCall[] {
  return message.content.flatMap((content) => (content.block.case === "toolCall" ? [content.block.value] : []));
}

export class Playground {
  private readonly conversation = byTestId("conversation", HTMLElement);
  private readonly input = byTestId("message-input", HTMLTextAreaElement);
  private readonly sendButton = byTestId("send", HTMLButtonElement);
  private readonly abortButton = byTestId("abort", HTMLButtonElement);
  private readonly results = byTestId("tool-results", HTMLElement);
  private readonly status = byTestId("playground-status", HTMLElement);
  /** The context so far: what the next call sends. */
  private messages: AgentMessage[] = [];
  private running: ModelCallStream | undefined;
  private pending: ToolCall[] = [];

  constructor(
    private readonly picker: ModelPicker,
    private readonly form: GenerationForm,
    private readonly events: EventsPanel,
    private readonly auth: AuthPanel,
  ) {
    byTestId("composer", HTMLFormElement).addEventListener("submit", (event) => {
      event.preventDefault();
      void this.send();
    });
    this.abortButton.addEventListener("click", () => this.abort());
    byTestId("reset", HTMLButtonElement).addEventListener("click", () => this.reset());
    this.input.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        void (this.pending.length > 0 ? this.continueWithResults() : this.send());
      }
    });
    byTestId("playground", HTMLElement).addEventListener("keydown", (event) => {
      if (event.key === "Escape" && this.running !== undefined) this.abort();
    });
    this.showState();
  }

  /** Send the typed message and stream the answer. */
  async send(): Promise<void> {
    if (this.running !== undefined || this.pending.length > 0) return;
    const text = this.input.value;
    if (text.trim() === "") {
      this.say("Type a message first.");
      return;
    }
    const message = userMessage(text);
    if (!this.ready()) return;
    this.input.value = "";
    this.add(message);
    await this.run();
  }

  /** Add the typed tool results to the context and stream the next answer. */
  async continueWithResults(): Promise<void> {
    if (this.running !== undefined || this.pending.length === 0 || !this.ready()) return;
    const answers = [...this.results.querySelectorAll<HTMLElement>("[data-tool-call-index]")];
    const results = this.pending.map((call, index) => {
      const answer = answers[index]!;
      const text = byTestId("tool-result-input", HTMLTextAreaElement, answer).value;
      const isError = byTestId("tool-result-error", HTMLInputElement, answer).checked;
      return toolResult(call, text, isError);
    });
    this.pending = [];
    this.results.replaceChildren();
    for (const result of results) this.add(result);
    await this.run();
  }

  /** Cancel the running stream: it ends ABORTED. */
  abort(): void {
    this.running?.cancel();
  }

  /** Start a new conversation. */
  reset(): void {
    this.abort();
    this.messages = [];
    this.pending = [];
    this.conversation.replaceChildren();
    this.results.replaceChildren();
    this.events.clear();
    this.say("");
    this.showState();
  }

  /** Whether the options can be sent; if not, the form's complaint is shown. */
  private ready(): boolean {
    try {
      this.form.generation();
      this.form.tools();
    } catch (error) {
      if (!(error instanceof FormError)) throw error;
      this.say(error.message);
      return false;
    }
    this.say("");
    return true;
  }

  private add(message: AgentMessage): void {
    this.messages.push(message);
    this.show(messageElement(message));
  }

  private async run(): Promise<void> {
    const choice = this.picker.choice();
    const context = { systemPrompt: this.form.system(), messages: [...this.messages], tools: this.form.tools() };
    const stream = api.stream(context, {
      provider: choice.provider,
      model: choice.id,
      generation: this.form.generation(),
    });
    this.running = stream;
    this.showState();
    this.events.clear();
    const view = new AssistantView();
    this.show(view.element);
    for await (const event of stream) {
      this.events.add(event);
      view.update(event.partial ?? stream.partial);
      this.follow();
    }
    const message = await stream.result();
    const failure = stream.failure;
    view.finish(message, choice.model, failure);
    this.running = undefined;
    if (failure?.kind === "status" && isUnauthenticated(failure.statusCode)) this.auth.refused(failure.detail);
    if (message.stopReason === StopReason.ERROR || message.stopReason === StopReason.ABORTED) {
      // A failed answer is shown, not sent again: the next message goes after the last good turn.
      view.element.append(h("p", { class: "note" }, "This answer stays out of the context of the next call."));
    } else {
      this.messages.push(create(AgentMessageSchema, { role: { case: "assistant", value: message } }));
    }
    if (message.stopReason === StopReason.TOOL_USE) this.askForResults(toolCalls(message));
    this.follow();
    this.showState();
    (this.pending.length > 0 ? this.results.querySelector("textarea") : this.input)?.focus();
  }

  /** A result field (text, and whether it is an error) for each call, and Continue. */
  private askForResults(calls: ToolCall[]): void {
    this.pending = calls;
    const fields = calls.map((call, index) =>
      h(
        "fieldset",
        { class: "tool-result-form", "data-tool-call-index": String(index) },
        h("legend", {}, `Result of ${call.name} `, h("span", { class: "tool-id" }, call.id)),
        h("pre", { class: "tool-arguments" }, call.argumentsJson ?? call.rawArguments ?? ""),
        h(
          "label",
          { class: "stacked" },
          "Result text",
          h("textarea", {
            rows: "3",
            "data-testid": "tool-result-input",
            "aria-label": `result of ${call.name} ${call.id}`,
          }),
        ),
        h(
          "label",
          { class: "inline" },
          h("input", { type: "checkbox", "data-testid": "tool-result-error" }),
          " is an error",
        ),
      ),
    );
    const go = h(
      "button",
      { type: "button", class: "primary", "data-testid": "continue" },
      "Continue with the results",
    );
    go.addEventListener("click", () => void this.continueWithResults());
    this.results.replaceChildren(h("h3", {}, "Tool results"), ...fields, go);
  }

  private show(element: HTMLElement): void {
    this.conversation.append(element);
    this.conversation.scrollTop = this.conversation.scrollHeight;
  }

  /** Keep the newest text in view while the user has not scrolled up. */
  private follow(): void {
    const box = this.conversation;
    if (box.scrollHeight - box.scrollTop - box.clientHeight < 80) box.scrollTop = box.scrollHeight;
  }

  private say(text: string): void {
    this.status.textContent = text;
    this.status.hidden = text === "";
  }

  private showState(): void {
    const running = this.running !== undefined;
    this.sendButton.disabled = running || this.pending.length > 0;
    this.abortButton.disabled = !running;
    this.results.hidden = this.pending.length === 0;
  }
}
