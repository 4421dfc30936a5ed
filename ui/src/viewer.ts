/**
 * The transcript viewer: a file opened from the picker, dropped on the page or served at
 * /ui/file (`pi-proto view FILE`, with the page at #view), decoded in the page (nothing is
 * uploaded) and shown as a conversation with its session tree; saved back in any of the three
 * forms.
 */

import type { SessionWarning, TranscriptEntry } from "../../typescript/src/index.ts";
import { byTestId, download, h } from "./dom.ts";
import { entryElement, entryKindClass, entrySummary } from "./entry-view.ts";
import { dollars, tokens } from "./format.ts";
import { SessionTree, type TreeNode } from "./session-tree.ts";
import { decodeTranscript, encodeTranscript, FORMATS, type Format, formatOf } from "./transcript-codec.ts";

/** The path the server answers the file to view at, its name (percent-encoded) in `x-file-name`. */
export const SERVED_FILE = "/ui/file";

const MEDIA_TYPES: Record<Format, string> = {
  jsonl: "application/jsonl",
  binpb: "application/octet-stream",
  json: "application/json",
};

const WHOLE_FILE = "all";

interface Loaded {
  readonly name: string;
  readonly format: Format;
  readonly entries: TranscriptEntry[];
  readonly tree: SessionTree;
}

export class Viewer {
  private readonly status = byTestId("viewer-status", HTMLElement);
  private readonly title = byTestId("viewer-title", HTMLElement);
  private readonly header = byTestId("session-header", HTMLElement);
  private readonly branch = byTestId("branch-select", HTMLSelectElement);
  private readonly treeList = byTestId("session-tree", HTMLOListElement);
  private readonly conversation = byTestId("viewer-conversation", HTMLElement);
  private readonly totals = byTestId("viewer-totals", HTMLElement);
  private readonly rows = new Map<TreeNode, HTMLElement>();
  private loaded: Loaded | undefined;

  constructor() {
    const input = byTestId("file-input", HTMLInputElement);
    input.addEventListener("change", () => {
      const file = input.files?.[0];
      if (file !== undefined) void this.openFile(file);
    });
    this.branch.addEventListener("change", () => this.showBranch());
    for (const format of FORMATS) {
      byTestId(`save-${format}`, HTMLButtonElement).addEventListener("click", () => this.save(format));
    }
    this.enableSaves(false);
  }

  /** Open a file the user picked or dropped. */
  async openFile(file: File): Promise<void> {
    this.say(`reading ${file.name}…`);
    this.open(new Uint8Array(await file.arrayBuffer()), file.name);
  }

  /** Open the file the server offers at /ui/file. */
  async openServed(): Promise<void> {
    this.say("fetching the file to view…");
    let response: Response;
    try {
      response = await fetch(SERVED_FILE, { cache: "no-store" });
    } catch (error) {
      this.fail(`the file to view could not be fetched: ${error instanceof Error ? error.message : String(error)}`);
      return;
    }
    if (!response.ok) {
      this.fail(`the file to view could not be fetched: HTTP ${response.status} ${(await response.text()).trim()}`);
      return;
    }
    const named = response.headers.get("x-file-name");
    let name = "transcript";
    try {
      if (named) name = decodeURIComponent(named);
    } catch {
      name = named ?? name;
    }
    this.open(new Uint8Array(await response.arrayBuffer()), name);
  }

  /** Decode `bytes` (the form from `name`'s extension) and show them. */
  open(bytes: Uint8Array, name: string): void {
    const format = formatOf(name, bytes);
    let entries: TranscriptEntry[];
    const warnings: SessionWarning[] = [];
    try {
      entries = decodeTranscript(bytes, format, warnings);
    } catch (error) {
      this.fail(`${name}: ${error instanceof Error ? error.message : String(error)}`);
      return;
    }
    this.loaded = { name, format, entries, tree: new SessionTree(entries) };
    // Lines kept as they are, not understood: said, as a compiler names a line.
    this.say(warnings.map((warning) => `${name}:${warning.line}: ${warning.message}`).join("\n"));
    this.enableSaves(true);
    this.showFile();
  }

  private showFile(): void {
    const { name, format, entries, tree } = this.loaded!;
    this.title.textContent = `${name} · ${format} · ${entries.length} entr${entries.length === 1 ? "y" : "ies"}`;
    const header = tree.header;
    const body =
      header?.entry.case === "sessionEntry" && header.entry.value.body.case === "header"
        ? header.entry.value.body.value
        : undefined;
    this.header.hidden = body === undefined;
    if (body !== undefined) {
      const facts = [
        `session ${header!.id ?? ""}`,
        body.version !== undefined ? `version ${body.version}` : "",
        body.cwd ? `in ${body.cwd}` : "",
        header!.timestamp ? `started ${header!.timestamp}` : "",
        body.parentSession ? `forked from ${body.parentSession}` : "",
      ];
      this.header.textContent = facts.filter(Boolean).join(" · ");
    }
    this.showTree();
    const leaves = tree.leaves();
    const options = leaves.map((leaf, number) => {
      const { kind, text } = entrySummary(leaf.entry);
      return h(
        "option",
        { value: String(leaf.index) },
        `branch ${number + 1}: ends at ${leaf.entry.id ?? ""} (${kind}) ${text}`,
      );
    });
    options.push(h("option", { value: WHOLE_FILE }, "every entry, in file order"));
    this.branch.replaceChildren(...options);
    this.branch.disabled = !tree.branched;
    // The branch pi goes on with: the one that ends at the entry written last.
    const last = leaves.reduce<TreeNode | undefined>(
      (latest, leaf) => (latest && latest.index > leaf.index ? latest : leaf),
      undefined,
    );
    this.branch.value = last === undefined ? WHOLE_FILE : String(last.index);
    this.showBranch();
  }

