/**
 * Tool-call argument text cut short, completed into the text of a JSON object.
 *
 * While a tool call streams, a receiver's partial shows its arguments so far, as
 * pi.ai.v1.ToolCallDeltaEvent says: an unfinished string is closed (an escape cut short is
 * dropped), a number cut short keeps its longest prefix that is a number, a cut-short true, false
 * or null is completed, a member or element that has not reached its value is dropped, and open
 * arrays and objects are closed. Text that cannot complete into a JSON object gives "{}".
 *
 * ArgumentsCompletion reads each delta once and keeps only what the completion needs (the open
 * containers, the token being read, and where the text was last whole), so a call whose arguments
 * arrive in many deltas costs time linear in their length. The point up to which the text is
 * kept only moves forward, so the kept text grows by appending, and no completion copies it.
 */

/** The completion of text that cannot complete into a JSON object. */
export const EMPTY_ARGUMENTS = "{}";

// What an open container waits for next.
enum Wait {
  KeyOrEnd,
  Key,
  Colon,
  Value,
  ValueOrEnd,
  AfterValue,
}

// The token being read, if any.
enum Token {
  None,
  String,
  Key,
  Number,
  Literal,
}

// The states of a number being read (RFC 8259's grammar); Dead when no more text can make one.
enum Num {
  Minus,
  Zero,
  Int,
  Point,
  Fraction,
  Exponent,
  ExponentSign,
  ExponentDigits,
  Dead,
}

interface Container {
  readonly closer: "}" | "]";
  wait: Wait;
  /** The text up to here is whole: cut here to drop an unfinished member or element. */
  keep: number;
}

const LITERALS: Record<string, string> = { t: "true", f: "false", n: "null" };

/** The completion of one tool call's argument text, updated as the text grows. */
export class ArgumentsCompletion {
  private length = 0; // of the text so far, in UTF-16 code units
  private kept = ""; // the text up to where every later completion keeps it
  private rest = ""; // the text after that
  private readonly stack: Container[] = [];
  private closers = ""; // the closers of the open containers, innermost first
  private token = Token.None;
  private tokenStart = 0;
  private escape = 0; // inside a string: 0, or how many characters of an escape were read
  private escapeStart = 0;
  private number = Num.Dead;
  private numberEnd = 0; // where the longest prefix of the number that is a number ends
  private literal = ""; // the literal being read
  private started = false; // the top value has begun
  private finished = false; // the top value has ended
  private broken = false; // the text is not a prefix of one JSON object

  /** Append `delta` to the text so far, and return the completion of the whole. */
  push(delta: string): string {
    const from = this.length;
    this.length += delta.length;
    this.rest += delta;
    for (let index = 0; index < delta.length && !this.broken; ) {
      index = this.step(delta.charCodeAt(index), from + index) - from;
    }
    return this.completed();
  }

  /** The text so far completed into the text of a JSON object, or "{}". */
  completed(): string {
    if (this.broken || !this.started) return EMPTY_ARGUMENTS;
    if (this.finished) return this.keep(this.length);
    const inner = this.stack[this.stack.length - 1]!;
    switch (this.token) {
      case Token.String:
        return `${this.keep(this.escape > 0 ? this.escapeStart : this.length)}"${this.closers}`;
      case Token.Number:
        return this.keep(this.numberEnd > this.tokenStart ? this.numberEnd : inner.keep) + this.closers;
      case Token.Literal:
        return this.keep(this.tokenStart) + this.literal + this.closers;
      default:
        return this.keep(inner.keep) + this.closers;
    }
  }

  /** The text up to `end`, which no later completion cuts short of. */
  private keep(end: number): string {
    const more = end - (this.length - this.rest.length);
    if (more > 0) {
      // Only `rest`, the short stretch not yet whole, is ever copied.
      this.kept += more === this.rest.length ? this.rest : this.rest.slice(0, more);
      this.rest = more === this.rest.length ? "" : this.rest.slice(more);
    }
    return this.kept;
  }

  /** Read the character `code` at `at`; return where to read next (`at` to read it again). */
  private step(code: number, at: number): number {
    switch (this.token) {
      case Token.String:
      case Token.Key:
        this.inString(code, at);
        return at + 1;
      case Token.Number:
        if (this.inNumber(code, at)) return at + 1;
        if (this.broken) return at;
        this.valueEnded(at);
        return at; // the character that ended the number is read as what comes next
      case Token.Literal: {
        const read = at - this.tokenStart;
        if (this.literal.charCodeAt(read) !== code) this.broken = true;
        else if (read + 1 === this.literal.length) this.valueEnded(at + 1);
        return at + 1;
      }
    }
    if (code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d) return at + 1;
    if (this.finished)
      this.broken = true; // something after the object
    else this.betweenTokens(code, at);
    return at + 1;
  }

  private inString(code: number, at: number): void {
    if (this.escape === 1) {
      // '"', '\\', '/', b, f, n, r, t, u
      if (!'"\\/bfnrtu'.includes(String.fromCharCode(code))) this.broken = true;
      this.escape = code === 0x75 ? 2 : 0;
    } else if (this.escape > 1) {
      if (!isHex(code)) this.broken = true;
      this.escape = this.escape === 5 ? 0 : this.escape + 1;
    } else if (code === 0x5c) {
      this.escape = 1;
      this.escapeStart = at;
    } else if (code === 0x22) {
      if (this.token === Token.Key) {
        this.token = Token.None;
        this.stack[this.stack.length - 1]!.wait = Wait.Colon;
      } else {
        this.valueEnded(at + 1);
      }
    } else if (code < 0x20) {
      this.broken = true; // a raw control character
    }
  }

