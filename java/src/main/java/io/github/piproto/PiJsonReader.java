package io.github.piproto;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonPrimitive;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalLong;
import java.util.Set;

/**
 * Reads the known keys of one pi-JSON object; the keys its type does not model become its extras
 * ({@link #extraJson}). Numbers are JavaScript's: an integer field takes a number with no fraction
 * ({@code 1.0}, {@code -0}), and a double field any number, read as the nearest double.
 */
final class PiJsonReader {
  /** Reads one value found at a path. */
  @FunctionalInterface
  interface Read<T> {
    T read(JsonElement value, String where);
  }

  private static final double TWO_TO_THE_63 = 0x1p63;

  private final JsonObject object;
  private final String where;
  private final List<String> keys; // the keys this object's type models, in the writer's order
  private Set<String> known; // the keys that are not extras
  private final JsonObject extra = new JsonObject();

  /** A reader of an object of a type the schema models, whose keys are {@code order}'s. */
  PiJsonReader(JsonElement value, String where, PiKeyOrder order) {
    this(value, where, order.keys(), order.known());
  }

  /** A reader of an object whose keys {@link #knowing} names once its type is known. */
  PiJsonReader(JsonElement value, String where) {
    this(value, where, List.of(), Set.of());
  }

  private PiJsonReader(JsonElement value, String where, List<String> keys, Set<String> known) {
    if (!value.isJsonObject()) {
      throw new PiJsonException(where, "expected an object, got " + typeName(value));
    }
    this.object = value.getAsJsonObject();
    this.where = where;
    this.keys = keys;
    this.known = known;
  }

  /** Takes {@code keys} as this object's keys; any other is an extra. */
  void knowing(Set<String> keys) {
    known = keys;
  }

  /** Whether {@code key} is one of the object's own keys, not an extra. */
  boolean models(String key) {
    return known.contains(key);
  }

  /** The path of the object read. */
  String where() {
    return where;
  }

  /** The value under {@code key}; null when the key is missing. */
  JsonElement get(String key) {
    return object.get(key);
  }

  PiJsonException fail(String key, String expected, JsonElement value) {
    return new PiJsonException(at(where, key), "expected " + expected + ", got " + describe(value));
  }

  String string(String key) {
    JsonElement value = get(key);
    if (isString(value)) {
      return value.getAsString();
    }
    throw fail(key, "a string", value);
  }

  Optional<String> optionalString(String key) {
    return object.has(key) ? Optional.of(string(key)) : Optional.empty();
  }

  boolean bool(String key) {
    JsonElement value = get(key);
    if (value != null && value.isJsonPrimitive() && value.getAsJsonPrimitive().isBoolean()) {
      return value.getAsBoolean();
    }
    throw fail(key, "a boolean", value);
  }

  Optional<Boolean> optionalBool(String key) {
    return object.has(key) ? Optional.of(bool(key)) : Optional.empty();
  }

  /**
   * A 64-bit integer, read as JSON.parse reads it: a double, so beyond 2^53 the nearest one.
   * JavaScript has numbers only, so {@code 1.0} and {@code -0} are integers.
   */
  long integer(String key) {
    JsonElement value = get(key);
    if (isNumber(value)) {
      double number = Double.parseDouble(value.getAsString());
      if (number == Math.rint(number) && number >= -TWO_TO_THE_63 && number < TWO_TO_THE_63) {
        return (long) number;
      }
    }
    throw fail(key, "a 64-bit integer", value);
  }

  OptionalLong optionalInteger(String key) {
    return object.has(key) ? OptionalLong.of(integer(key)) : OptionalLong.empty();
  }

  /** Any number, as the nearest double, as JSON.parse reads it. */
  OptionalDouble optionalNumber(String key) {
    JsonElement value = get(key);
    if (value == null) {
      return OptionalDouble.empty();
    }
    if (!isNumber(value)) {
      throw fail(key, "a number", value);
    }
    return OptionalDouble.of(value.getAsDouble());
  }

  /** One of an enum's pi words. */
  <E> E choice(String key, PiWords<E> words) {
    String word = string(key);
    return words
        .value(word)
        .orElseThrow(
            () ->
                new PiJsonException(
                    at(where, key),
                    "expected one of "
                        + words.list()
                        + ", got "
                        + JsJson.stringify(new JsonPrimitive(word))));
  }

  <E> Optional<E> optionalChoice(String key, PiWords<E> words) {
    return object.has(key) ? Optional.of(choice(key, words)) : Optional.empty();
  }

