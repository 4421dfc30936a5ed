package pi.proto;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static pi.proto.Fixtures.TEST_TIMEOUT_SECONDS;
import static pi.proto.Fixtures.assistantMessage;
import static pi.proto.Fixtures.text;
import static pi.proto.Fixtures.toolCall;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import pi.ai.v1.Content.AssistantContent;
import pi.ai.v1.Content.ThinkingContent;
import pi.ai.v1.Message.AssistantMessage;
import pi.ai.v1.Message.StopReason;

/** The message rules, in the Python runtime's words (checked against it). */
class MessageRulesTest {
  private static String problem(String json) {
    return assertThrows(
            ValidationException.class,
            () -> MessageRules.checkJsonObject(json, "p", Limits.DEFAULT, "a JSON object"))
        .getMessage();
  }

  private static String problem(AssistantMessage message) {
    return assertThrows(ValidationException.class, () -> MessageRules.checkAssistant(message))
        .getMessage();
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void jsonObjectsOnly() {
    assertDoesNotThrow(
        () ->
            MessageRules.checkJsonObject(
                "{\"a\": [1, {\"b\": null}]}", "p", Limits.DEFAULT, "a JSON object"));
    assertEquals("p: must be a JSON object, got number", problem("1"));
    assertEquals("p: must be a JSON object, got null", problem("null"));
    assertEquals("p: must be a JSON object, got boolean", problem("true"));
    assertEquals("p: must be a JSON object, got string", problem("\"s\""));
    assertEquals(
        "p: must be a JSON object, got list", problem("[" + "[".repeat(99) + "]".repeat(99) + "]"));
    assertEquals(
        "p: must be a JSON Schema object, got list",
        assertThrows(
                ValidationException.class,
                () ->
                    MessageRules.checkJsonObject("[]", "p", Limits.DEFAULT, "a JSON Schema object"))
            .getMessage());
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void jsonIsReadAsPythonReadsIt() {
    // Each text with what Python's json.loads says of it (CPython 3.11).
    String[][] cases = {
      {"\"\\u12\"", "Invalid \\uXXXX escape: line 1 column 3 (char 2)"},
      {"\"ab\\u12", "Invalid \\uXXXX escape: line 1 column 5 (char 4)"},
      {"\"\\uZZZZ\"", "Invalid \\uXXXX escape: line 1 column 3 (char 2)"},
      {"\"\\ud800\\uZZZZ\"", "Invalid \\uXXXX escape: line 1 column 9 (char 8)"},
      {"\"\\x\"", "Invalid \\escape: line 1 column 2 (char 1)"},
      {"\"abc", "Unterminated string starting at: line 1 column 1 (char 0)"},
      {"\"a\\", "Unterminated string starting at: line 1 column 1 (char 0)"},
      {"\uFEFF{}", "Unexpected UTF-8 BOM (decode using utf-8-sig): line 1 column 1 (char 0)"},
      {"{\"a\" 1}", "Expecting ':' delimiter: line 1 column 6 (char 5)"},
      {"{\"a\":1 \"b\"}", "Expecting ',' delimiter: line 1 column 8 (char 7)"},
      {"[1 2]", "Expecting ',' delimiter: line 1 column 4 (char 3)"},
      {"-", "Expecting value: line 1 column 1 (char 0)"},
      {"-x", "Expecting value: line 1 column 1 (char 0)"},
      {"01", "Extra data: line 1 column 2 (char 1)"},
      {"1.", "Extra data: line 1 column 2 (char 1)"},
      {"1e", "Extra data: line 1 column 2 (char 1)"},
      {"1e+", "Extra data: line 1 column 2 (char 1)"},
      {"[1,]", "Expecting value: line 1 column 4 (char 3)"},
      {"{\"a\":1,}", "Expecting property name enclosed in double quotes: line 1 column 8 (char 7)"},
      {"\n\n  {\"é😀\": x}", "Expecting value: line 3 column 10 (char 11)"},
      {"1.5e3x", "Extra data: line 1 column 6 (char 5)"},
      {"nul", "Expecting value: line 1 column 1 (char 0)"},
      {"{\"a\":\"\u001f\"}", "Invalid control character at: line 1 column 7 (char 6)"},
      {"  ", "Expecting value: line 1 column 3 (char 2)"},
      {"", "Expecting value: line 1 column 1 (char 0)"},
      {"{} {}", "Extra data: line 1 column 4 (char 3)"},
      {"[\n1,\n2\n", "Expecting ',' delimiter: line 4 column 1 (char 7)"},
      {"{'a': 1}", "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"},
      {"[".repeat(100) + "]".repeat(100) + "x", "Extra data: line 1 column 201 (char 200)"},
    };
    for (String[] item : cases) {
      assertEquals("p: not valid JSON: " + item[1], problem(item[0]), item[0]);
    }
    String[] accepted = {
      "{\"a\": [NaN, Infinity, -Infinity, -0.5e-3, 1E+2, 0, \"\\ud800\\u0041\","
          + " \"\\ud83d\\ude00\"]}",
      " {\"\\\"\\\\\\/\\b\\f\\n"
          + "\\r"
          + "\\t\": {}, \"b\": [[], {}], \"c\": true, \"d\": false, \"e\": null}\n",
    };
    for (String json : accepted) {
      assertDoesNotThrow(
          () -> MessageRules.checkJsonObject(json, "p", Limits.DEFAULT, "a JSON object"), json);
    }
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void depthAndSizeLimits() {
    assertDoesNotThrow(
        () ->
            MessageRules.checkJsonObject(
                "{\"a\":".repeat(64) + "1" + "}".repeat(64), "p", Limits.DEFAULT, "a JSON object"));
    assertEquals(
        "p: JSON nested deeper than the limit of 64",
        problem("{\"a\":".repeat(65) + "1" + "}".repeat(65)));
    // Too deep for Python's parser as well: the depth is the answer, not the missing brackets.
    assertEquals("p: JSON nested deeper than the limit of 64", problem("[".repeat(2000)));
    assertEquals(
        "p: 14 bytes of JSON, above the limit of 10",
        assertThrows(
                ValidationException.class,
                () ->
                    MessageRules.checkJsonObject(
                        "{\"a\":\"ééé\"}", "p", new Limits(10, 64), "a JSON object"))
            .getMessage());
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void assistantMessages() {
    assertDoesNotThrow(
        () ->
            MessageRules.checkAssistant(assistantMessage(StopReason.STOP_REASON_STOP, text("hi"))));
    assertEquals(
        "AssistantMessage.stop_reason: must be set",
        problem(AssistantMessage.getDefaultInstance()));
    assertEquals(
        "AssistantMessage.content[1].tool_call.name: must not be empty",
        problem(
            assistantMessage(
                StopReason.STOP_REASON_TOOL_USE, text("hi"), toolCall("call_1", "", "{}"))));
    AssistantContent thinking =
        AssistantContent.newBuilder()
            .setThinking(ThinkingContent.newBuilder().setThinking("hm").setExtraJson("[]"))
            .build();
    assertEquals(
        "AssistantMessage.content[0].thinking.extra_json: must be a JSON object, got list",
        problem(assistantMessage(StopReason.STOP_REASON_STOP, thinking)));
  }
}
