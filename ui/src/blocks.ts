/**
 * Content blocks as elements: text, thinking (redacted marked), tool calls with their arguments,
 * images from their data. An assistant message's blocks are kept by index, so a message that
 * grows event by event updates only what changed.
 */

import type {
  AssistantContent,
  AssistantMessage,
  ImageContent,
  ThinkingContent,
  ToolCall,
  ToolResultContent,
  UserContent,
} from "../../typescript/src/index.ts";
import { h } from "./dom.ts";
import { toBase64 } from "./node/buffer.ts";

/** A text block; an assistant's is marked `assistant-text`. */
export function textBlock(text: string, testId = "text"): HTMLElement {
  return h("div", { class: "block text", "data-block": "text", "data-testid": testId }, text);
}

/** An image block, shown from its data. */
export function imageBlock(image: ImageContent): HTMLElement {
  const source = `data:${image.mimeType};base64,${toBase64(image.data)}`;
  const size = `${image.mimeType}, ${image.data.length.toLocaleString("en")} bytes`;
  return h(
    "figure",
    { class: "block image", "data-block": "image", "data-testid": "image" },
    h("img", { src: source, alt: `an image (${size})` }),
    h("figcaption", {}, size),
  );
}

/** The blocks of a user message, a tool result or a custom message: text and images. */
export function mediaBlocks(content: readonly (UserContent | ToolResultContent)[]): HTMLElement[] {
  return content.map((item) => {
    const block = item.block;
    if (block.case === "text") return textBlock(block.value.text);
    if (block.case === "image") return imageBlock(block.value);
    return h("div", { class: "block unknown" }, "(an empty block)");
  });
}

/** An element that shows one assistant block, updated in place as the block grows. */
interface BlockView {
  readonly kind: AssistantContent["block"]["case"];
  readonly element: HTMLElement;
  update(content: AssistantContent): void;
}

function textView(): BlockView {
  const element = textBlock("", "assistant-text");
  return {
    kind: "text",
    element,
    update(content) {
      if (content.block.case !== "text") return;
      setText(element, content.block.value.text);
    },
  };
}

function thinkingView(): BlockView {
  const label = h("summary", {}, "Thinking");
  const body = h("div", { class: "thinking-text" });
  const element = h(
    "details",
    { class: "block thinking", "data-block": "thinking", "data-testid": "thinking", open: true },
    label,
    body,
  );
  return {
    kind: "thinking",
    element,
    update(content) {
      if (content.block.case !== "thinking") return;
      const thinking: ThinkingContent = content.block.value;
      const redacted = thinking.redacted === true;
      element.classList.toggle("redacted", redacted);
      element.dataset.block = redacted ? "redacted-thinking" : "thinking";
      setText(label, redacted ? "Thinking (redacted by the provider)" : "Thinking");
      setText(body, redacted && thinking.thinking === "" ? "[redacted]" : thinking.thinking);
    },
  };
}

function toolCallView(): BlockView {
  const name = h("span", { class: "tool-name", "data-testid": "tool-call-name" });
  const id = h("span", { class: "tool-id" });
  const args = h("pre", { class: "tool-arguments", "data-testid": "tool-call-arguments" });
  const problem = h("p", { class: "tool-problem", hidden: true });
  const element = h(
    "div",
    { class: "block tool-call", "data-block": "tool-call", "data-testid": "tool-call" },
    h("div", { class: "tool-head" }, "Tool call ", name, " ", id),
    args,
    problem,
  );
  return {
    kind: "toolCall",
    element,
    update(content) {
      if (content.block.case !== "toolCall") return;
      const call: ToolCall = content.block.value;
      setText(name, call.namespace ? `${call.namespace}.${call.name}` : call.name);
      setText(id, call.id);
      setText(args, call.argumentsJson ?? call.rawArguments ?? "");
      const trouble = call.argumentsError ?? "";
      problem.hidden = trouble === "";
      setText(problem, trouble);
    },
  };
}

const VIEWS: Record<NonNullable<AssistantContent["block"]["case"]>, () => BlockView> = {
  text: textView,
  thinking: thinkingView,
  toolCall: toolCallView,
};

/** The blocks of an assistant message, as they stand after the latest event. */
export class AssistantBlocks {
  readonly element = h("div", { class: "blocks" });
  private readonly views: BlockView[] = [];

  /** Show `message`'s blocks: new ones are added, changed ones updated. */
  update(message: AssistantMessage): void {
    message.content.forEach((content, index) => {
      let view = this.views[index];
      if (view === undefined || view.kind !== content.block.case) {
        const make = content.block.case === undefined ? undefined : VIEWS[content.block.case];
        if (make === undefined) return;
        const made = make();
        if (view === undefined) this.element.append(made.element);
        else view.element.replaceWith(made.element);
        this.views[index] = made;
        view = made;
      }
      view.update(content);
    });
  }
}

/** Set an element's text only when it changed (a growing block rewrites one node, not the page). */
function setText(element: HTMLElement, text: string): void {
  if (element.textContent !== text) element.textContent = text;
}
