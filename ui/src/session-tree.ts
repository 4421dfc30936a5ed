/**
 * The tree of a pi session: each entry names the entry it continues (`parentId`, or `root`), so
 * the file holds branches; a branch is the path from a root to a leaf. The header (the `session`
 * line) is outside the tree, and so are bare messages, which have no id: a file of those is one
 * path, in file order.
 */

import type { TranscriptEntry } from "../../typescript/src/index.ts";

export interface TreeNode {
  readonly entry: TranscriptEntry;
  /** Where the entry is in the file. */
  readonly index: number;
  readonly children: TreeNode[];
  parent: TreeNode | undefined;
}

export class SessionTree {
  /** The entries that have a place in the tree, in file order. */
  readonly nodes: TreeNode[] = [];
  /** The entries that continue nothing (a root, or a parent the file lacks), in file order. */
  readonly roots: TreeNode[] = [];
  /** The session's header line, if the file has one. */
  readonly header: TranscriptEntry | undefined;
  /** The labels the file puts on each entry, by the entry's id. */
  readonly labels = new Map<string, string[]>();
  /** The ids of entries whose parent the file does not have. */
  readonly orphans = new Set<string>();

  constructor(readonly entries: readonly TranscriptEntry[]) {
    const byId = new Map<string, TreeNode>();
    let header: TranscriptEntry | undefined;
    entries.forEach((entry, index) => {
      const body = entry.entry;
      if (body.case === "sessionEntry" && body.value.body.case === "header") {
        header ??= entry;
        return;
      }
      if (body.case === "sessionEntry" && body.value.body.case === "label") {
        const label = body.value.body.value;
        if (label.targetId !== undefined && label.label !== undefined) {
          this.labels.set(label.targetId, [...(this.labels.get(label.targetId) ?? []), label.label]);
        }
      }
      if (entry.parent.case === undefined) return; // a bare message, or an entry outside the tree
      const node: TreeNode = { entry, index, children: [], parent: undefined };
      this.nodes.push(node);
      const parent = entry.parent.case === "parentId" ? byId.get(entry.parent.value) : undefined;
      if (parent === undefined) {
        if (entry.parent.case === "parentId") this.orphans.add(entry.id ?? "");
        this.roots.push(node);
      } else {
        node.parent = parent;
        parent.children.push(node);
      }
      if (entry.id !== undefined && !byId.has(entry.id)) byId.set(entry.id, node);
    });
    this.header = header;
  }

  /** Whether the file has a tree at all (entries with ids and parents), not just bare messages. */
  get branched(): boolean {
    return this.nodes.length > 0;
  }

  /** The entries no other entry continues, in file order: the ends of the branches. */
  leaves(): TreeNode[] {
    return this.nodes.filter((node) => node.children.length === 0);
  }

  /** The leaf a branch through `node` ends at: the one written last. */
  latestLeaf(node: TreeNode): TreeNode {
    let latest: TreeNode | undefined;
    const stack = [node];
    for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
      if (next.children.length === 0 && (latest === undefined || next.index > latest.index)) latest = next;
      stack.push(...next.children);
    }
    return latest!; // a parent comes before its children in the file, so every node has a leaf below it
  }

  /** The branch that ends at `leaf`: its entries from the root. */
  path(leaf: TreeNode): TreeNode[] {
    const path: TreeNode[] = [];
    for (let node: TreeNode | undefined = leaf; node !== undefined; node = node.parent) path.push(node);
    return path.reverse();
  }
}
