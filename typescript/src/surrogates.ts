/**
 * Lone surrogates: text pi writes that a protobuf string cannot hold.
 *
 * A JavaScript string may hold a lone surrogate (a stream cut inside a surrogate pair leaves one),
 * which JSON.stringify writes as an escape (`"\ud83d"`); protobuf strings are UTF-8, which has no
 * lone surrogates, and protobuf-es would write U+FFFD instead. So the pi-JSON codec maps each
 * surrogate U+D800 + k to U+10F800 + k when it reads, and back when it writes; a character of that
 * range in the text itself (U+10F7FF to U+10FFFF) is read as U+10F7FF followed by itself. Every
 * runtime's pi-JSON codec maps the same way (docs/transcripts.md).
 */

const SURROGATES = 0xd800;
const MAPPED = 0x10f800;
const ESCAPE = "\u{10f7ff}";
const TO_PROTO = /[\ud800-\udfff\u{10f7ff}-\u{10ffff}]/gu;
const FROM_PROTO = /\u{10f7ff}[\u{10f7ff}-\u{10ffff}]?|[\u{10f800}-\u{10ffff}]/gu;

/** `text` as a protobuf string holds it. */
export function toProto(text: string): string {
  return text.replace(TO_PROTO, (char) => {
    const point = char.codePointAt(0) ?? 0;
    return point < 0xe000 ? String.fromCodePoint(MAPPED + point - SURROGATES) : ESCAPE + char;
  });
}

/** The text `toProto` mapped, as it was. */
export function fromProto(text: string): string {
  return text.replace(FROM_PROTO, (found) => {
    if (found.startsWith(ESCAPE)) return found.length > ESCAPE.length ? found.slice(ESCAPE.length) : found;
    return String.fromCharCode(SURROGATES + (found.codePointAt(0) ?? 0) - MAPPED);
  });
}

/** A parsed JSON value with every string (keys too) changed by `change`. */
export function mapStrings(value: unknown, change: (text: string) => string): unknown {
  if (typeof value === "string") return change(value);
  if (Array.isArray(value)) return value.map((item) => mapStrings(item, change));
  if (value !== null && typeof value === "object") {
    // fromEntries defines own properties, as JSON.parse does: a "__proto__" key stays a key.
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [change(key), mapStrings(item, change)]));
  }
  return value;
}
