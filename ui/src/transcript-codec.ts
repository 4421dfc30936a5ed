/**
 * Transcript files, decoded and encoded in the page, as `pi-proto convert` reads and writes them:
 * a `.jsonl` (a pi session file, or pi-JSON messages, one a line), a `.binpb` (TranscriptEntry
 * records, each after its length as a varint: protobuf's delimited format) or a `.json` (a
 * ProtoJSON array of TranscriptEntry objects). Each is lossless, so a file saved in the form it
 * was read in is the same bytes: a line of a `.jsonl` that is not one JSON entry is kept as it is
 * (an `unparsedLine`), with a warning naming it.
 */

import { fromBinary, fromJson, type JsonValue, toBinary } from "@bufbuild/protobuf";
import {
  PiJsonError,
  type SessionWarning,
  sessionFromPi,
  sessionToPi,
  type TranscriptEntry,
  TranscriptEntrySchema,
} from "../../typescript/src/index.ts";
import { protoJsonLine } from "./protojson-text.ts";

export type Format = "jsonl" | "binpb" | "json";

export const FORMATS: readonly Format[] = ["jsonl", "binpb", "json"];

/** A file that is not a transcript of its form, saying where it breaks (a line, an item, a record). */
export class TranscriptError extends Error {
  override name = "TranscriptError";
}

/** The form of a file: by its extension, else by its first byte (`[` ProtoJSON, `{` pi-JSON lines, else binary). */
export function formatOf(name: string, bytes: Uint8Array): Format {
  const extension = name.slice(name.lastIndexOf(".") + 1).toLowerCase();
  if ((FORMATS as readonly string[]).includes(extension)) return extension as Format;
  const first = bytes.find((byte) => ![0x20, 0x09, 0x0a, 0x0d].includes(byte));
  if (first === 0x5b) return "json";
  if (first === 0x7b) return "jsonl";
  return "binpb";
}

/**
 * The entries of a file in `format`; TranscriptError for one that is not. A line of a `.jsonl` that
 * is not one JSON entry adds a SessionWarning to `warnings`.
 */
export function decodeTranscript(bytes: Uint8Array, format: Format, warnings?: SessionWarning[]): TranscriptEntry[] {
  switch (format) {
    case "jsonl":
      return readJsonl(utf8(bytes), warnings);
    case "json":
      return readJson(utf8(bytes));
    case "binpb":
      return readBinpb(bytes);
  }
}

/** The bytes of `entries` in `format`. */
export function encodeTranscript(entries: readonly TranscriptEntry[], format: Format): Uint8Array {
  switch (format) {
    case "jsonl":
      // A line as pi writes it (JSON.stringify, then a newline), or an unparsed line as it was.
      return encodeUtf8(sessionToPi(entries));
    case "json":
      return encodeUtf8(
        `[${entries.map((entry, index) => `${index ? ",\n" : "\n"}${protoJsonLine(TranscriptEntrySchema, entry)}`).join("")}\n]\n`,
      );
    case "binpb":
      return writeBinpb(entries);
  }
}

function utf8(bytes: Uint8Array): string {
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw new TranscriptError("not UTF-8 text");
  }
}

function encodeUtf8(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

function readJsonl(text: string, warnings?: SessionWarning[]): TranscriptEntry[] {
  try {
    return sessionFromPi(text, warnings);
  } catch (error) {
    if (error instanceof PiJsonError) throw new TranscriptError(error.message); // "line 12: entry.…: …"
    throw error;
  }
}

function readJson(text: string): TranscriptEntry[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new TranscriptError(`not valid JSON: ${messageOf(error)}`);
  }
  if (!Array.isArray(value)) throw new TranscriptError("expected a JSON array of TranscriptEntry objects");
  return value.map((item: unknown, index) => {
    if (item === null || typeof item !== "object" || Array.isArray(item)) {
      throw new TranscriptError(`item ${index}: expected a TranscriptEntry object`);
    }
    try {
      return fromJson(TranscriptEntrySchema, item as JsonValue);
    } catch (error) {
      throw new TranscriptError(`item ${index}: ${messageOf(error)}`);
    }
  });
}

function readBinpb(bytes: Uint8Array): TranscriptEntry[] {
  const entries: TranscriptEntry[] = [];
  let offset = 0;
  while (offset < bytes.length) {
    const where = `record ${entries.length} at byte ${offset}`;
    let size = 0;
    let shift = 0;
    for (;;) {
      if (offset >= bytes.length) throw new TranscriptError(`${where}: the file ends inside a length prefix`);
      const byte = bytes[offset++]!;
      size += (byte & 0x7f) * 2 ** shift;
      shift += 7;
      if ((byte & 0x80) === 0) break;
      if (shift > 63) throw new TranscriptError(`${where}: the length prefix is not a valid varint`);
    }
    if (size > bytes.length - offset) {
      throw new TranscriptError(
        `${where}: claims ${size} bytes but only ${bytes.length - offset} remain (truncated file?)`,
      );
    }
    try {
      entries.push(fromBinary(TranscriptEntrySchema, bytes.subarray(offset, offset + size)));
    } catch (error) {
      throw new TranscriptError(`${where}: ${messageOf(error)}`);
    }
    offset += size;
  }
  return entries;
}

function writeBinpb(entries: readonly TranscriptEntry[]): Uint8Array {
  const records = entries.map((entry) => toBinary(TranscriptEntrySchema, entry));
  const parts: Uint8Array[] = [];
  for (const record of records) {
    parts.push(varint(record.length), record);
  }
  const out = new Uint8Array(parts.reduce((size, part) => size + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

function varint(value: number): Uint8Array {
  const bytes: number[] = [];
  let rest = value;
  while (rest >= 0x80) {
    bytes.push((rest % 0x80) | 0x80);
    rest = Math.floor(rest / 0x80);
  }
  bytes.push(rest);
  return Uint8Array.from(bytes);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
