// What the package's modules find as the global `Buffer` in the page: the object the build injects.
import type { Buffer as BrowserBuffer } from "./buffer.ts";

declare global {
  const Buffer: typeof BrowserBuffer;
}
