/** The events panel: the raw events of the live stream, one row each (seq, kind, block, what it says). */

import { eventKind, type ModelEvent } from "../../typescript/src/index.ts";
import { byTestId, h } from "./dom.ts";
import { stopReasonName } from "./format.ts";

const SHOWN_CHARACTERS = 120;

/** What an event says, in short: its delta, or a summary of the rest. */
export function eventSummary(event: ModelEvent): { index: string; text: string } {
  const body = event.event;
  switch (body.case) {
    case "start": {
      const header = body.value.header;
      const model = [header?.provider, header?.model].filter(Boolean).join("/");
      const id = body.value.streamId ? `stream ${body.value.streamId}` : "a stream the server does not keep";
      return { index: "", text: `${model || "model"} · ${id}` };
    }
    case "textStart":
    case "thinkingStart":
      return { index: String(body.value.contentIndex), text: "" };
    case "textDelta":
    case "thinkingDelta":
    case "toolcallDelta":
      return { index: String(body.value.contentIndex), text: short(JSON.stringify(body.value.delta)) };
    case "textEnd":
      return { index: String(body.value.contentIndex), text: body.value.textSignature ? "signed" : "" };
    case "thinkingEnd":
      return { index: String(body.value.contentIndex), text: body.value.redacted ? "redacted" : "" };
    case "toolcallStart":
      return { index: String(body.value.contentIndex), text: `${body.value.name} ${body.value.id}` };
    case "toolcallEnd": {
      const call = body.value.toolCall;
      return {
        index: String(body.value.contentIndex),
        text: short(`${call?.name ?? ""} ${call?.argumentsJson ?? ""}`),
      };
    }
    case "done":
    case "error": {
      const said = body.value.message?.errorMessage;
      return { index: "", text: short(stopReasonName(body.value.reason) + (said ? `: ${said}` : "")) };
    }
  }
  return { index: "", text: "" };
}

function short(text: string): string {
  return text.length > SHOWN_CHARACTERS ? `${text.slice(0, SHOWN_CHARACTERS - 1)}…` : text;
}

/** The panel the page declares (data-testid `events-panel`), filled one event at a time. */
export class EventsPanel {
  private readonly list: HTMLOListElement;
  private readonly count: HTMLElement;
  private rows = 0;

  constructor(root: ParentNode = document) {
    this.list = byTestId("events", HTMLOListElement, root);
    this.count = byTestId("events-count", HTMLElement, root);
  }

  /** Empty the panel for a new stream. */
  clear(): void {
    this.list.replaceChildren();
    this.rows = 0;
    this.count.textContent = "0";
  }

  /** Add one event's row. */
  add(event: ModelEvent): void {
    const { index, text } = eventSummary(event);
    const kind = eventKind(event);
    this.list.append(
      h(
        "li",
        { class: `event event-${kind}`, "data-testid": "event-row", "data-kind": kind },
        h("span", { class: "event-seq", title: "seq" }, event.seq > 0n ? String(event.seq) : "–"),
        h("span", { class: "event-kind" }, kind),
        h("span", { class: "event-index", title: "content index" }, index),
        h("span", { class: "event-text" }, text),
      ),
    );
    this.rows += 1;
    this.count.textContent = String(this.rows);
  }
}
