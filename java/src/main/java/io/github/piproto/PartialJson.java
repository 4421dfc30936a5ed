package io.github.piproto;

import java.util.ArrayList;
import java.util.List;

/**
 * Tool-call argument text cut short, completed into the text of a JSON object, as a partial shows
 * it while the call streams ({@code pi.ai.v1.ToolCallDeltaEvent}): the text up to the last point
 * where it is whole; an unfinished string closed (an escape cut short dropped); a number cut short
 * kept to its longest prefix that is a number; a cut-short {@code true}, {@code false} or {@code
 * null} completed; a member or element that has not reached its value dropped; then the closers of
 * the open arrays and objects. Text that cannot complete into a JSON object gives "{}".
 *
 * <p>An instance follows one growing text: {@link #append} reads only the new characters and keeps
 * a small state (the open containers, the token being read), so a text received in many deltas
 * costs time linear in its length to scan. {@link #completed()} builds the completion, one copy of
 * the text; ask for it when it is needed, not after every delta. Not thread-safe.
 */
public final class PartialJson {
  /** The completion of a text that cannot complete into an object. */
  public static final String EMPTY = "{}";

  /** What an open container waits for next. */
  private enum Expect {
    KEY_OR_END,
    KEY,
    COLON,
    VALUE,
    VALUE_OR_END,
    AFTER_VALUE
  }

  /** The token being read, if any. */
  private enum Token {
    NONE,
    STRING,
    KEY,
    NUMBER,
    LITERAL
  }

  /** Where a number stands: the states of RFC 8259's number grammar, and DEAD past it. */
  private enum Number {
    START,
    MINUS,
    ZERO,
    INTEGER,
    POINT,
    FRACTION,
    EXPONENT_MARK,
    EXPONENT_SIGN,
    EXPONENT,
    DEAD;

    /** Whether the characters read so far make a whole number. */
    boolean whole() {
      return this == ZERO || this == INTEGER || this == FRACTION || this == EXPONENT;
    }

    Number next(char c) {
      boolean digit = c >= '0' && c <= '9';
      return switch (this) {
        case START -> c == '-' ? MINUS : c == '0' ? ZERO : digit ? INTEGER : DEAD;
        case MINUS -> c == '0' ? ZERO : digit ? INTEGER : DEAD;
        case ZERO -> c == '.' ? POINT : (c == 'e' || c == 'E') ? EXPONENT_MARK : DEAD;
        case INTEGER ->
            digit ? INTEGER : c == '.' ? POINT : (c == 'e' || c == 'E') ? EXPONENT_MARK : DEAD;
        case POINT -> digit ? FRACTION : DEAD;
        case FRACTION -> digit ? FRACTION : (c == 'e' || c == 'E') ? EXPONENT_MARK : DEAD;
        case EXPONENT_MARK -> (c == '+' || c == '-') ? EXPONENT_SIGN : digit ? EXPONENT : DEAD;
        case EXPONENT_SIGN, EXPONENT -> digit ? EXPONENT : DEAD;
        case DEAD -> DEAD;
      };
    }
  }

  private static final String[] LITERALS = {"true", "false", "null"};

  /** An open object or array. */
  private static final class Container {
    final char closer;
    Expect expect;

    /** The text up to here is whole: cut here to drop an unfinished member or element. */
    int keep;

    Container(char closer, Expect expect, int keep) {
      this.closer = closer;
      this.expect = expect;
      this.keep = keep;
    }
  }

  private final StringBuilder text = new StringBuilder();
  private final List<Container> open = new ArrayList<>();
  private Token token = Token.NONE;
  private int tokenStart;

  /** Inside a string: 0, or how many characters of an escape have been read (1 to 5). */
  private int escape;

  private int escapeStart;
  private Number number = Number.START;

  /** Where the longest whole prefix of the number being read ends; -1 for none. */
  private int numberEnd = -1;

  private boolean started; // the top value has begun
  private boolean finished; // the top value has ended
  private boolean broken; // the text is no prefix of one JSON object

  /** The completion of {@code text}, read at once. */
  public static String completeJson(String text) {
    PartialJson completion = new PartialJson();
    completion.append(text);
    return completion.completed();
  }

  /**
   * The completion of {@code text}, read at once.
   *
   * @deprecated renamed {@link #completeJson}, the name every runtime gives it
   */
  @Deprecated
  public static String complete(String text) {
    return completeJson(text);
  }

  /** Read {@code delta}, the next piece of the text. */
  public void append(CharSequence delta) {
    int from = text.length();
    text.append(delta);
    for (int at = from; at < text.length() && !broken; at++) {
      read(text.charAt(at), at);
    }
  }

  /** The text read so far, exactly as it came. */
  public String text() {
    return text.toString();
  }

