/**
 * The global `Buffer` as the package uses it (accumulator.ts counts UTF-8 bytes, pi-json.ts reads
 * and writes image data as base64, client.ts copies a CA certificate), for the browser: the build
 * injects this object wherever a module names `Buffer`.
 */

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
// Node's base64 decoder also takes the URL alphabet, and skips any other character.
const VALUES = new Map<string, number>([...ALPHABET].map((char, value) => [char, value]));
VALUES.set("-", 62);
VALUES.set("_", 63);

type Encoding = "utf8" | "utf-8" | "base64" | "latin1";

/** Bytes that print as base64, Latin-1 or UTF-8, as a Buffer does. */
export class Bytes extends Uint8Array {
  override toString(encoding: Encoding = "utf8"): string {
    if (encoding === "base64") return toBase64(this);
    if (encoding === "latin1") return Array.from(this, (byte) => String.fromCharCode(byte)).join("");
    return new TextDecoder().decode(this);
  }
}

/** `bytes` in base64: the standard alphabet, padded. */
export function toBase64(bytes: Uint8Array): string {
  const out: string[] = [];
  for (let at = 0; at < bytes.length; at += 3) {
    const [a, b, c] = [bytes[at]!, bytes[at + 1], bytes[at + 2]];
    const triple = (a << 16) | ((b ?? 0) << 8) | (c ?? 0);
    out.push(
      ALPHABET[(triple >> 18) & 63]!,
      ALPHABET[(triple >> 12) & 63]!,
      b === undefined ? "=" : ALPHABET[(triple >> 6) & 63]!,
      c === undefined ? "=" : ALPHABET[triple & 63]!,
    );
  }
  return out.join("");
}

/** Base64 decoded as Node decodes it: what is not base64 is skipped, and so are bits that complete no byte. */
function fromBase64(text: string): Bytes {
  const bytes: number[] = [];
  let bits = 0;
  let held = 0;
  for (const char of text) {
    if (char === "=") break;
    const value = VALUES.get(char);
    if (value === undefined) continue;
    bits = ((bits << 6) | value) & 0xffffff;
    held += 6;
    if (held >= 8) {
      held -= 8;
      bytes.push((bits >> held) & 0xff);
    }
  }
  return new Bytes(bytes);
}

export const Buffer = {
  /** The bytes of `text` in UTF-8. */
  byteLength(text: string, _encoding: "utf8" = "utf8"): number {
    return new TextEncoder().encode(text).length;
  },

  /**
   * The bytes of a string (UTF-8, Latin-1 or base64), a view of an ArrayBuffer (from `offset`,
   * `length` bytes), or a copy of bytes.
   */
  from(value: string | ArrayBufferLike | Uint8Array, encodingOrOffset?: Encoding | number, length?: number): Bytes {
    if (typeof value === "string") {
      if (encodingOrOffset === "base64") return fromBase64(value);
      if (encodingOrOffset === "latin1") return new Bytes(Array.from(value, (char) => char.charCodeAt(0) & 0xff));
      const bytes = new TextEncoder().encode(value);
      return new Bytes(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    }
    if (ArrayBuffer.isView(value)) return new Bytes(value);
    const offset = typeof encodingOrOffset === "number" ? encodingOrOffset : 0;
    return new Bytes(value as ArrayBuffer, offset, length ?? value.byteLength - offset);
  },
};
