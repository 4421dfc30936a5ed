package pi.proto;

import java.util.ArrayDeque;

/**
 * What the message rules need to know of a JSON text: that it parses, the type of its top-level
 * value and how deeply it nests.
 *
 * <p>The text is read as Python's {@code json.loads} reads it, so a text is accepted or refused
 * alike in both runtimes (NaN and Infinity included) and a refusal reads the same, e.g. {@code
 * Expecting ',' delimiter: line 1 column 9 (char 8)} (the words of CPython 3.11's json module).
 * Reading is iterative and builds no tree, so any size and depth is safe.
 *
 * @param type the top-level value's type as the Python runtime names it: object, list, string,
 *     number, boolean or null
 * @param depth the deepest nesting of objects and arrays; a top-level object alone is 1
 */
record JsonShape(String type, int depth) {
  /**
   * Python's parser gives up around this depth (its recursion limit), and the rules then report the
   * text as nested too deep; reading stops here too, with the depth reported one past it.
   */
  static final int PARSER_DEPTH_LIMIT = 1000;

  /** JSON text that does not parse; the message says what and where, as Python words it. */
  static final class InvalidJsonException extends Exception {
    private static final long serialVersionUID = 1L;

    InvalidJsonException(String message) {
      super(message);
    }
  }

  /** Read the whole of {@code text}, which must hold exactly one JSON value. */
  static JsonShape of(String text) throws InvalidJsonException {
    return new Reader(text).read();
  }

  /** A port of CPython's json scanner, iterative: open objects and arrays live on a stack. */
  private static final class Reader {
    private final String text;
    private final ArrayDeque<Character> open = new ArrayDeque<>(); // '{' or '[' per level
    private int at; // a char index into text
    private int deepest;

    Reader(String text) {
      this.text = text;
    }

    JsonShape read() throws InvalidJsonException {
      if (text.startsWith("\uFEFF")) {
        throw error("Unexpected UTF-8 BOM (decode using utf-8-sig)", 0);
      }
      at = skipWhitespace(0);
      String type = typeAt(at);
      boolean expectKey = false; // after an object opens or a comma inside one
      while (true) {
        if (expectKey) {
          key();
          expectKey = false;
          continue;
        }
        if (!value()) {
          if (open.size() > PARSER_DEPTH_LIMIT) {
            return new JsonShape(type, open.size());
          }
          expectKey = open.peek() == '{';
          continue;
        }
        // A value is complete: close what it completes, then find the next key or element.
        while (!open.isEmpty()) {
          at = skipWhitespace(at);
          char closing = open.peek() == '{' ? '}' : ']';
          if (at < text.length() && text.charAt(at) == closing) {
            open.pop();
            at += 1;
            continue;
          }
          if (at >= text.length() || text.charAt(at) != ',') {
            throw error("Expecting ',' delimiter", at);
          }
          at = skipWhitespace(at + 1);
          break;
        }
        if (open.isEmpty()) {
          break;
        }
        expectKey = open.peek() == '{';
      }
      at = skipWhitespace(at);
      if (at != text.length()) {
        throw error("Extra data", at);
      }
      return new JsonShape(type, deepest);
    }

    /**
     * Read the value at {@code at}: a scalar, an empty object or array (both complete: true) or the
     * opening of a non-empty one, or of one past the depth limit (false).
     */
    private boolean value() throws InvalidJsonException {
      if (at >= text.length()) {
        throw error("Expecting value", at);
      }
      char first = text.charAt(at);
      if (first == '{' || first == '[') {
        open.push(first);
        deepest = Math.max(deepest, open.size());
        if (open.size() > PARSER_DEPTH_LIMIT) {
          return false; // where Python's parser gives up: the caller stops reading
        }
        at = skipWhitespace(at + 1);
        char closing = first == '{' ? '}' : ']';
        if (at < text.length() && text.charAt(at) == closing) {
          open.pop();
          at += 1;
          return true;
        }
        return false;
      }
      if (first == '"') {
        at = endOfString(at + 1);
        return true;
      }
      for (String word : new String[] {"null", "true", "false", "NaN", "Infinity", "-Infinity"}) {
        if (text.startsWith(word, at)) {
          at += word.length();
          return true;
        }
      }
      at = endOfNumber(at);
      return true;
    }

    /** Read a key and its ':' inside an object; the value follows. */
    private void key() throws InvalidJsonException {
      if (at >= text.length() || text.charAt(at) != '"') {
        throw error("Expecting property name enclosed in double quotes", at);
      }
      at = skipWhitespace(endOfString(at + 1));
      if (at >= text.length() || text.charAt(at) != ':') {
        throw error("Expecting ':' delimiter", at);
      }
      at = skipWhitespace(at + 1);
    }

