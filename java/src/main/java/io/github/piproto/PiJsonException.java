package io.github.piproto;

/**
 * pi-JSON that does not describe a valid message, or a message pi-JSON cannot express: {@link
 * #path} of the bad value, JavaScript-style from the object read ({@code content[1].type}; empty
 * for the object itself), or the field of the message written ({@code ToolCall.arguments_json}),
 * and {@link #detail}, what is wrong. Read from a session file, it also names the {@link #line}.
 */
public final class PiJsonException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  private final String path;
  private final String detail;
  private final int line;

  PiJsonException(String path, String detail) {
    this(path, detail, 0);
  }

  private PiJsonException(String path, String detail, int line) {
    super(
        (line > 0 ? "line " + line + ": " : "")
            + (path.isEmpty() ? "the value" : path)
            + ": "
            + detail);
    this.path = path;
    this.detail = detail;
    this.line = line;
  }

  /** This error, found on line {@code line} (counted from 1) of a session file. */
  PiJsonException onLine(int line) {
    return new PiJsonException(path, detail, line);
  }

  /** The path of the offending value. */
  public String path() {
    return path;
  }

  /** What is wrong with it. */
  public String detail() {
    return detail;
  }

  /** The line of the session file it is on, counted from 1; 0 when it was not read from one. */
  public int line() {
    return line;
  }
}