  /** The text read so far, completed into the text of a JSON object, or "{}". */
  public String completed() {
    if (broken || !started) {
      return EMPTY;
    }
    if (finished) {
      return text.toString();
    }
    Container inner = open.get(open.size() - 1);
    return switch (token) {
      case STRING -> cut(escape > 0 ? escapeStart : text.length(), "\"");
      case NUMBER -> {
        if (number == Number.DEAD) {
          yield EMPTY; // no more text can make this a number
        }
        yield numberEnd > tokenStart ? cut(numberEnd, "") : cut(inner.keep, "");
      }
      case LITERAL -> {
        String word = text.substring(tokenStart);
        String literal = word;
        for (String candidate : LITERALS) {
          if (candidate.startsWith(word)) {
            literal = candidate;
          }
        }
        yield cut(tokenStart, literal);
      }
      case KEY, NONE -> cut(inner.keep, "");
    };
  }

  /** The text up to {@code end}, then {@code tail}, then the closers of the open containers. */
  private String cut(int end, String tail) {
    StringBuilder completion = new StringBuilder(end + tail.length() + open.size());
    completion.append(text, 0, end).append(tail);
    for (int at = open.size() - 1; at >= 0; at--) {
      completion.append(open.get(at).closer);
    }
    return completion.toString();
  }

  private void read(char c, int at) {
    switch (token) {
      case STRING, KEY -> inString(c, at);
      case NUMBER -> {
        if ("0123456789+-.eE".indexOf(c) >= 0) {
          number = number.next(c);
          if (number.whole()) {
            numberEnd = at + 1;
          }
          return;
        }
        if (!number.whole()) {
          broken = true;
          return;
        }
        valueEnded(at);
        read(c, at); // the character that ended the number is read as what comes next
      }
      case LITERAL -> {
        String word = text.substring(tokenStart, at + 1);
        boolean prefix = false;
        for (String candidate : LITERALS) {
          prefix |= candidate.startsWith(word);
          if (candidate.equals(word)) {
            valueEnded(at + 1);
          }
        }
        broken = !prefix;
      }
      case NONE -> {
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
          return;
        }
        if (finished) {
          broken = true; // something after the object
          return;
        }
        betweenTokens(c, at);
      }
    }
  }

  private void inString(char c, int at) {
    if (escape == 1) {
      broken = "\"\\/bfnrtu".indexOf(c) < 0;
      escape = c == 'u' ? 2 : 0;
    } else if (escape > 1) {
      broken = !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'));
      escape = escape == 5 ? 0 : escape + 1;
    } else if (c == '\\') {
      escape = 1;
      escapeStart = at;
    } else if (c == '"') {
      if (token == Token.KEY) {
        token = Token.NONE;
        inner().expect = Expect.COLON;
      } else {
        valueEnded(at + 1);
      }
    } else if (c < ' ') {
      broken = true; // a raw control character
    }
  }

  private void betweenTokens(char c, int at) {
    if (open.isEmpty()) {
      if (started) {
        broken = true;
      } else {
        valueStarts(c, at);
      }
      return;
    }
    Container inner = inner();
    switch (inner.expect) {
      case KEY_OR_END, KEY -> {
        if (c == '"') {
          startToken(Token.KEY, at);
        } else if (c == '}' && inner.expect == Expect.KEY_OR_END) {
          close(at);
        } else {
          broken = true;
        }
      }
      case COLON -> {
        if (c == ':') {
          inner.expect = Expect.VALUE;
        } else {
          broken = true;
        }
      }
      case VALUE, VALUE_OR_END -> {
        if (c == ']' && inner.expect == Expect.VALUE_OR_END) {
          close(at);
        } else {
          valueStarts(c, at);
        }
      }
      case AFTER_VALUE -> {
        if (c == ',') {
          inner.expect = inner.closer == '}' ? Expect.KEY : Expect.VALUE;
        } else if (c == inner.closer) {
          close(at);
        } else {
          broken = true;
        }
      }
    }
  }

  private void valueStarts(char c, int at) {
    if (!started) {
      started = true;
      if (c != '{') {
        broken = true; // only an object completes into arguments
        return;
      }
    }
    if (c == '{') {
      open.add(new Container('}', Expect.KEY_OR_END, at + 1));
    } else if (c == '[') {
      open.add(new Container(']', Expect.VALUE_OR_END, at + 1));
    } else if (c == '"') {
      startToken(Token.STRING, at);
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      startToken(Token.NUMBER, at);
      number = Number.START.next(c);
      numberEnd = number.whole() ? at + 1 : -1;
    } else if (c == 't' || c == 'f' || c == 'n') {
      startToken(Token.LITERAL, at);
    } else {
      broken = true;
    }
  }

  private void startToken(Token kind, int at) {
    token = kind;
    tokenStart = at;
  }

  private void valueEnded(int end) {
    token = Token.NONE;
    Container inner = inner();
    inner.expect = Expect.AFTER_VALUE;
    inner.keep = end;
  }

  private void close(int at) {
    open.remove(open.size() - 1);
    if (open.isEmpty()) {
      finished = true;
    } else {
      valueEnded(at + 1);
    }
  }

  private Container inner() {
    return open.get(open.size() - 1);
  }
}