  /** Read a character of a number; false when it is none, and the number ended before it. */
  private inNumber(code: number, at: number): boolean {
    const next = nextNumberState(this.number, code);
    if (next === undefined) {
      // Not a character of numbers: the number ends here, whole or not.
      if (!acceptsNumber(this.number)) this.broken = true;
      return false;
    }
    if (next === Num.Dead) {
      this.broken = true; // no more text can make it a number
      return false;
    }
    this.number = next;
    if (acceptsNumber(next)) this.numberEnd = at + 1;
    return true;
  }

  private betweenTokens(code: number, at: number): void {
    const inner = this.stack[this.stack.length - 1];
    if (inner === undefined) {
      if (this.started) this.broken = true;
      else this.valueStarts(code, at);
      return;
    }
    switch (inner.wait) {
      case Wait.KeyOrEnd:
      case Wait.Key:
        if (code === 0x22) this.startToken(Token.Key, at);
        else if (code === 0x7d && inner.wait === Wait.KeyOrEnd) this.close(at);
        else this.broken = true;
        return;
      case Wait.Colon:
        if (code === 0x3a) inner.wait = Wait.Value;
        else this.broken = true;
        return;
      case Wait.Value:
      case Wait.ValueOrEnd:
        if (code === 0x5d && inner.wait === Wait.ValueOrEnd) this.close(at);
        else this.valueStarts(code, at);
        return;
      case Wait.AfterValue:
        if (code === 0x2c) inner.wait = inner.closer === "}" ? Wait.Key : Wait.Value;
        else if (code === inner.closer.charCodeAt(0)) this.close(at);
        else this.broken = true;
        return;
    }
  }

  private valueStarts(code: number, at: number): void {
    if (!this.started) {
      this.started = true;
      if (code !== 0x7b) {
        this.broken = true; // only an object completes into arguments
        return;
      }
    }
    const char = String.fromCharCode(code);
    if (char === "{" || char === "[") {
      const closer = char === "{" ? "}" : "]";
      this.stack.push({ closer, wait: char === "{" ? Wait.KeyOrEnd : Wait.ValueOrEnd, keep: at + 1 });
      this.closers = closer + this.closers;
    } else if (char === '"') {
      this.startToken(Token.String, at);
    } else if (char === "-" || isDigit(code)) {
      this.startToken(Token.Number, at);
      this.number = char === "-" ? Num.Minus : char === "0" ? Num.Zero : Num.Int;
      this.numberEnd = char === "-" ? at : at + 1;
    } else if (Object.hasOwn(LITERALS, char)) {
      this.startToken(Token.Literal, at);
      this.literal = LITERALS[char]!;
    } else {
      this.broken = true;
    }
  }

  private startToken(token: Token, at: number): void {
    this.token = token;
    this.tokenStart = at;
  }

  private valueEnded(end: number): void {
    this.token = Token.None;
    const inner = this.stack[this.stack.length - 1]!;
    inner.wait = Wait.AfterValue;
    inner.keep = end;
  }

  private close(at: number): void {
    this.stack.pop();
    this.closers = this.closers.slice(1);
    if (this.stack.length > 0) this.valueEnded(at + 1);
    else this.finished = true;
  }
}

/** The completion of argument text read at once. */
export function completeJson(text: string): string {
  return new ArgumentsCompletion().push(text);
}

/** @deprecated Renamed completeJson; this name goes in the next release. */
export const completeArguments: (text: string) => string = completeJson;

/** The state after `code`; undefined for a character no number holds, Dead for one out of place. */
function nextNumberState(state: Num, code: number): Num | undefined {
  const digit = isDigit(code);
  const point = code === 0x2e;
  const exponent = code === 0x65 || code === 0x45;
  const sign = code === 0x2b || code === 0x2d;
  if (!digit && !point && !exponent && !sign) return undefined;
  switch (state) {
    case Num.Minus:
      return digit ? (code === 0x30 ? Num.Zero : Num.Int) : Num.Dead;
    case Num.Zero:
      return point ? Num.Point : exponent ? Num.Exponent : Num.Dead;
    case Num.Int:
      return digit ? Num.Int : point ? Num.Point : exponent ? Num.Exponent : Num.Dead;
    case Num.Point:
      return digit ? Num.Fraction : Num.Dead;
    case Num.Fraction:
      return digit ? Num.Fraction : exponent ? Num.Exponent : Num.Dead;
    case Num.Exponent:
      return digit ? Num.ExponentDigits : sign ? Num.ExponentSign : Num.Dead;
    case Num.ExponentSign:
    case Num.ExponentDigits:
      return digit ? Num.ExponentDigits : Num.Dead;
    default:
      return Num.Dead;
  }
}

function acceptsNumber(state: Num): boolean {
  return state === Num.Zero || state === Num.Int || state === Num.Fraction || state === Num.ExponentDigits;
}

function isDigit(code: number): boolean {
  return code >= 0x30 && code <= 0x39;
}

function isHex(code: number): boolean {
  return isDigit(code) || (code >= 0x61 && code <= 0x66) || (code >= 0x41 && code <= 0x46);
}
