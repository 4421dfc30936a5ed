/**
 * The entries of a transcript as the viewer shows them: a message as a message, any other entry
 * of a pi session (a model or thinking-level change, a compaction or branch summary, a label, a
 * custom entry...) as a note in the conversation; and each entry in a line, for the session tree.
 */

import {
  type ContentBlock,
  type SessionEntry,
  StopReason,
  type TranscriptEntry,
  textOf,
} from "../../typescript/src/index.ts";
import { imageBlock, mediaBlocks, textBlock } from "./blocks.ts";
import { h } from "./dom.ts";
import { tokens, usageText } from "./format.ts";
import { messageElement, prettyJson } from "./message-view.ts";

const SUMMARY_CHARACTERS = 90;

/** An entry's kind (a message's role, or the session entry's type) and what it says, in a line. */
export function entrySummary(entry: TranscriptEntry): { kind: string; text: string } {
  const body = entry.entry;
  if (body.case === "message") {
    const role = body.value.role;
    switch (role.case) {
      case "user":
        return { kind: "user", text: line(textOf(role.value)) };
      case "assistant": {
        const calls = role.value.content.flatMap((item) =>
          item.block.case === "toolCall" ? [item.block.value.name] : [],
        );
        const said = line(textOf(role.value));
        const reason = StopReason[role.value.stopReason] ?? "";
        const what = [said, calls.length > 0 ? `calls ${calls.join(", ")}` : ""].filter(Boolean).join(" · ");
        return { kind: "assistant", text: `${what || "(no text)"} [${reason}]` };
      }
      case "toolResult":
        return {
          kind: "toolResult",
          text: `${role.value.toolName ?? role.value.toolCallId}${role.value.isError ? " (error)" : ""}: ${line(textOf(role.value))}`,
        };
      case "system":
        return { kind: "system", text: "system prompt and tools" };
      case "custom":
        return { kind: role.value.role, text: line(role.value.fieldsJson) };
    }
    return { kind: "message", text: "" };
  }
  if (body.case === "sessionEntry") return sessionSummary(body.value);
  if (body.case === "unparsedLine") return { kind: "unparsed line", text: line(body.value) };
  return { kind: "entry", text: "" };
}

/** A session entry's type and what it says, in a line. */
export function sessionSummary(entry: SessionEntry): { kind: string; text: string } {
  return { kind: entry.type, text: line(sessionText(entry)) };
}

/**
 * The class of each kind of session entry the schema knows. An entry's `type` is the file's own
 * text, which could name the page's classes (`message user`) and dress a note as a message: it is
 * shown as text and kept in `data-kind`, never made a class.
 */
const NOTE_CLASSES: Record<NonNullable<SessionEntry["body"]["case"]>, string> = {
  header: "note-header",
  thinkingLevelChange: "note-thinking-level-change",
  modelChange: "note-model-change",
  usage: "note-usage",
  compaction: "note-compaction",
  branchSummary: "note-branch-summary",
  custom: "note-custom",
  customMessage: "note-custom-message",
  label: "note-label",
  sessionInfo: "note-session-info",
  contextEdit: "note-context-edit",
};

/** The class of an entry's kind in the session tree: one of a fixed few, whatever the file says. */
export function entryKindClass(entry: TranscriptEntry): string {
  const body = entry.entry;
  if (body.case === "sessionEntry") return "kind-session-entry";
  if (body.case !== "message") return "kind-other";
  switch (body.value.role.case) {
    case "user":
      return "kind-user";
    case "assistant":
      return "kind-assistant";
    case "toolResult":
      return "kind-toolResult";
    case "system":
      return "kind-system";
    case "custom":
      return "kind-custom";
  }
  return "kind-other";
}

function sessionText(entry: SessionEntry): string {
  const body = entry.body;
  switch (body.case) {
    case "header":
      return `session, version ${body.value.version ?? "?"}${body.value.cwd ? ` in ${body.value.cwd}` : ""}`;
    case "modelChange":
      return `model ${body.value.provider ?? "?"}/${body.value.modelId ?? "?"}`;
    case "thinkingLevelChange":
      return `thinking level ${body.value.thinkingLevel ?? "?"}`;
    case "compaction":
      return `compaction (${tokens(body.value.tokensBefore)} tokens before): ${body.value.summary ?? ""}`;
    case "branchSummary":
      return `branch summary of ${body.value.fromId ?? "?"}: ${body.value.summary ?? ""}`;
    case "label":
      return `label "${body.value.label ?? ""}" on ${body.value.targetId ?? "?"}`;
    case "sessionInfo":
      return `session name: ${body.value.name ?? ""}`;
    case "custom":
      return `${body.value.customType ?? "custom"}: ${body.value.dataJson}`;
    case "customMessage": {
      const text = body.value.content.flatMap((item) => (item.block.case === "text" ? [item.block.value.text] : []));
      return `${body.value.customType ?? "custom message"}: ${text.join(" ")}`;
    }
    case "contextEdit":
      return `context edit of ${body.value.targetId ?? "?"}`;
    case "usage":
      return `usage ${body.value.kind ?? ""} ${body.value.provider ?? ""}/${body.value.model ?? ""}`;
  }
  return entry.fieldsJson;
}

