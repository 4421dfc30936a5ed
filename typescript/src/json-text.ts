/**
 * The JSON text rules. A protovalidate rule cannot read JSON, so string fields that hold JSON carry
 * the `pi.ai.v1.json` option (a JsonText: the shape of the value, and whether "" means none), and
 * this walker checks every such field it finds by reflection: a new JSON field needs no code.
 *
 * The text is RFC 8259 JSON as JSON.parse reads it (duplicate keys and escaped lone surrogates are
 * fine), every number fits in a double, objects and arrays nest at most 64 deep, and a field of
 * shape JSON_SHAPE_OBJECT holds an object. The rule ids, in the order they are checked:
 * "json.syntax", "json.depth", "json.number", "json.object". Then, on a field whose option lists
 * `modelled_keys` (every `extra_json`), "json.extra": the object holds none of those keys, so what
 * the message's fields say is what gets written; an empty array or object is let through, as a
 * repeated field cannot tell it from none.
 *
 * The text is read by a small scanner of our own, not JSON.parse: JSON.parse turns 1e999 into
 * Infinity without a word, and cannot say how deep a text nests before it recurses into it. The
 * scanner keeps an explicit stack, so a text nested 100,000 deep costs memory, never the call stack.
 */

import { type DescField, type DescMessage, getOption, hasOption, type MessageShape } from "@bufbuild/protobuf";
import { type ReflectMessage, reflect } from "@bufbuild/protobuf/reflect";
import { FeatureSet_FieldPresence } from "@bufbuild/protobuf/wkt";
import { field as fieldRules, Ignore } from "./gen/buf/validate/validate_pb.js";
import { JsonShape, json as jsonOption } from "./gen/pi/ai/v1/json_pb.js";
import type { Violation } from "./violation.js";

/** Objects and arrays in JSON text nest at most this deep. */
export const MAX_JSON_DEPTH = 64;

/** What is wrong with one JSON text: the rule it breaks and why. */
export interface JsonTextProblem {
  readonly ruleId: "json.syntax" | "json.depth" | "json.number" | "json.object" | "json.extra";
  readonly detail: string;
}

/** What is wrong with `text` as JSON of `shape`; undefined when nothing is. */
export function jsonTextProblem(text: string, shape: JsonShape = JsonShape.VALUE): JsonTextProblem | undefined {
  const scanned = scan(text);
  if ("syntax" in scanned) return { ruleId: "json.syntax", detail: `not JSON: ${scanned.syntax}` };
  if (scanned.depth > MAX_JSON_DEPTH) {
    return { ruleId: "json.depth", detail: `nests ${scanned.depth} deep, more than ${MAX_JSON_DEPTH}` };
  }
  if (scanned.hugeNumber !== undefined) {
    return { ruleId: "json.number", detail: `the number ${abbreviate(scanned.hugeNumber)} does not fit in a double` };
  }
  if (shape === JsonShape.OBJECT && scanned.top !== "an object") {
    return { ruleId: "json.object", detail: `must hold a JSON object, not ${scanned.top}` };
  }
  return undefined;
}

/**
 * The first key of the object in `text` that is in `modelled`, as a "json.extra" problem, unless
 * it holds an empty array or object (which a repeated field cannot tell from none). `text` must
 * have passed the other rules as an object, so JSON.parse reads it as the scanner did.
 */
function modelledKeyProblem(text: string, modelled: ReadonlySet<string>): JsonTextProblem | undefined {
  for (const [key, value] of Object.entries(JSON.parse(text) as Record<string, unknown>)) {
    const empty = typeof value === "object" && value !== null && Object.keys(value).length === 0;
    if (modelled.has(key) && !empty) {
      return { ruleId: "json.extra", detail: `holds '${key}', a key the message models as a field` };
    }
  }
  return undefined;
}

/**
 * The JSON text rules of every marked field in `message` and the messages inside it, with paths
 * from `message`. Fields whose schema rules are ignored (a ModelEvent's partial, a start header)
 * are skipped: they hold unfinished messages.
 */
export function jsonViolations<Desc extends DescMessage>(schema: Desc, message: MessageShape<Desc>): Violation[] {
  const found: Violation[] = [];
  walk(reflect(schema, message), "", found);
  return found;
}

/**
 * The keys of pi's object that `schema`'s message models, in the order pi writes them: the
 * `modelled_keys` of the JsonText option of its `field` (by its proto name).
 */
