/**
 * Python's text forms of JSON values: `repr()`, `json.dumps()` with its default separators, and
 * the repr of a float. The error messages of the codec and the validation quote values in these
 * forms, so they read the same as the Python runtime's.
 *
 * JSON.parse gives one number type where Python has int and float: an integral number is shown
 * as an int (how JSON usually writes one), any other as Python writes a float.
 */

// Containers nested deeper than this are shown as `[...]` / `{...}` instead of overflowing the stack.
const MAX_DEPTH = 100;

/** `repr(value)` of a JSON value; absent (undefined) is None, as Python's `dict.get` gives. */
export function pyRepr(value: unknown, depth = 0): string {
  if (value === undefined || value === null) return "None";
  if (value === true) return "True";
  if (value === false) return "False";
  if (typeof value === "string") return pyStr(value);
  if (typeof value === "number") return pyNumber(value, "repr");
  if (typeof value === "bigint") return String(value);
  if (Array.isArray(value)) {
    if (depth >= MAX_DEPTH) return "[...]";
    return `[${value.map((item) => pyRepr(item, depth + 1)).join(", ")}]`;
  }
  if (typeof value === "object") {
    if (depth >= MAX_DEPTH) return "{...}";
    const items = Object.entries(value).map(([key, item]) => `${pyStr(key)}: ${pyRepr(item, depth + 1)}`);
    return `{${items.join(", ")}}`;
  }
  return String(value);
}

/**
 * The first `limit` characters (code points) of `json.dumps(value, ensure_ascii=False)`:
 * separators ", " and ": ". Only as much of the value as the limit needs is written.
 */
export function pyJsonPrefix(value: unknown, limit: number): string {
  const parts: string[] = [];
  let length = 0; // UTF-16 units written; 2 * limit of them hold at least `limit` code points
  const write = (text: string): boolean => {
    parts.push(text);
    length += text.length;
    return length < 2 * limit;
  };
  const dump = (item: unknown): boolean => {
    if (item === null || item === undefined) return write("null");
    if (typeof item === "boolean") return write(String(item));
    if (typeof item === "number") return write(pyNumber(item, "json"));
    if (typeof item === "bigint") return write(String(item));
    if (typeof item === "string") return write(JSON.stringify(item));
    const array = Array.isArray(item);
    const entries: Array<[string | undefined, unknown]> = array
      ? item.map((child: unknown) => [undefined, child])
      : Object.entries(item as object);
    if (!write(array ? "[" : "{")) return false;
    for (const [index, [key, child]] of entries.entries()) {
      if (index > 0 && !write(", ")) return false;
      if (key !== undefined && !write(`${JSON.stringify(key)}: `)) return false;
      if (!dump(child)) return false;
    }
    return write(array ? "]" : "}");
  };
  dump(value);
  return Array.from(parts.join("")).slice(0, limit).join("");
}

/** `repr(x)` of a Python float: the shortest digits, exponent outside 1e-4 <= |x| < 1e16. */
export function pyFloat(value: number): string {
  if (Number.isNaN(value)) return "nan";
  if (!Number.isFinite(value)) return value > 0 ? "inf" : "-inf";
  if (value === 0) return Object.is(value, -0) ? "-0.0" : "0.0";
  // toExponential() without an argument gives the shortest digits that read back as `value`.
  const [mantissa, exponentText] = value.toExponential().split("e") as [string, string];
  const exponent = Number(exponentText);
  const sign = value < 0 ? "-" : "";
  const digits = mantissa.replace("-", "").replace(".", "");
  if (exponent < -4 || exponent >= 16) {
    const head = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    return `${sign}${head}e${exponent < 0 ? "-" : "+"}${String(Math.abs(exponent)).padStart(2, "0")}`;
  }
  if (exponent < 0) return `${sign}0.${"0".repeat(-exponent - 1)}${digits}`;
  if (digits.length <= exponent + 1) return `${sign}${digits.padEnd(exponent + 1, "0")}.0`;
  return `${sign}${digits.slice(0, exponent + 1)}.${digits.slice(exponent + 1)}`;
}

/** A number as Python shows what JSON.parse read: integral ones as ints, others as floats. */
function pyNumber(value: number, form: "repr" | "json"): string {
  if (Number.isInteger(value) && Math.abs(value) < 1e21) return BigInt(value).toString();
  if (form === "json" && !Number.isFinite(value)) {
    return Number.isNaN(value) ? "NaN" : value > 0 ? "Infinity" : "-Infinity";
  }
  return pyFloat(value);
}

/** `repr(s)` of a Python str: single quotes unless the text holds only the other kind. */
function pyStr(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let out = quote;
  for (const char of text) {
    const code = char.codePointAt(0)!;
    if (char === quote || char === "\\") out += `\\${char}`;
    else if (char === "\t") out += "\\t";
    else if (char === "\n") out += "\\n";
    else if (char === "\r") out += "\\r";
    else if (code < 0x20 || code === 0x7f) out += `\\x${hex(code, 2)}`;
    else if (code < 0x7f || !NOT_PRINTABLE.test(char)) out += char;
    else if (code <= 0xff) out += `\\x${hex(code, 2)}`;
    else if (code <= 0xffff) out += `\\u${hex(code, 4)}`;
    else out += `\\U${hex(code, 8)}`;
  }
  return out + quote;
}

// What Python's str.isprintable() refuses: control, format, surrogate, private-use and
// unassigned code points, and separators other than the ASCII space.
const NOT_PRINTABLE = /^[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]$/u;

function hex(code: number, width: number): string {
  return code.toString(16).padStart(width, "0");
}
