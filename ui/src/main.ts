/**
 * The page of `pi-proto serve`: the playground (with its events panel) and the transcript viewer,
 * as two tabs. At #view it opens the file the server offers (`pi-proto view FILE`) in the viewer.
 */

import { AuthPanel } from "./auth.ts";
import { byTestId } from "./dom.ts";
import { EventsPanel } from "./events-panel.ts";
import { GenerationForm } from "./generation-form.ts";
import { ModelPicker } from "./model-picker.ts";
import { Playground } from "./playground.ts";
import { Viewer } from "./viewer.ts";

type View = "playground" | "viewer";

const VIEWS: View[] = ["playground", "viewer"];

function start(): void {
  const picker = new ModelPicker((detail) => auth.refused(detail));
  const auth = new AuthPanel(() => void picker.load());
  new Playground(picker, new GenerationForm(), new EventsPanel(), auth);
  const viewer = new Viewer();
  let modelsAsked = false;

  const show = (view: View): void => {
    for (const name of VIEWS) {
      const selected = name === view;
      byTestId(`tab-${name}`, HTMLButtonElement).setAttribute("aria-selected", String(selected));
      byTestId(`tab-${name}`, HTMLButtonElement).tabIndex = selected ? 0 : -1;
      byTestId(name === "viewer" ? "viewer" : name, HTMLElement).hidden = !selected;
    }
    if (view === "playground" && !modelsAsked) {
      modelsAsked = true;
      void picker.load();
    }
  };
  for (const [index, view] of VIEWS.entries()) {
    const tab = byTestId(`tab-${view}`, HTMLButtonElement);
    tab.addEventListener("click", () => show(view));
    tab.addEventListener("keydown", (event) => {
      if (event.key !== "ArrowRight" && event.key !== "ArrowLeft") return;
      const next = VIEWS[(index + (event.key === "ArrowRight" ? 1 : VIEWS.length - 1)) % VIEWS.length]!;
      show(next);
      byTestId(`tab-${next}`, HTMLButtonElement).focus();
    });
  }

  // A file dropped anywhere on the page opens in the viewer.
  document.addEventListener("dragover", (event) => {
    if (!event.dataTransfer?.types.includes("Files")) return;
    event.preventDefault();
    document.body.classList.add("dropping");
  });
  document.addEventListener("dragleave", (event) => {
    if (event.relatedTarget === null) document.body.classList.remove("dropping");
  });
  document.addEventListener("drop", (event) => {
    document.body.classList.remove("dropping");
    const file = event.dataTransfer?.files[0];
    if (file === undefined) return;
    event.preventDefault();
    show("viewer");
    void viewer.openFile(file);
  });

  if (location.hash === "#view") {
    show("viewer");
    void viewer.openServed();
  } else {
    show("playground");
  }
}

start();
