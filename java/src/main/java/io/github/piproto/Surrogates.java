package io.github.piproto;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonPrimitive;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * Lone surrogates: text pi writes that a protobuf string cannot hold.
 *
 * <p>JavaScript strings are UTF-16, and pi writes whatever they hold: a stream cut inside a
 * surrogate pair leaves a lone surrogate, which JSON.stringify writes as an escape ({@code
 * "\ud83d"}). A Java string holds it too, but protobuf strings are UTF-8, which has none (protobuf
 * would write {@code ?} instead). So the pi-JSON codec maps each surrogate U+D800 + k to U+10F800 +
 * k, the top of plane 16 (private use), when it reads, and back when it writes; a character of that
 * range in the text itself (U+10F7FF to U+10FFFF) is read as U+10F7FF followed by itself, so the
 * mapping is reversible. Every runtime maps the same way (docs/transcripts.md; the corpus's
 * pi_json/lone-surrogate cases pin it).
 */
final class Surrogates {
  private static final int SURROGATES = 0xD800;

  /** Where surrogate U+D800 + k goes: U+10F800 + k. */
  private static final int MAPPED = 0x10F800;

  /** In front of a character of the mapped range that was in the text itself. */
  private static final int ESCAPE = 0x10F7FF;

  private Surrogates() {}

  /** {@code text} as a protobuf string holds it. */
  static String toProto(String text) {
    if (!hasSurrogates(text)) {
      return text; // the mapped range is astral, so text without surrogates has none of it either
    }
    StringBuilder out = new StringBuilder(text.length() + 8);
    text.codePoints()
        .forEach(
            point -> {
              if (point >= SURROGATES && point <= 0xDFFF) {
                out.appendCodePoint(MAPPED + point - SURROGATES);
              } else {
                if (point >= ESCAPE) {
                  out.appendCodePoint(ESCAPE);
                }
                out.appendCodePoint(point);
              }
            });
    return out.toString();
  }

  /** The text {@link #toProto} mapped, as it was. */
  static String fromProto(String text) {
    if (!hasSurrogates(text)) {
      return text;
    }
    StringBuilder out = new StringBuilder(text.length());
    int at = 0;
    while (at < text.length()) {
      int point = text.codePointAt(at);
      at += Character.charCount(point);
      if (point == ESCAPE && at < text.length() && text.codePointAt(at) >= ESCAPE) {
        point = text.codePointAt(at); // an escaped character of the range: itself
        at += Character.charCount(point);
        out.appendCodePoint(point);
      } else if (point >= MAPPED) {
        out.append((char) (SURROGATES + point - MAPPED));
      } else {
        out.appendCodePoint(point); // a lone ESCAPE stays
      }
    }
    return out.toString();
  }

  /** A parsed JSON value with every string (keys too) mapped by {@link #toProto}. */
  static JsonElement toProto(JsonElement value) {
    return walk(value, Surrogates::toProto);
  }

  /** A JSON value with every string (keys too) mapped back by {@link #fromProto}. */
  static JsonElement fromProto(JsonElement value) {
    return walk(value, Surrogates::fromProto);
  }

  private static boolean hasSurrogates(String text) {
    for (int at = 0; at < text.length(); at++) {
      if (Character.isSurrogate(text.charAt(at))) {
        return true;
      }
    }
    return false;
  }

  private static JsonElement walk(JsonElement value, UnaryOperator<String> change) {
    if (value.isJsonObject()) {
      JsonObject out = new JsonObject();
      for (Map.Entry<String, JsonElement> entry : value.getAsJsonObject().entrySet()) {
        out.add(change.apply(entry.getKey()), walk(entry.getValue(), change));
      }
      return out;
    }
    if (value.isJsonArray()) {
      JsonArray out = new JsonArray();
      value.getAsJsonArray().forEach(item -> out.add(walk(item, change)));
      return out;
    }
    if (value.isJsonPrimitive() && value.getAsJsonPrimitive().isString()) {
      String text = value.getAsString();
      String changed = change.apply(text);
      return changed.equals(text) ? value : new JsonPrimitive(changed);
    }
    return value;
  }
}