export function modelledKeys(schema: DescMessage, field = "extra_json"): readonly string[] {
  const desc = schema.fields.find((candidate) => candidate.name === field);
  if (desc === undefined || !hasOption(desc, jsonOption)) {
    throw new Error(`${schema.typeName}.${field} is not a field with the pi.ai.v1.json option`);
  }
  return getOption(desc, jsonOption).modelledKeys;
}

// --- the walk over messages ----------------------------------------------------------------------

interface Plan {
  /** The fields holding JSON text, with their rule. */
  readonly texts: ReadonlyArray<{
    field: DescField;
    shape: JsonShape;
    emptyAllowed: boolean;
    /** The keys an `extra_json` object must not hold (json.extra); empty elsewhere. */
    modelledKeys: ReadonlySet<string>;
  }>;
  /** The message, list and map fields whose messages hold JSON text somewhere inside. */
  readonly nested: readonly DescField[];
}

const plans = new Map<DescMessage, Plan>();

function planOf(schema: DescMessage, visiting = new Set<DescMessage>()): Plan {
  const known = plans.get(schema);
  if (known !== undefined) return known;
  visiting.add(schema);
  const texts: Array<Plan["texts"][number]> = [];
  const nested: DescField[] = [];
  for (const field of schema.fields) {
    if (ignored(field)) continue;
    if (field.fieldKind === "scalar" && hasOption(field, jsonOption)) {
      const rule = getOption(field, jsonOption);
      const modelledKeys = new Set(rule.modelledKeys);
      texts.push({ field, shape: rule.shape, emptyAllowed: rule.emptyAllowed, modelledKeys });
      continue;
    }
    const inner = messageOf(field);
    // A type still being planned (a recursive one) is walked: it may hold JSON text.
    if (inner !== undefined && (visiting.has(inner) || holdsJson(planOf(inner, visiting)))) nested.push(field);
  }
  visiting.delete(schema);
  const plan = { texts, nested };
  plans.set(schema, plan);
  return plan;
}

function messageOf(field: DescField): DescMessage | undefined {
  if (field.fieldKind === "message") return field.message;
  if (field.fieldKind === "list" && field.listKind === "message") return field.message;
  if (field.fieldKind === "map" && field.mapKind === "message") return field.message;
  return undefined;
}

function holdsJson(plan: Plan): boolean {
  return plan.texts.length > 0 || plan.nested.length > 0;
}

function ignored(field: DescField): boolean {
  return hasOption(field, fieldRules) && getOption(field, fieldRules).ignore === Ignore.ALWAYS;
}

function walk(message: ReflectMessage, path: string, found: Violation[]): void {
  const plan = planOf(message.desc);
  for (const { field, shape, emptyAllowed, modelledKeys } of plan.texts) {
    const tracksPresence = field.presence === FeatureSet_FieldPresence.EXPLICIT || field.oneof !== undefined;
    if (tracksPresence && !message.isSet(field)) continue;
    const text = message.get(field) as string;
    if (text === "" && emptyAllowed) continue;
    let problem = jsonTextProblem(text, shape);
    if (problem === undefined && modelledKeys.size > 0) problem = modelledKeyProblem(text, modelledKeys);
    if (problem !== undefined) found.push({ fieldPath: join(path, field.name), ...problem });
  }
  for (const field of plan.nested) {
    if (!message.isSet(field)) continue;
    const where = join(path, field.name);
    if (field.fieldKind === "message") {
      walk(message.get(field), where, found);
    } else if (field.fieldKind === "list" && field.listKind === "message") {
      let index = 0;
      for (const item of message.get(field)) walk(item as ReflectMessage, `${where}[${index++}]`, found);
    } else if (field.fieldKind === "map" && field.mapKind === "message") {
      for (const [key, value] of message.get(field)) walk(value as ReflectMessage, `${where}[${mapKey(key)}]`, found);
    }
  }
}

function join(path: string, name: string): string {
  return path === "" ? name : `${path}.${name}`;
}

/** A map key as a path shows it: strings quoted as JSON, other keys as they are. */
export function mapKey(key: unknown): string {
  return typeof key === "string" ? JSON.stringify(key) : String(key);
}

// --- the scanner ---------------------------------------------------------------------------------

type Scanned = { syntax: string } | { top: string; depth: number; hugeNumber: string | undefined };

const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const LITERALS: ReadonlyArray<[string, string]> = [
  ["true", "a boolean"],
  ["false", "a boolean"],
  ["null", "null"],
];
const ESCAPES = new Set(['"', "\\", "/", "b", "f", "n", "r", "t"]);

