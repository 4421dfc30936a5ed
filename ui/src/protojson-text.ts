/**
 * ProtoJSON text as `pi-proto convert` writes a `.json` transcript's items, so that a file it
 * wrote comes back byte for byte: the canonical ProtoJSON of the message (fields in number order,
 * as every protobuf runtime gives them) on one line, spaced with ", " and ": ", with every
 * double written with a decimal point or an exponent (`0.0`, `5e-06`, `1e+16`) and every other
 * number as an integer.
 */

import {
  type DescField,
  type DescMessage,
  type JsonValue,
  type MessageShape,
  ScalarType,
  toJson,
} from "@bufbuild/protobuf";

/** The one-line ProtoJSON of `message`, as `pi-proto convert` writes a `.json` item. */
export function protoJsonLine<Desc extends DescMessage>(schema: Desc, message: MessageShape<Desc>): string {
  return messageText(schema, toJson(schema, message));
}

function messageText(schema: DescMessage, json: JsonValue): string {
  if (
    json === null ||
    typeof json !== "object" ||
    Array.isArray(json) ||
    schema.typeName.startsWith("google.protobuf.")
  ) {
    return valueText(json, false); // a well-known type's own JSON: no double fields of ours inside
  }
  const fields = new Map(schema.fields.map((field) => [field.jsonName, field]));
  const items = Object.entries(json).map(([key, value]) => {
    const field = fields.get(key);
    return `${JSON.stringify(key)}: ${field === undefined ? valueText(value, false) : fieldText(field, value)}`;
  });
  return `{${items.join(", ")}}`;
}

function fieldText(field: DescField, json: JsonValue): string {
  switch (field.fieldKind) {
    case "scalar":
      return valueText(json, isFloating(field.scalar));
    case "enum":
      return valueText(json, false);
    case "message":
      return messageText(field.message, json);
    case "list": {
      const items = json as JsonValue[];
      if (field.listKind === "message") return `[${items.map((item) => messageText(field.message, item)).join(", ")}]`;
      const floating = field.listKind === "scalar" && isFloating(field.scalar);
      return `[${items.map((item) => valueText(item, floating)).join(", ")}]`;
    }
    case "map": {
      const entries = Object.entries(json as Record<string, JsonValue>).map(([key, value]) => {
        const text =
          field.mapKind === "message"
            ? messageText(field.message, value)
            : valueText(value, field.mapKind === "scalar" && isFloating(field.scalar));
        return `${JSON.stringify(key)}: ${text}`;
      });
      return `{${entries.join(", ")}}`;
    }
  }
}

function isFloating(scalar: ScalarType): boolean {
  return scalar === ScalarType.DOUBLE || scalar === ScalarType.FLOAT;
}

/** Any JSON value, spaced as `pi-proto convert` spaces it; a number of a floating field by floatText. */
function valueText(json: JsonValue, floating: boolean): string {
  if (typeof json === "number") return floating ? floatText(json) : String(json);
  if (json === null || typeof json !== "object") return JSON.stringify(json);
  if (Array.isArray(json)) return `[${json.map((item) => valueText(item, floating)).join(", ")}]`;
  return `{${Object.entries(json)
    .map(([key, value]) => `${JSON.stringify(key)}: ${valueText(value, false)}`)
    .join(", ")}}`;
}

/**
 * A finite double as `pi-proto convert` writes one: the same shortest digits as JavaScript's, in fixed
 * notation with at least one decimal while the exponent is from -4 to 15, else as `d.ddde±XX`.
 */
export function floatText(value: number): string {
  if (value === 0) return Object.is(value, -0) ? "-0.0" : "0.0";
  const [mantissa, exponentText] = value.toExponential().split("e") as [string, string];
  const exponent = Number(exponentText);
  const negative = mantissa.startsWith("-");
  const digits = mantissa.replace("-", "").replace(".", "");
  const sign = negative ? "-" : "";
  if (exponent < -4 || exponent >= 16) {
    const rest = digits.length > 1 ? `.${digits.slice(1)}` : "";
    const power = String(Math.abs(exponent)).padStart(2, "0");
    return `${sign}${digits[0]}${rest}e${exponent < 0 ? "-" : "+"}${power}`;
  }
  if (exponent < 0) return `${sign}0.${"0".repeat(-exponent - 1)}${digits}`;
  const whole = digits.slice(0, exponent + 1).padEnd(exponent + 1, "0");
  const fraction = digits.slice(exponent + 1) || "0";
  return `${sign}${whole}.${fraction}`;
}
