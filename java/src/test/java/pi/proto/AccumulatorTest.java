package pi.proto;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static pi.proto.Fixtures.TEST_TIMEOUT_SECONDS;
import static pi.proto.Fixtures.assistantMessage;
import static pi.proto.Fixtures.done;
import static pi.proto.Fixtures.error;
import static pi.proto.Fixtures.start;
import static pi.proto.Fixtures.text;
import static pi.proto.Fixtures.textDelta;
import static pi.proto.Fixtures.textEnd;
import static pi.proto.Fixtures.textStart;
import static pi.proto.Fixtures.thinking;
import static pi.proto.Fixtures.thinkingDelta;
import static pi.proto.Fixtures.toolCall;
import static pi.proto.Fixtures.toolCallDelta;
import static pi.proto.Fixtures.toolCallEnd;
import static pi.proto.Fixtures.toolCallStart;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import pi.ai.v1.Content.AssistantContent;
import pi.ai.v1.Content.TextContent;
import pi.ai.v1.Event.DoneEvent;
import pi.ai.v1.Event.ModelEvent;
import pi.ai.v1.Event.TextEndEvent;
import pi.ai.v1.Message.AssistantMessage;
import pi.ai.v1.Message.StopReason;

/** The rules and their messages, as the Python runtime words them (checked against it). */
class AccumulatorTest {
  private static final StopReason STOP = StopReason.STOP_REASON_STOP;
  private static final StopReason TOOL_USE = StopReason.STOP_REASON_TOOL_USE;
  private static final StopReason ERROR = StopReason.STOP_REASON_ERROR;

  /** Apply every event, returning the message of each one that broke a rule. */
  private static List<String> broken(ModelEvent... events) {
    Accumulator accumulator = new Accumulator();
    List<String> messages = new ArrayList<>();
    for (ModelEvent event : events) {
      try {
        accumulator.apply(event);
      } catch (StreamProtocolException error) {
        messages.add(error.getMessage());
      }
    }
    return messages;
  }

  private static void assertBroken(String expected, ModelEvent... events) {
    assertEquals(List.of(expected), broken(events));
  }