/**
 * Read `text` as one JSON value without recursion: its kind, how deep it nests, and the first
 * number too large for a double; or where it stops being JSON.
 */
function scan(text: string): Scanned {
  const end = text.length;
  const open: boolean[] = []; // the containers around `at`, innermost last: true for an object
  let at = 0;
  let depth = 0;
  let top: string | undefined;
  let hugeNumber: string | undefined;
  const fail = (what: string): Scanned => ({ syntax: `${what} at offset ${at}` });
  const skipSpace = (): void => {
    while (at < end) {
      const code = text.charCodeAt(at);
      if (code !== 0x20 && code !== 0x0a && code !== 0x0d && code !== 0x09) return;
      at += 1;
    }
  };
  /** Read the string that starts at `at`; an error message when it is not one. */
  const readString = (): string | undefined => {
    at += 1; // the opening quote
    while (at < end) {
      const char = text[at]!;
      if (char === '"') {
        at += 1;
        return undefined;
      }
      if (char === "\\") {
        const escaped = text[at + 1];
        if (escaped === "u") {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(at + 2, at + 6))) return "a \\u escape needs four hex digits";
          at += 6;
        } else if (escaped !== undefined && ESCAPES.has(escaped)) {
          at += 2;
        } else {
          return "an unknown escape in a string";
        }
      } else if (char.charCodeAt(0) < 0x20) {
        return "a control character inside a string";
      } else {
        at += 1;
      }
    }
    return "a string that never ends";
  };
  /** After `{` or `,` in an object: a key and its colon. */
  const readKey = (): string | undefined => {
    skipSpace();
    if (text[at] !== '"') return "expected a key in double quotes";
    const problem = readString();
    if (problem !== undefined) return problem;
    skipSpace();
    if (text[at] !== ":") return "expected a colon after the key";
    at += 1;
    return undefined;
  };

  for (;;) {
    // A value starts here.
    skipSpace();
    if (at >= end) return fail("the text ends where a value should start");
    const char = text[at]!;
    let kind: string;
    if (char === "{" || char === "[") {
      const isObject = char === "{";
      open.push(isObject);
      depth = Math.max(depth, open.length);
      top ??= isObject ? "an object" : "an array";
      at += 1;
      skipSpace();
      if (text[at] !== (isObject ? "}" : "]")) {
        if (isObject) {
          const problem = readKey();
          if (problem !== undefined) return fail(problem);
        }
        continue; // the first member's value
      }
      at += 1;
      open.pop();
      kind = isObject ? "an object" : "an array";
    } else if (char === '"') {
      const problem = readString();
      if (problem !== undefined) return fail(problem);
      kind = "a string";
    } else if (char === "-" || (char >= "0" && char <= "9")) {
      NUMBER.lastIndex = at;
      const match = NUMBER.exec(text);
      if (match === null) return fail("a malformed number");
      at += match[0].length;
      if (hugeNumber === undefined && !Number.isFinite(Number(match[0]))) hugeNumber = match[0];
      kind = "a number";
    } else {
      const literal = LITERALS.find(([word]) => text.startsWith(word, at));
      if (literal === undefined) return fail(`unexpected ${describeChar(char)}`);
      at += literal[0].length;
      kind = literal[1];
    }
    top ??= kind;
    // A value has ended: close the containers it ends, up to the next member.
    for (;;) {
      skipSpace();
      if (open.length === 0) {
        return at < end ? fail("more text after the value") : { top, depth, hugeNumber };
      }
      const inObject = open[open.length - 1]!;
      const next = text[at];
      if (next === ",") {
        at += 1;
        if (inObject) {
          const problem = readKey();
          if (problem !== undefined) return fail(problem);
        }
        break;
      }
      if (next === (inObject ? "}" : "]")) {
        at += 1;
        open.pop();
        continue;
      }
      return fail(inObject ? "expected a comma or } in an object" : "expected a comma or ] in an array");
    }
  }
}

function describeChar(char: string): string {
  const code = char.codePointAt(0)!;
  if (code >= 0x20 && code !== 0xfeff) return `'${char}'`;
  return `character U+${code.toString(16).toUpperCase().padStart(4, "0")}`;
}

function abbreviate(number: string): string {
  return number.length <= 24 ? number : `${number.slice(0, 12)}...(${number.length} characters)`;
}
