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
import static pi.proto.Fixtures.thinkingStart;
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

/** The stream rules, as (event index, rule id), and the partial they rebuild. */
class AccumulatorTest {
  private static final StopReason STOP = StopReason.STOP_REASON_STOP;
  private static final StopReason TOOL_USE = StopReason.STOP_REASON_TOOL_USE;
  private static final StopReason ERROR = StopReason.STOP_REASON_ERROR;

  /** Apply the events until one breaks a rule; return that rule as "index rule-id". */
  private static String firstBroken(ModelEvent... events) {
    return firstBroken(new Accumulator(), events);
  }

  private static String firstBroken(Accumulator accumulator, ModelEvent... events) {
    StreamProtocolException error =
        assertThrows(
            StreamProtocolException.class,
            () -> {
              for (ModelEvent event : events) {
                accumulator.apply(event);
              }
            });
    return error.eventIndex() + " " + error.ruleId();
  }

  private static AssistantMessage failed(AssistantContent... content) {
    return assistantMessage(ERROR, content);
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void eventKindAndStart() {
    assertEquals("0 event-kind", firstBroken(ModelEvent.getDefaultInstance()));
    assertEquals("0 start-first", firstBroken(textStart(0)));
    assertEquals("1 start-once", firstBroken(start(), start()));
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void blockRules() {
    assertEquals("1 next-index", firstBroken(start(), textStart(1)));
    assertEquals("1 block-exists", firstBroken(start(), textDelta(4, "x")));
    assertEquals("1 block-exists", firstBroken(start(), textDelta(-1, "x"))); // uint32 max
    assertEquals("2 block-kind", firstBroken(start(), textStart(0), thinkingDelta(0, "x")));
    assertEquals("3 block-open", firstBroken(start(), textStart(0), textEnd(0), textDelta(0, "x")));
    assertEquals(
        "2 tool-call-id",
        firstBroken(
            start(), toolCallStart(0, "call_1", "read"), toolCallEnd(0, "call_2", "read", "{}")));
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void aBrokenRuleLeavesThePartialAsItWas() {
    Accumulator accumulator = new Accumulator();
    accumulator.apply(start());
    accumulator.apply(textStart(0));
    accumulator.apply(textDelta(0, "kept"));
    assertEquals("3 block-kind", firstBroken(accumulator, thinkingDelta(0, "x")));
    assertEquals("kept", Messages.textOf(accumulator.partial()));
    assertEquals(4, accumulator.count());
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void theTerminalEventIsValidatedAsAWhole() {
    StreamProtocolException error =
        assertThrows(
            StreamProtocolException.class,
            () -> {
              Accumulator accumulator = new Accumulator();
              accumulator.apply(start());
              accumulator.apply(toolCallStart(0, "call_1", "read"));
              accumulator.apply(toolCallEnd(0, "call_1", "read", "{}"));
              accumulator.apply(
                  done(STOP, assistantMessage(TOOL_USE, toolCall("call_1", "read", "[1]"))));
            });
    assertEquals(3, error.eventIndex());
    assertEquals("terminal-valid", error.ruleId());
    // protovalidate reports every violation; the JSON text rules wait until those all hold.
    assertEquals(
        List.of("done done.reason_matches_message"),
        error.violations().stream()
            .map(found -> found.fieldPath() + " " + found.ruleId())
            .toList());

    ModelEvent noMessage =
        ModelEvent.newBuilder().setDone(DoneEvent.newBuilder().setReason(STOP)).build();
    assertEquals("1 terminal-valid", firstBroken(start(), noMessage));
    assertEquals("1 terminal-valid", firstBroken(start(), done(ERROR, failed())));
    assertEquals(
        "0 terminal-valid",
        firstBroken(error(ERROR, failed(toolCall("call_1", "read", "{\"a\":NaN}")))));
    assertEquals(
        "3 terminal-agrees",
        firstBroken(
            start(),
            textStart(0),
            textEnd(0),
            done(TOOL_USE, assistantMessage(TOOL_USE, toolCall("call_1", "read", "{}")))));
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void deltasAreCountedInBytesOfUtf8AgainstTheLimit() {
    Accumulator accumulator = new Accumulator(10);
    accumulator.apply(start());
    accumulator.apply(textStart(0));
    accumulator.apply(textDelta(0, "一二三")); // 9 bytes
    accumulator.apply(thinkingStart(1));
    assertEquals("4 size-limit", firstBroken(accumulator, thinkingDelta(1, "ab")));
    assertEquals("一二三", Messages.textOf(accumulator.partial()));
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
