package io.github.piproto;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import com.google.gson.JsonPrimitive;
import com.google.gson.Strictness;
import com.google.gson.stream.JsonReader;
import com.google.gson.stream.JsonToken;
import java.io.IOException;
import java.io.StringReader;
import java.util.Map;

/**
 * JSON text as JavaScript reads and writes it. {@link #parse} reads as JSON.parse does, into Gson's
 * tree: its objects keep their keys in the order of the text (a duplicate key keeps its first place
 * and its last value), and its numbers keep their text, so a reader can tell what the text held.
 * {@link #stringify} writes as JSON.stringify does, with no spaces: numbers as {@link JsNumbers}
 * writes them, and strings with only {@code "}, {@code \}, the control characters and lone
 * surrogates escaped ({@code \ud83d}), everything else as it is.
 */
final class JsJson {
  private JsJson() {}

  /** The one JSON value of {@code text}; {@code where} names the text in the error. */
  static JsonElement parse(String text, String where) {
    JsonReader reader = new JsonReader(new StringReader(text));
    // Strict is RFC 8259, as JSON.parse reads it: no NaN, comments, single quotes or raw controls.
    reader.setStrictness(Strictness.STRICT);
    try {
      reader.peek(); // fails on an empty text, which the tree reader would take for null
      JsonElement value = JsonParser.parseReader(reader);
      if (reader.peek() != JsonToken.END_DOCUMENT) {
        throw new PiJsonException(where, "not valid JSON: more after the value");
      }
      return value;
    } catch (JsonParseException | IOException error) {
      String reason = String.valueOf(error.getMessage()).lines().findFirst().orElse("");
      throw new PiJsonException(where, "not valid JSON: " + reason);
    }
  }

  /** The text of an object {@code text} must hold. */
  static JsonObject parseObject(String text, String where) {
    JsonElement value = parse(text, where);
    if (!value.isJsonObject()) {
      throw new PiJsonException(
          where, "expected a JSON object, got " + PiJsonReader.typeName(value));
    }
    return value.getAsJsonObject();
  }

  /** {@code value} as JSON.stringify writes it. */
  static String stringify(JsonElement value) {
    StringBuilder out = new StringBuilder();
    write(value, out);
    return out.toString();
  }

  private static void write(JsonElement value, StringBuilder out) {
    if (value.isJsonObject()) {
      out.append('{');
      boolean first = true;
      for (Map.Entry<String, JsonElement> entry : value.getAsJsonObject().entrySet()) {
        if (!first) {
          out.append(',');
        }
        first = false;
        string(entry.getKey(), out);
        out.append(':');
        write(entry.getValue(), out);
      }
      out.append('}');
    } else if (value.isJsonArray()) {
      out.append('[');
      JsonArray array = value.getAsJsonArray();
      for (int index = 0; index < array.size(); index++) {
        if (index > 0) {
          out.append(',');
        }
        write(array.get(index), out);
      }
      out.append(']');
    } else if (value.isJsonNull()) {
      out.append("null");
    } else {
      JsonPrimitive primitive = value.getAsJsonPrimitive();
      if (primitive.isString()) {
        string(primitive.getAsString(), out);
      } else if (primitive.isBoolean()) {
        out.append(primitive.getAsBoolean());
      } else {
        // A number is a double, as JSON.parse reads it: an integer beyond 2^53 is the nearest one.
        out.append(JsNumbers.toString(primitive.getAsDouble()));
      }
    }
  }

  private static void string(String text, StringBuilder out) {
    out.append('"');
    int length = text.length();
    for (int at = 0; at < length; at++) {
      char unit = text.charAt(at);
      switch (unit) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\b' -> out.append("\\b");
        case '\f' -> out.append("\\f");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        default -> {
          if (unit < 0x20 || isLone(text, at)) {
            out.append(String.format("\\u%04x", (int) unit));
          } else {
            out.append(unit);
          }
        }
      }
    }
    out.append('"');
  }

  /** Whether the unit at {@code at} is a surrogate that is not half of a pair. */
  private static boolean isLone(String text, int at) {
    char unit = text.charAt(at);
    if (Character.isHighSurrogate(unit)) {
      return at + 1 >= text.length() || !Character.isLowSurrogate(text.charAt(at + 1));
    }
    return Character.isLowSurrogate(unit)
        && (at == 0 || !Character.isHighSurrogate(text.charAt(at - 1)));
  }
}
