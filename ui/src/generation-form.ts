/**
 * The options of a call, as pi has them: the reasoning level (ThinkingLevel), max tokens,
 * temperature and tool choice (auto, none, required or a named tool); the system prompt and the
 * tools of the context (pi-JSON), for tool calls to name.
 */

import type { MessageInitShape } from "@bufbuild/protobuf";
import {
  contextFromPi,
  type GenerationOptionsSchema,
  ThinkingLevel,
  type Tool,
  ToolChoiceMode,
} from "../../typescript/src/index.ts";
import { byTestId, h } from "./dom.ts";

type Generation = MessageInitShape<typeof GenerationOptionsSchema>;

/** A value of the form that cannot be sent, in words. */
export class FormError extends Error {
  override name = "FormError";
}

const LEVELS: [ThinkingLevel, string][] = [
  [ThinkingLevel.UNSPECIFIED, "off (the model's default)"],
  [ThinkingLevel.MINIMAL, "minimal"],
  [ThinkingLevel.LOW, "low"],
  [ThinkingLevel.MEDIUM, "medium"],
  [ThinkingLevel.HIGH, "high"],
  [ThinkingLevel.XHIGH, "xhigh"],
  [ThinkingLevel.MAX, "max"],
];

const CHOICES: [string, string][] = [
  ["", "the model's default"],
  [String(ToolChoiceMode.AUTO), "auto"],
  [String(ToolChoiceMode.NONE), "none"],
  [String(ToolChoiceMode.REQUIRED), "required"],
  [String(ToolChoiceMode.TOOL), "a named tool…"],
];

export class GenerationForm {
  private readonly reasoning = byTestId("reasoning", HTMLSelectElement);
  private readonly maxTokens = byTestId("max-tokens", HTMLInputElement);
  private readonly temperature = byTestId("temperature", HTMLInputElement);
  private readonly toolChoice = byTestId("tool-choice", HTMLSelectElement);
  private readonly toolName = byTestId("tool-choice-name", HTMLInputElement);
  private readonly systemPrompt = byTestId("system-prompt", HTMLTextAreaElement);
  private readonly toolsJson = byTestId("tools-json", HTMLTextAreaElement);

  constructor() {
    this.reasoning.replaceChildren(...LEVELS.map(([level, label]) => h("option", { value: String(level) }, label)));
    this.toolChoice.replaceChildren(...CHOICES.map(([mode, label]) => h("option", { value: mode }, label)));
    this.toolChoice.addEventListener("change", () => this.showToolName());
    this.showToolName();
  }

  /** The GenerationOptions the form says; FormError for a value that is no number. */
  generation(): Generation {
    const options: Generation = {};
    const level = Number(this.reasoning.value) as ThinkingLevel;
    if (level !== ThinkingLevel.UNSPECIFIED) options.reasoning = level;
    const maxTokens = this.maxTokens.value.trim();
    if (maxTokens !== "") {
      if (!/^\d+$/.test(maxTokens)) throw new FormError(`max tokens: expected a whole number, got ${maxTokens}`);
      options.maxTokens = BigInt(maxTokens);
    }
    const temperature = this.temperature.value.trim();
    if (temperature !== "") {
      const value = Number(temperature);
      if (!Number.isFinite(value)) throw new FormError(`temperature: expected a number, got ${temperature}`);
      options.temperature = value;
    }
    if (this.toolChoice.value !== "") {
      const mode = Number(this.toolChoice.value) as ToolChoiceMode;
      options.toolChoice = { mode, tool: mode === ToolChoiceMode.TOOL ? this.toolName.value.trim() : "" };
    }
    return options;
  }

  /** The system prompt, absent when empty. */
  system(): string | undefined {
    return this.systemPrompt.value === "" ? undefined : this.systemPrompt.value;
  }

  /** The tools of the context, read as pi's tools (name, description, parameters); FormError if they are not. */
  tools(): Tool[] {
    const text = this.toolsJson.value.trim();
    if (text === "") return [];
    try {
      return contextFromPi({ messages: [], tools: JSON.parse(text) }).tools;
    } catch (error) {
      throw new FormError(`tools: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  private showToolName(): void {
    const named = this.toolChoice.value === String(ToolChoiceMode.TOOL);
    this.toolName.hidden = !named;
    this.toolName.disabled = !named;
  }
}