  <T> List<T> items(String key, Read<T> read) {
    return list(get(key), at(where, key), read);
  }

  <T> Optional<T> child(String key, Read<T> read) {
    JsonElement value = get(key);
    return value == null ? Optional.empty() : Optional.of(read.read(value, at(where, key)));
  }

  /**
   * A repeated field the writer leaves out when empty: an empty list (or, with {@code object}, an
   * empty object) given under its key, which the field cannot tell from none, is kept as an extra.
   */
  <T> List<T> omittedWhenEmpty(String key, Read<List<T>> read, boolean object) {
    JsonElement value = get(key);
    if (value == null) {
      return List.of();
    }
    boolean empty =
        object
            ? value.isJsonObject() && value.getAsJsonObject().isEmpty()
            : value.isJsonArray() && value.getAsJsonArray().isEmpty();
    if (empty) {
      extra.add(key, value);
      return List.of();
    }
    return read.read(value, at(where, key));
  }

  /** A value kept as JSON text; absent stays absent. */
  Optional<String> jsonText(String key, boolean objectOnly) {
    JsonElement value = get(key);
    if (value == null) {
      return Optional.empty();
    }
    if (objectOnly && !value.isJsonObject()) {
      throw fail(key, "an object", value);
    }
    return Optional.of(JsJson.stringify(value));
  }

  /**
   * The keys the type does not model (and the empty values {@link #omittedWhenEmpty} kept), and the
   * keys' order when the writer's differs, as JSON object text; empty when there are none.
   */
  String extraJson() {
    for (Map.Entry<String, JsonElement> entry : object.entrySet()) {
      if (!known.contains(entry.getKey())) {
        extra.add(entry.getKey(), entry.getValue());
      }
    }
    if (!keys.isEmpty() && !inWriterOrder()) {
      JsonArray order = new JsonArray();
      object.keySet().forEach(order::add);
      extra.add(PiKeyOrder.ORDER_KEY, order);
    }
    return extra.isEmpty() ? "" : JsJson.stringify(extra);
  }

  /**
   * Whether the writer, which writes the modelled keys in its order and the extras after them,
   * gives the keys in the order this object has them.
   */
  private boolean inWriterOrder() {
    List<String> given = new ArrayList<>(object.keySet());
    List<String> written = new ArrayList<>(given.size());
    for (String key : keys) {
      if (object.has(key)) {
        written.add(key);
      }
    }
    if (written.size() < given.size()) {
      for (String key : given) {
        if (!known.contains(key)) {
          written.add(key);
        }
      }
    }
    return given.equals(written);
  }

  static <T> List<T> list(JsonElement value, String where, Read<T> read) {
    if (value == null || !value.isJsonArray()) {
      throw new PiJsonException(where, "expected a list, got " + describe(value));
    }
    JsonArray array = value.getAsJsonArray();
    List<T> items = new ArrayList<>(array.size());
    for (int index = 0; index < array.size(); index++) {
      items.add(read.read(array.get(index), where + "[" + index + "]"));
    }
    return items;
  }

  /** The path of {@code key} inside the value at {@code where}. */
  static String at(String where, String key) {
    return where.isEmpty() ? key : where + "." + key;
  }

  static boolean isString(JsonElement value) {
    return value != null && value.isJsonPrimitive() && value.getAsJsonPrimitive().isString();
  }

  /** Whether {@code value} is the JSON string {@code text}. */
  static boolean isString(JsonElement value, String text) {
    return isString(value) && value.getAsString().equals(text);
  }

  static boolean isNumber(JsonElement value) {
    return value != null && value.isJsonPrimitive() && value.getAsJsonPrimitive().isNumber();
  }

  /** Whether a JSON number's text is an integer literal: no fraction and no exponent. */
  static boolean isIntegerText(String text) {
    return text.indexOf('.') < 0 && text.indexOf('e') < 0 && text.indexOf('E') < 0;
  }

  static String typeName(JsonElement value) {
    if (value.isJsonObject()) {
      return "object";
    }
    if (value.isJsonArray()) {
      return "list";
    }
    if (value.isJsonNull()) {
      return "null";
    }
    JsonPrimitive primitive = value.getAsJsonPrimitive();
    return primitive.isString() ? "string" : primitive.isBoolean() ? "boolean" : "number";
  }

  static String describe(JsonElement value) {
    if (value == null) {
      return "nothing (the key is missing)";
    }
    String text = JsJson.stringify(value);
    return typeName(value) + " " + (text.length() > 40 ? text.substring(0, 40) : text);
  }
}
