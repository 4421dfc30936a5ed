/**
 * The model picker: the models of ListModels (name, provider, context window, rates), or any other
 * id typed in, which the server answers NOT_FOUND when it does not serve it.
 */

import type { Model } from "../../typescript/src/index.ts";
import { CallError } from "../../typescript/src/index.ts";
import * as api from "./api.ts";
import { isUnauthenticated } from "./auth.ts";
import { byTestId, h } from "./dom.ts";
import { modelText } from "./format.ts";

const OTHER = "other";

/** The model a call names, and its catalog entry when it is one of the server's. */
export interface Choice {
  provider: string;
  id: string;
  model: Model | undefined;
}

export class ModelPicker {
  private readonly select = byTestId("model-select", HTMLSelectElement);
  private readonly custom = byTestId("model-custom", HTMLInputElement);
  private readonly info = byTestId("model-info", HTMLElement);
  private listed: Model[] = [];
  /** Whether the user picked "another model id" (the picker falls back to it only while it lists none). */
  private otherPicked = false;

  /** `refused` runs with the server's words when ListModels is refused as UNAUTHENTICATED. */
  constructor(private readonly refused: (detail: string) => void) {
    this.select.addEventListener("change", () => {
      this.otherPicked = this.select.value === OTHER;
      this.showChoice();
    });
  }

  /** The models the picker offers, in the server's order. */
  get models(): readonly Model[] {
    return this.listed;
  }

  /** Ask the server for its models and offer them; a failure is shown in the picker. */
  async load(): Promise<void> {
    this.info.textContent = "loading the models…";
    this.info.classList.remove("error");
    try {
      this.listed = await api.models();
    } catch (error) {
      this.listed = [];
      const code = error instanceof CallError ? error.statusCode : "UNKNOWN";
      const detail = error instanceof CallError ? error.detail : String(error);
      this.offer();
      this.info.textContent = `The models could not be listed: ${code}: ${detail}`;
      this.info.classList.add("error");
      if (isUnauthenticated(code)) this.refused(detail);
      return;
    }
    this.offer();
  }

  /** The model chosen: one of the list, or the id typed in (the server's default when empty). */
  choice(): Choice {
    if (this.select.value === OTHER || this.listed.length === 0) {
      const id = this.custom.value.trim();
      return { provider: "", id, model: this.listed.find((model) => model.id === id) };
    }
    const model = this.listed[Number(this.select.value)]!;
    return { provider: model.provider, id: model.id, model };
  }

  private offer(): void {
    const kept = this.select.value;
    const options = this.listed.map((model, index) =>
      h("option", { value: String(index) }, `${model.name || model.id} (${model.provider})`),
    );
    options.push(h("option", { value: OTHER }, "another model id…"));
    this.select.replaceChildren(...options);
    if (this.listed.length === 0 || this.otherPicked) this.select.value = OTHER;
    else this.select.value = /^\d+$/.test(kept) && Number(kept) < this.listed.length ? kept : "0";
    this.showChoice();
  }

  private showChoice(): void {
    const other = this.select.value === OTHER || this.listed.length === 0;
    this.custom.hidden = !other;
    this.custom.disabled = !other;
    this.info.classList.remove("error");
    const chosen = this.choice().model;
    if (other) this.info.textContent = "Any model id: the server says whether it serves it.";
    else if (chosen !== undefined) this.info.textContent = `${chosen.id} · ${modelText(chosen)}`;
  }
}