  /** The session tree, indented where it branches: a branch point's continuations each one level in. */
  private showTree(): void {
    const { tree } = this.loaded!;
    this.rows.clear();
    const walk = (start: TreeNode, into: HTMLOListElement): void => {
      let node: TreeNode | undefined = start;
      while (node !== undefined) {
        into.append(this.row(node));
        if (node.children.length === 1) {
          node = node.children[0];
          continue;
        }
        for (const child of node.children) {
          const branch = h("ol", { class: "tree-branch" });
          into.append(h("li", { class: "tree-fork" }, branch));
          walk(child, branch);
        }
        node = undefined;
      }
    };
    this.treeList.replaceChildren();
    if (!tree.branched) {
      this.treeList.append(
        h("li", { class: "note" }, "No tree: the file's messages have no ids, and are one conversation."),
      );
      return;
    }
    if (tree.roots.length === 1) walk(tree.roots[0]!, this.treeList);
    for (const root of tree.roots.length > 1 ? tree.roots : []) {
      const branch = h("ol", { class: "tree-branch" });
      this.treeList.append(h("li", { class: "tree-fork" }, branch));
      walk(root, branch);
    }
  }

  private row(node: TreeNode): HTMLElement {
    const { tree } = this.loaded!;
    const { kind, text } = entrySummary(node.entry);
    const id = node.entry.id ?? "";
    const labels = (tree.labels.get(id) ?? []).map((label) => h("span", { class: "tag" }, label));
    const orphan = tree.orphans.has(id) ? h("span", { class: "tag warn" }, "parent not in the file") : null;
    const button = h(
      "button",
      {
        type: "button",
        class: "tree-entry-button",
        title: `${id}${node.entry.timestamp ? ` · ${node.entry.timestamp}` : ""}`,
      },
      h("span", { class: `tree-kind ${entryKindClass(node.entry)}` }, kind.replaceAll("_", " ")),
      " ",
      h("span", { class: "tree-text" }, text),
      ...labels,
      orphan,
    );
    button.addEventListener("click", () => {
      this.branch.value = String(tree.latestLeaf(node).index);
      this.showBranch();
      this.conversation.querySelector(`[data-entry-id="${CSS.escape(id)}"]`)?.scrollIntoView({ block: "nearest" });
    });
    const row = h(
      "li",
      { class: "tree-entry", "data-testid": "tree-entry", "data-entry-id": id, "data-kind": kind },
      button,
    );
    this.rows.set(node, row);
    return row;
  }

  /** Show the chosen branch (or every entry), mark it in the tree, and add up its usage. */
  private showBranch(): void {
    const { entries, tree } = this.loaded!;
    const leaf = tree.nodes.find((node) => String(node.index) === this.branch.value);
    const path = leaf === undefined ? undefined : new Set(tree.path(leaf));
    for (const [node, row] of this.rows) {
      row.classList.toggle("on-path", path?.has(node) === true);
      if (node === leaf) row.setAttribute("aria-current", "true");
      else row.removeAttribute("aria-current");
    }
    const shown =
      path === undefined ? entries.filter((entry) => entry !== tree.header) : [...path].map((node) => node.entry);
    this.conversation.replaceChildren(...shown.map(entryElement));
    this.totals.textContent = totalsText(shown);
  }

  private save(format: Format): void {
    const { name, entries } = this.loaded!;
    const stem = name.replace(/\.(jsonl|binpb|json)$/i, "");
    download(encodeTranscript(entries, format), `${stem}.${format}`, MEDIA_TYPES[format]);
  }

  private enableSaves(enabled: boolean): void {
    for (const format of FORMATS) byTestId(`save-${format}`, HTMLButtonElement).disabled = !enabled;
  }

  private say(text: string): void {
    this.status.textContent = text;
    this.status.classList.remove("error");
    this.status.hidden = text === "";
  }

  private fail(text: string): void {
    this.say(text);
    this.status.classList.add("error");
  }
}

/** The messages shown and what their assistant messages used and cost, added up. */
function totalsText(entries: readonly TranscriptEntry[]): string {
  let messages = 0;
  let answers = 0;
  const sum = { input: 0n, output: 0n, cacheRead: 0n, cacheWrite: 0n, totalTokens: 0n };
  let cost = 0;
  for (const entry of entries) {
    if (entry.entry.case !== "message") continue;
    messages += 1;
    const role = entry.entry.value.role;
    if (role.case !== "assistant") continue;
    answers += 1;
    const usage = role.value.usage;
    sum.input += usage?.input ?? 0n;
    sum.output += usage?.output ?? 0n;
    sum.cacheRead += usage?.cacheRead ?? 0n;
    sum.cacheWrite += usage?.cacheWrite ?? 0n;
    sum.totalTokens += usage?.totalTokens ?? 0n;
    cost += usage?.cost?.total ?? 0;
  }
  const counts = `input ${tokens(sum.input)} · output ${tokens(sum.output)} · cache read ${tokens(sum.cacheRead)} · cache write ${tokens(sum.cacheWrite)} · total ${tokens(sum.totalTokens)}`;
  return `Totals: ${messages} messages, ${answers} from the assistant · ${counts} · cost ${dollars(cost)}`;
}