  private static AssistantMessage failed(AssistantContent... content) {
    return assistantMessage(ERROR, content);
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void eventKindAndStart() {
    assertBroken(
        "event 0 breaks rule 'event-kind': no event kind is set", ModelEvent.getDefaultInstance());
    assertBroken(
        "event 0 (text_start) breaks rule 'start-first': a stream opens with start", textStart(0));
    assertEquals(
        List.of(
            "event 0 breaks rule 'event-kind': no event kind is set",
            "event 1 (start) breaks rule 'start-first': start must be the first event"),
        broken(ModelEvent.getDefaultInstance(), start()));
    assertBroken(
        "event 1 (start) breaks rule 'start-once': start must be the first event",
        start(),
        start());
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void blockRules() {
    assertBroken(
        "event 1 (text_start) breaks rule 'next-index': content_index 1 must open the next block,"
            + " 0",
        start(),
        textStart(1));
    assertBroken(
        "event 1 (text_delta) breaks rule 'block-exists': content_index 4 refers to no block (the"
            + " message has 0)",
        start(),
        textDelta(4, "x"));
    assertBroken(
        "event 1 (text_delta) breaks rule 'block-exists': content_index 4294967295 refers to no"
            + " block (the message has 0)",
        start(),
        textDelta(-1, "x")); // the largest uint32
    assertBroken(
        "event 2 (thinking_delta) breaks rule 'block-kind': block 0 is not a thinking block",
        start(),
        textStart(0),
        thinkingDelta(0, "x"));
    assertBroken(
        "event 2 (toolcall_end) breaks rule 'block-kind': block 0 is not a tool call block",
        start(),
        textStart(0),
        toolCallEnd(0, "call_1", "read", "{}"));
    assertBroken(
        "event 3 (text_delta) breaks rule 'block-open': block 0 has already ended",
        start(),
        textStart(0),
        textEnd(0),
        textDelta(0, "x"));
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void toolCallId() {
    assertBroken(
        "event 2 (toolcall_end) breaks rule 'tool-call-id': tool call 0 started as 'call_1' but"
            + " ends as 'call_2'",
        start(),
        toolCallStart(0, "call_1", "read"),
        toolCallEnd(0, "call_2", "read", "{}"));
    assertBroken(
        "event 2 (toolcall_end) breaks rule 'tool-call-id': tool call 0 started as \"it's\" but"
            + " ends as 'a\\n"
            + "b\\u200b'",
        start(),
        toolCallStart(0, "it's", "read"),
        toolCallEnd(0, "a\nb\u200b", "read", "{}"));
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void terminalRules() {
    assertBroken(
        "event 1 (done) breaks rule 'terminal-message': carries no message",
        start(),
        ModelEvent.newBuilder().setDone(DoneEvent.newBuilder().setReason(STOP)).build());
    assertBroken(
        "event 1 (done) breaks rule 'terminal-reason': reason ERROR with a message stopped by"
            + " ERROR; done takes STOP, LENGTH, TOOL_USE, equal in both",
        start(),
        done(ERROR, failed()));
    assertBroken(
        "event 1 (done) breaks rule 'terminal-reason': reason STOP with a message stopped by"
            + " TOOL_USE; done takes STOP, LENGTH, TOOL_USE, equal in both",
        start(),
        done(STOP, assistantMessage(TOOL_USE)));
    assertBroken(
        "event 1 (error) breaks rule 'terminal-reason': reason STOP with a message stopped by STOP;"
            + " error takes ERROR, ABORTED, equal in both",
        start(),
        error(STOP, assistantMessage(STOP)));
    AssistantMessage unknown = assistantMessage(STOP).toBuilder().setStopReasonValue(9).build();
    ModelEvent unknownReason =
        ModelEvent.newBuilder()
            .setDone(DoneEvent.newBuilder().setReasonValue(9).setMessage(unknown))
            .build();
    assertBroken(
        "event 1 (done) breaks rule 'terminal-reason': reason 9 with a message stopped by 9; "
            + "done takes STOP, LENGTH, TOOL_USE, equal in both",
        start(),
        unknownReason);
    assertBroken(
        "event 3 (done) breaks rule 'terminal-agrees': the message has blocks ['tool_call'], the"
            + " stream built ['text']",
        start(),
        textStart(0),
        textEnd(0),
        done(TOOL_USE, assistantMessage(TOOL_USE, toolCall("call_1", "read", "{}"))));
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void messageValid() {
    assertBroken(
        "event 3 (done) breaks rule 'message-valid': message.content[0].tool_call.arguments_json:"
            + " must be a JSON object, got list",
        start(),
        toolCallStart(0, "call_1", "read"),
        toolCallEnd(0, "call_1", "read", "{}"),
        done(TOOL_USE, assistantMessage(TOOL_USE, toolCall("call_1", "read", "[1]"))));
    assertBroken(
        "event 0 (error) breaks rule 'message-valid': message.content[0].tool_call.id: must not be"
            + " empty",
        error(ERROR, failed(toolCall("", "read", "{}"))));
    assertBroken(
        "event 0 (error) breaks rule 'message-valid': message.content[0].tool_call.arguments_json:"
            + " JSON nested deeper than the limit of 64",
        error(
            ERROR,
            failed(toolCall("call_1", "read", "{\"a\":".repeat(70) + "1" + "}".repeat(70)))));
    assertBroken(
        "event 0 (error) breaks rule 'message-valid': message.content[0].tool_call.arguments_json:"
            + " must be a JSON object, got list",
        error(ERROR, failed(toolCall("call_1", "read", "[".repeat(70) + "]".repeat(70)))));
    assertBroken(
        "event 0 (error) breaks rule 'message-valid': message.extra_json: must be a JSON object,"
            + " got string",
        error(ERROR, failed().toBuilder().setExtraJson("\"x\"").build()));
    assertBroken(
        "event 0 (error) breaks rule 'message-valid': message.content[0].block: exactly one of"
            + " text, thinking, tool_call must be set, found none",
        error(ERROR, failed(AssistantContent.getDefaultInstance())));
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void aFailedCallMaySendItsTerminalEventAlone() {
    AssistantMessage message = failed().toBuilder().setErrorMessage("refused").build();
    Accumulator accumulator = new Accumulator();
    accumulator.apply(error(ERROR, message));
    assertSame(message, accumulator.partial());
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void thePartialIsRebuiltAtEveryStep() {
    AssistantMessage message =
        assistantMessage(
                TOOL_USE,
                thinking("让我想想 🤔"),
                text("我先读取项目说明。"),
                toolCall("call_1", "read", "{\"path\":\"README.md\"}"))
            .toBuilder()
            .setUsage(
                pi.ai.v1.Message.Usage.newBuilder().setInput(18).setOutput(12).setTotalTokens(30))
            .build();
    Accumulator accumulator = new Accumulator();
    List<ModelEvent> applied = Events.eventsOf(message, 4);
    List<AssistantMessage> partials = new ArrayList<>();
    for (ModelEvent event : applied) {
      accumulator.apply(event);
      assertFalse(event.hasPartial());
      partials.add(accumulator.partial());
    }
    List<String> texts = new ArrayList<>();
    List<String> raw = new ArrayList<>();
    for (int index = 0; index < applied.size(); index++) {
      ModelEvent event = applied.get(index);
      AssistantMessage partial = partials.get(index);
      if (event.hasTextDelta()) {
        texts.add(Messages.textOf(partial));
      }
      if (event.hasToolcallDelta()) {
        assertEquals("{}", partial.getContent(2).getToolCall().getArgumentsJson());
        raw.add(partial.getContent(2).getToolCall().getRawArguments());
      }
    }
    // Each partial is a message of its own: later events do not change it.
    assertEquals(List.of("我先读取", "我先读取项目说明", "我先读取项目说明。"), texts);
    assertEquals(
        List.of(
            "{\"pa",
            "{\"path\":",
            "{\"path\":\"REA",
            "{\"path\":\"README.",
            "{\"path\":\"README.md\"}"),
        raw);
    assertEquals("让我想想 🤔", partials.get(4).getContent(0).getThinking().getThinking());
    assertTrue(partials.get(0).getContentList().isEmpty());
    assertEquals("scripted-v1", partials.get(0).getModel());

    assertSame(message, partials.get(partials.size() - 1));
    assertSame(message, accumulator.partial());
    assertEquals(applied.size(), accumulator.count());
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void endEventsSetSignaturesAndTheFinishedToolCall() {
    Accumulator accumulator = new Accumulator();
    accumulator.apply(start());
    accumulator.apply(textStart(0));
    accumulator.apply(textDelta(0, "hi"));
    ModelEvent signed =
        ModelEvent.newBuilder()
            .setTextEnd(TextEndEvent.newBuilder().setContentIndex(0).setTextSignature("sig"))
            .build();
    accumulator.apply(signed);
    TextContent text = accumulator.partial().getContent(0).getText();
    assertEquals("hi", text.getText());
    assertEquals("sig", text.getTextSignature());

    accumulator.apply(toolCallStart(1, "call_1", "read"));
    accumulator.apply(toolCallDelta(1, "{\"path\": \"README.md\"}"));
    accumulator.apply(toolCallEnd(1, "call_1", "read", "{\"path\":\"README.md\"}"));
    assertEquals(
        toolCall("call_1", "read", "{\"path\":\"README.md\"}"),
        accumulator.partial().getContent(1));
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void theEventsOfAMessageRebuildIt() {
    AssistantMessage message =
        assistantMessage(STOP, text("𝄞 😀 𠀀 and more"), thinking(""), text("")).toBuilder()
            .setErrorMessage("kept")
            .build();
    Accumulator accumulator = new Accumulator();
    for (ModelEvent event : Events.eventsOf(message, 3)) {
      accumulator.apply(event);
    }
    assertSame(message, accumulator.partial());
    assertThrows(IllegalArgumentException.class, () -> Events.eventsOf(message, 0));
  }
}