/** The first line of `text`, cut short. */
function line(text: string): string {
  const first = text.trim().split("\n", 1)[0] ?? "";
  return first.length > SUMMARY_CHARACTERS ? `${first.slice(0, SUMMARY_CHARACTERS - 1)}…` : first;
}

/** An entry in the conversation: a message, or a note of a session entry. */
export function entryElement(entry: TranscriptEntry): HTMLElement {
  const body = entry.entry;
  let element: HTMLElement;
  if (body.case === "message") {
    element = messageElement(body.value);
    element.dataset.testid = "viewer-message";
  } else if (body.case === "sessionEntry") {
    element = noteElement(body.value);
  } else if (body.case === "unparsedLine") {
    element = unparsedElement(body.value);
  } else {
    element = h("aside", { class: "entry-note" }, "(an empty entry)");
  }
  if (entry.id !== undefined) element.dataset.entryId = entry.id;
  if (entry.timestamp !== undefined) element.title = entry.timestamp;
  return element;
}

/** A line of the file that is not one JSON entry: shown as it is, as it is kept. */
function unparsedElement(text: string): HTMLElement {
  const head = h("span", { class: "note-kind" }, "unparsed line");
  return h(
    "aside",
    { class: "entry-note note-other", "data-testid": "viewer-entry", "data-kind": "unparsed_line" },
    h("details", {}, h("summary", {}, head, " not one JSON entry, kept as it is"), h("pre", { class: "json" }, text)),
  );
}

function noteElement(entry: SessionEntry): HTMLElement {
  const { kind, text } = sessionSummary(entry);
  const details = noteDetails(entry);
  const head = h("span", { class: "note-kind" }, kind.replaceAll("_", " "));
  return h(
    "aside",
    {
      class: `entry-note ${entry.body.case === undefined ? "note-other" : NOTE_CLASSES[entry.body.case]}`,
      "data-testid": "viewer-entry",
      "data-kind": kind,
    },
    details.length > 0
      ? h("details", {}, h("summary", {}, head, " ", text), ...details)
      : h("div", {}, head, " ", text),
  );
}

/** What a note shows when opened: a summary's text, a custom entry's data, a custom message's blocks. */
function noteDetails(entry: SessionEntry): HTMLElement[] {
  const body = entry.body;
  switch (body.case) {
    case "compaction": {
      const parts = [textBlock(body.value.summary ?? "")];
      if (body.value.firstKeptEntryId)
        parts.push(h("p", { class: "note" }, `kept from ${body.value.firstKeptEntryId} on`));
      if (body.value.usage) parts.push(h("p", { class: "usage" }, usageText(body.value.usage)));
      if (body.value.detailsJson) parts.push(h("pre", { class: "json" }, prettyJson(body.value.detailsJson)));
      return parts;
    }
    case "branchSummary": {
      const parts = [textBlock(body.value.summary ?? "")];
      if (body.value.detailsJson) parts.push(h("pre", { class: "json" }, prettyJson(body.value.detailsJson)));
      return parts;
    }
    case "custom":
      return body.value.dataJson ? [h("pre", { class: "json" }, prettyJson(body.value.dataJson))] : [];
    case "customMessage": {
      const parts = mediaBlocks(body.value.content);
      if (body.value.detailsJson) parts.push(h("pre", { class: "json" }, prettyJson(body.value.detailsJson)));
      return parts;
    }
    case "contextEdit":
      return (body.value.replacement?.content ?? []).map(contentBlock);
    case undefined:
      return entry.fieldsJson ? [h("pre", { class: "json" }, prettyJson(entry.fieldsJson))] : [];
    default:
      return [];
  }
}

function contentBlock(content: ContentBlock): HTMLElement {
  const block = content.block;
  switch (block.case) {
    case "text":
      return textBlock(block.value.text);
    case "image":
      return imageBlock(block.value);
    case "thinking":
      return h("div", { class: "block thinking", "data-block": "thinking" }, block.value.thinking);
    case "toolCall":
      return h(
        "pre",
        { class: "block tool-call", "data-block": "tool-call" },
        `${block.value.name} ${block.value.argumentsJson ?? ""}`,
      );
  }
  return h("div", { class: "block unknown" }, "(an empty block)");
}
