/** Building and finding elements: `h` makes one, `byTestId` finds one the page declares. */

export type Child = Node | string | null | undefined | false;

/** Attribute values: a string is set, `true` sets the attribute empty, `false` and undefined leave it out. */
export type Attributes = Record<string, string | boolean | undefined>;

/** A new `tag` element with `attributes` and `children` (strings become text). */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === true) element.setAttribute(name, "");
    else if (typeof value === "string") element.setAttribute(name, value);
  }
  element.append(
    ...children.filter((child): child is Node | string => child !== null && child !== undefined && child !== false),
  );
  return element;
}

/** The element of the page whose `data-testid` is `id`, of type `type`; throws if the page has none. */
export function byTestId<T extends HTMLElement>(id: string, type: new () => T, root: ParentNode = document): T {
  const element = root.querySelector(`[data-testid="${id}"]`);
  if (!(element instanceof type)) throw new Error(`the page has no ${type.name} with data-testid="${id}"`);
  return element;
}

/** Offer `bytes` to the user as a download named `name`. */
export function download(bytes: Uint8Array, name: string, type: string): void {
  const url = URL.createObjectURL(new Blob([bytes as Uint8Array<ArrayBuffer>], { type }));
  const link = h("a", { href: url, download: name, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
