package pi.proto;

import static org.junit.jupiter.api.Assertions.fail;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.gson.JsonPrimitive;
import java.util.Map;

/**
 * Compares JSON texts by value: the same structure, strings and numbers, however numbers are
 * written.
 */
final class JsonValues {
  private JsonValues() {}

  static void assertSameJson(String expected, String actual) {
    if (!same(JsonParser.parseString(expected), JsonParser.parseString(actual))) {
      fail("JSON differs\nexpected: " + expected + "\nactual:   " + actual);
    }
  }

  static boolean same(JsonElement left, JsonElement right) {
    if (left.isJsonObject() && right.isJsonObject()) {
      JsonObject a = left.getAsJsonObject();
      JsonObject b = right.getAsJsonObject();
      if (!a.keySet().equals(b.keySet())) {
        return false;
      }
      for (Map.Entry<String, JsonElement> entry : a.entrySet()) {
        if (!same(entry.getValue(), b.get(entry.getKey()))) {
          return false;
        }
      }
      return true;
    }
    if (left.isJsonArray() && right.isJsonArray()) {
      if (left.getAsJsonArray().size() != right.getAsJsonArray().size()) {
        return false;
      }
      for (int index = 0; index < left.getAsJsonArray().size(); index++) {
        if (!same(left.getAsJsonArray().get(index), right.getAsJsonArray().get(index))) {
          return false;
        }
      }
      return true;
    }
    if (left.isJsonPrimitive() && right.isJsonPrimitive()) {
      JsonPrimitive a = left.getAsJsonPrimitive();
      JsonPrimitive b = right.getAsJsonPrimitive();
      if (a.isNumber() && b.isNumber()) {
        // Double.compare tells -0.0 from 0.0, which plain equality does not.
        return Double.compare(a.getAsDouble(), b.getAsDouble()) == 0;
      }
      return a.equals(b);
    }
    return left.isJsonNull() && right.isJsonNull();
  }
}
