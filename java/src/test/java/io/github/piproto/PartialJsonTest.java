package io.github.piproto;

import static io.github.piproto.Fixtures.TEST_TIMEOUT_SECONDS;
import static io.github.piproto.Fixtures.start;
import static io.github.piproto.Fixtures.toolCallDelta;
import static io.github.piproto.Fixtures.toolCallStart;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.github.piproto.ai.v1.ToolCall;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The completion of tool-call arguments cut short (the corpus's partial_json cases pin every rule;
 * these show each kind once), read at once and as it grows.
 */
class PartialJsonTest {
  /** The completion of {@code text}, read at once, and checked to equal the one read by pieces. */
  private static String completed(String text) {
    PartialJson growing = new PartialJson();
    text.codePoints().forEach(point -> growing.append(Character.toString(point)));
    String atOnce = PartialJson.completeJson(text);
    assertEquals(atOnce, growing.completed(), "read one character at a time: " + text);
    assertEquals(text, growing.text());
    return atOnce;
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void eachKindOfCutCompletes() {
    assertEquals("{}", completed(""));
    assertEquals("{}", completed("{"));
    assertEquals("{\"path\":\"src/ma\"}", completed("{\"path\":\"src/ma"));
    assertEquals("{\"a\":\"x\"}", completed("{\"a\":\"x\\u00")); // an escape cut short is dropped
    assertEquals("{\"n\":12}", completed("{\"n\":12."));
    assertEquals("{\"n\":-1.5}", completed("{\"n\":-1.5e+"));
    assertEquals("{}", completed("{\"n\":-"));
    assertEquals("{\"ok\":true}", completed("{\"ok\":tr"));
    assertEquals("{\"a\":null}", completed("{\"a\":n"));
    assertEquals("{\"a\":1}", completed("{\"a\":1,\"b"));
    assertEquals("{\"a\":[1,{\"b\":[]}]}", completed("{\"a\":[1,{\"b\":["));
    assertEquals("{\"a\":[1]}", completed("{\"a\":[1,"));
    assertEquals("{\"a\":1} ", completed("{\"a\":1} "));
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  @SuppressWarnings("deprecation")
  void theOldNameStillCompletes() {
    assertEquals("{\"n\":12}", PartialJson.complete("{\"n\":12."));
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void textThatCannotBecomeAnObjectIsTheEmptyObject() {
    assertEquals("{}", completed("[1,2"));
    assertEquals("{}", completed("\"text"));
    assertEquals("{}", completed("{\"a\":01"));
    assertEquals("{}", completed("{\"a\":1.e"));
    assertEquals("{}", completed("{\"a\":NaN"));
    assertEquals("{}", completed("{\"a\":1}x"));
    assertEquals("{}", completed("{'a':1"));
    assertEquals("{}", completed("{\"a\":\"\n"));
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void aStreamingToolCallShowsItsArgumentsSoFar() {
    Accumulator accumulator = new Accumulator();
    accumulator.apply(start());
    accumulator.apply(toolCallStart(0, "call_1", "edit"));
    ToolCall opened = accumulator.partial().getContent(0).getToolCall();
    assertEquals("{}", opened.getArgumentsJson());
    assertEquals("", opened.getRawArguments());
    accumulator.apply(toolCallDelta(0, "{\"path\":\"a.txt\",\"lines\":[1,2"));
    ToolCall call = accumulator.partial().getContent(0).getToolCall();
    assertEquals("{\"path\":\"a.txt\",\"lines\":[1,2]}", call.getArgumentsJson());
    assertEquals("{\"path\":\"a.txt\",\"lines\":[1,2", call.getRawArguments());
  }

  /**
   * 200 KB of arguments in deltas of 20 characters: 10,000 deltas, completed to the whole text. How
   * long it takes is for {@code make bench}: reading each delta costs its length, where a completer
   * that rescanned the text so far at every delta would read 1 GB here.
   */
  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void manyDeltasCompleteToTheWholeText() {
    StringBuilder arguments = new StringBuilder("{\"content\":\"");
    while (arguments.length() < 200_000) {
      arguments.append("line of a file, with \\\"quotes\\\" and \\u00e9\\n");
    }
    arguments.append("\",\"path\":\"notes.md\"}");
    String text = arguments.toString();

    Accumulator accumulator = new Accumulator();
    accumulator.apply(start());
    accumulator.apply(toolCallStart(0, "call_1", "write"));
    for (int at = 0; at < text.length(); at += 20) {
      accumulator.apply(toolCallDelta(0, text.substring(at, Math.min(at + 20, text.length()))));
    }
    String completed = accumulator.partial().getContent(0).getToolCall().getArgumentsJson();
    assertEquals(text, completed);
  }
}
