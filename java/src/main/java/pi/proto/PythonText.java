package pi.proto;

import java.util.List;
import java.util.stream.Collectors;

/**
 * Values written as Python's repr() writes them, so the rules' messages read the same in both
 * runtimes.
 */
final class PythonText {
  private PythonText() {}

  /** A list of names: {@code ['text', 'tool_call']}. */
  static String list(List<String> names) {
    return names.stream().map(PythonText::repr).collect(Collectors.joining(", ", "[", "]"));
  }

  /** A string: quoted and escaped, e.g. {@code 'call_1'} or {@code "it's"}. */
  static String repr(String value) {
    char quote = value.indexOf('\'') >= 0 && value.indexOf('"') < 0 ? '"' : '\'';
    StringBuilder out = new StringBuilder().append(quote);
    value
        .codePoints()
        .forEach(
            point -> {
              if (point == '\\' || point == quote) {
                out.append('\\').appendCodePoint(point);
              } else if (point == '\n') {
                out.append("\\n");
              } else if (point == '\r') {
                out.append("\\r");
              } else if (point == '\t') {
                out.append("\\t");
              } else if (point != ' ' && !isPrintable(point)) {
                if (point < 0x100) {
                  out.append(String.format("\\x%02x", point));
                } else if (point < 0x10000) {
                  out.append(String.format("\\u%04x", point));
                } else {
                  out.append(String.format("\\U%08x", point));
                }
              } else {
                out.appendCodePoint(point);
              }
            });
    return out.append(quote).toString();
  }

  /** Python's str.isprintable(): everything but the Unicode categories C* and Z*. */
  private static boolean isPrintable(int point) {
    return switch (Character.getType(point)) {
      case Character.CONTROL,
          Character.FORMAT,
          Character.SURROGATE,
          Character.PRIVATE_USE,
          Character.UNASSIGNED,
          Character.SPACE_SEPARATOR,
          Character.LINE_SEPARATOR,
          Character.PARAGRAPH_SEPARATOR ->
          false;
      default -> true;
    };
  }
}