    /** The index after the closing quote of the string whose text starts at {@code from}. */
    private int endOfString(int from) throws InvalidJsonException {
      int begin = from - 1;
      int next = from;
      while (true) {
        while (next < text.length() && text.charAt(next) != '"' && text.charAt(next) != '\\') {
          if (text.charAt(next) <= 0x1f) {
            throw error("Invalid control character at", next);
          }
          next += 1;
        }
        if (next >= text.length()) {
          throw error("Unterminated string starting at", begin);
        }
        if (text.charAt(next) == '"') {
          return next + 1;
        }
        next += 1; // past the backslash
        if (next >= text.length()) {
          throw error("Unterminated string starting at", begin);
        }
        char escape = text.charAt(next);
        if (escape != 'u') {
          if ("\"\\/bfnrt".indexOf(escape) < 0) {
            throw error("Invalid \\escape", next - 1);
          }
          next += 1;
          continue;
        }
        int end = next + 5; // past the four hex digits
        if (end >= text.length()) {
          throw error("Invalid \\uXXXX escape", next);
        }
        int unit = hex(next + 1, end);
        next = end;
        // A high surrogate may pair with a \\u escape of a low one; either way the text goes on.
        if (Character.isHighSurrogate((char) unit)
            && end + 6 < text.length()
            && text.charAt(end) == '\\'
            && text.charAt(end + 1) == 'u') {
          int low = hex(end + 2, end + 6);
          if (Character.isLowSurrogate((char) low)) {
            next = end + 6;
          }
        }
      }
    }

    /** The code unit written by the four hex digits in [from, end). */
    private int hex(int from, int end) throws InvalidJsonException {
      int unit = 0;
      for (int index = from; index < end; index++) {
        int digit = Character.digit(text.charAt(index), 16);
        if (digit < 0 || text.charAt(index) > 'f') {
          throw error("Invalid \\uXXXX escape", end - 5);
        }
        unit = unit * 16 + digit;
      }
      return unit;
    }

    /** The index after the number at {@code start}, read by Python's number grammar. */
    private int endOfNumber(int start) throws InvalidJsonException {
      int last = text.length() - 1;
      int index = start;
      if (text.charAt(index) == '-') {
        index += 1;
        if (index > last) {
          throw error("Expecting value", start);
        }
      }
      if (isDigit(index) && text.charAt(index) != '0') {
        index += 1;
        while (index <= last && isDigit(index)) {
          index += 1;
        }
      } else if (text.charAt(index) == '0') {
        index += 1;
      } else {
        throw error("Expecting value", start);
      }
      if (index < last && text.charAt(index) == '.' && isDigit(index + 1)) {
        index += 2;
        while (index <= last && isDigit(index)) {
          index += 1;
        }
      }
      if (index < last && (text.charAt(index) == 'e' || text.charAt(index) == 'E')) {
        int exponent = index;
        index += 1;
        if (index < last && (text.charAt(index) == '-' || text.charAt(index) == '+')) {
          index += 1;
        }
        while (index <= last && isDigit(index)) {
          index += 1;
        }
        if (!isDigit(index - 1)) {
          index = exponent; // no digits: the 'e' is not part of the number
        }
      }
      return index;
    }

    private boolean isDigit(int index) {
      char unit = text.charAt(index);
      return unit >= '0' && unit <= '9';
    }

    private int skipWhitespace(int from) {
      int index = from;
      while (index < text.length() && " \t\n\r".indexOf(text.charAt(index)) >= 0) {
        index += 1;
      }
      return index;
    }

    private String typeAt(int index) {
      if (index >= text.length()) {
        return "nothing";
      }
      return switch (text.charAt(index)) {
        case '{' -> "object";
        case '[' -> "list";
        case '"' -> "string";
        case 'n' -> "null";
        case 't', 'f' -> "boolean";
        default -> "number";
      };
    }

    /** Python's JSONDecodeError text: positions count code points, lines and columns from 1. */
    private InvalidJsonException error(String what, int index) {
      int position = text.codePointCount(0, index);
      int lineStart = text.lastIndexOf('\n', index - 1) + 1;
      int line = 1;
      for (int scan = 0; scan < lineStart; scan++) {
        if (text.charAt(scan) == '\n') {
          line += 1;
        }
      }
      int column = text.codePointCount(lineStart, index) + 1;
      return new InvalidJsonException(
          what + ": line " + line + " column " + column + " (char " + position + ")");
    }
  }
}
