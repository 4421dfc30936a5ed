package io.github.piproto;

import static io.github.piproto.Fixtures.TEST_TIMEOUT_SECONDS;
import static io.github.piproto.Fixtures.assistantMessage;
import static io.github.piproto.Fixtures.done;
import static io.github.piproto.Fixtures.error;
import static io.github.piproto.Fixtures.start;
import static io.github.piproto.Fixtures.text;
import static io.github.piproto.Fixtures.textDelta;
import static io.github.piproto.Fixtures.textEnd;
import static io.github.piproto.Fixtures.textStart;
import static io.github.piproto.Fixtures.thinking;
import static io.github.piproto.Fixtures.thinkingDelta;
import static io.github.piproto.Fixtures.thinkingStart;
import static io.github.piproto.Fixtures.toolCall;
import static io.github.piproto.Fixtures.toolCallDelta;
import static io.github.piproto.Fixtures.toolCallEnd;
import static io.github.piproto.Fixtures.toolCallStart;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnknownFieldSet;
import io.github.piproto.ai.v1.AssistantContent;
import io.github.piproto.ai.v1.AssistantMessage;
import io.github.piproto.ai.v1.DoneEvent;
import io.github.piproto.ai.v1.ModelEvent;
import io.github.piproto.ai.v1.StopReason;
import io.github.piproto.ai.v1.StreamRule;
import io.github.piproto.ai.v1.TextContent;
import io.github.piproto.ai.v1.TextEndEvent;
import io.github.piproto.ai.v1.TextStartEvent;
import io.github.piproto.ai.v1.ThinkingEndEvent;
import io.github.piproto.ai.v1.ToolCall;
import io.github.piproto.ai.v1.ToolCallEndEvent;
import io.github.piproto.ai.v1.Usage;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

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
  void aBrokenRuleIsAStreamRuleWithItsTextId() {
    Accumulator accumulator = new Accumulator();
    accumulator.apply(start());
    accumulator.apply(textStart(0));
    accumulator.apply(textEnd(0));
    StreamProtocolException error =
        assertThrows(StreamProtocolException.class, () -> accumulator.apply(textDelta(0, "x")));
    assertEquals(StreamRule.STREAM_RULE_BLOCK_OPEN, error.rule());
    assertEquals("block-open", error.ruleId());
    assertTrue(error.getMessage().startsWith("event 3 breaks rule 'block-open': "));
    assertEquals(
        "tool-call-id", StreamProtocolException.ruleId(StreamRule.STREAM_RULE_TOOL_CALL_ID));
    assertEquals(
        "terminal-missing",
        StreamProtocolException.ruleId(StreamRule.STREAM_RULE_TERMINAL_MISSING));
    assertThrows(
        IllegalArgumentException.class,
        () -> StreamProtocolException.ruleId(StreamRule.UNRECOGNIZED));
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  @SuppressWarnings("deprecation")
  void theOldNamesStillAnswer() {
    StreamProtocolException named = new StreamProtocolException(2, "size-limit", "too big");
    assertEquals(StreamRule.STREAM_RULE_SIZE_LIMIT, named.rule());
    assertEquals("event 2 breaks rule 'size-limit': too big", named.getMessage());
    assertThrows(
        IllegalArgumentException.class, () -> new StreamProtocolException(0, "no-such-rule", "x"));
    assertEquals("text_delta", Events.kindOf(textDelta(0, "x")));
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
    assertEquals(StreamRule.STREAM_RULE_TERMINAL_VALID, error.rule());
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
            .setUsage(Usage.newBuilder().setInput(18).setOutput(12).setTotalTokens(30))
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
    List<String> live = new ArrayList<>();
    for (int index = 0; index < applied.size(); index++) {
      ModelEvent event = applied.get(index);
      AssistantMessage partial = partials.get(index);
      if (event.hasTextDelta()) {
        texts.add(Messages.textOf(partial));
      }
      if (event.hasToolcallDelta()) {
        live.add(partial.getContent(2).getToolCall().getArgumentsJson());
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
    assertEquals(
        List.of(
            "{}", "{}", "{\"path\":\"REA\"}", "{\"path\":\"README.\"}", "{\"path\":\"README.md\"}"),
        live);
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

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void anEventCarryingUsageSetsThePartialsUsage() {
    Usage early = Usage.newBuilder().setInput(1200).setTotalTokens(1200).build();
    Usage later = Usage.newBuilder().setInput(1200).setOutput(7).setTotalTokens(1207).build();
    Accumulator accumulator = new Accumulator();
    accumulator.apply(start().toBuilder().setUsage(early).build());
    assertEquals(early, accumulator.partial().getUsage());
    accumulator.apply(textStart(0));
    accumulator.apply(textDelta(0, "hi").toBuilder().setUsage(later).build());
    assertEquals(later, accumulator.partial().getUsage());
    assertEquals("hi", Messages.textOf(accumulator.partial()));
    accumulator.apply(textEnd(0)); // no usage: it did not change
    assertEquals(later, accumulator.partial().getUsage());

    // A terminal event's message carries its own usage; the event's is not applied to it.
    AssistantMessage message = assistantMessage(STOP, text("hi"));
    accumulator.apply(done(STOP, message).toBuilder().setUsage(later).build());
    assertSame(message, accumulator.partial());
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void aRefusedEventLeavesTheUsageAsItWas() {
    Accumulator accumulator = new Accumulator();
    accumulator.apply(start());
    Usage usage = Usage.newBuilder().setOutput(3).build();
    ModelEvent outOfPlace = textDelta(0, "x").toBuilder().setUsage(usage).build();
    assertThrows(StreamProtocolException.class, () -> accumulator.apply(outOfPlace));
    assertEquals(Usage.getDefaultInstance(), accumulator.partial().getUsage());
  }

  /**
   * Apply {@code events} with the limit, then {@code last}, which must break size-limit and change
   * nothing.
   */
  private static String refusedForSize(long limit, List<ModelEvent> events, ModelEvent last) {
    Accumulator accumulator = new Accumulator(limit);
    events.forEach(accumulator::apply);
    AssistantMessage before = accumulator.partial();
    String broken = firstBroken(accumulator, last);
    assertEquals(before, accumulator.partial());
    return broken;
  }

  /** Apply {@code events} with the limit, each of which must fit. */
  private static void fits(long limit, ModelEvent... events) {
    Accumulator accumulator = new Accumulator(limit);
    for (ModelEvent event : events) {
      accumulator.apply(event);
    }
  }

  private static ModelEvent callEnd(int index, ToolCall call) {
    return ModelEvent.newBuilder()
        .setToolcallEnd(ToolCallEndEvent.newBuilder().setContentIndex(index).setToolCall(call))
        .build();
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void aToolCallsIdAndNameAndTheSignaturesOfEndEventsCountTowardTheLimit() {
    ModelEvent opened = toolCallStart(0, "call_é", "write"); // 7 + 5 bytes
    fits(12, start(), opened);
    assertEquals("1 size-limit", refusedForSize(11, List.of(start()), opened));

    ModelEvent signed =
        ModelEvent.newBuilder()
            .setTextEnd(TextEndEvent.newBuilder().setTextSignature("sig-é")) // 6 bytes
            .build();
    fits(8, start(), textStart(0), textDelta(0, "hi"), signed);
    assertEquals(
        "3 size-limit",
        refusedForSize(7, List.of(start(), textStart(0), textDelta(0, "hi")), signed));
    ModelEvent thought =
        ModelEvent.newBuilder()
            .setThinkingEnd(ThinkingEndEvent.newBuilder().setThinkingSignature("abcdef"))
            .build();
    assertEquals("2 size-limit", refusedForSize(5, List.of(start(), thinkingStart(0)), thought));

    // Endless calls with 8 KiB ids and no arguments: each holds 8,195 bytes once ended (its id and
    // name, then the ended call's "{}"), so the eighth start passes 64 KiB.
    String id = "x".repeat(8192);
    List<ModelEvent> events = new ArrayList<>(List.of(start()));
    for (int index = 0; index < 7; index++) {
      events.add(toolCallStart(index, id, "n"));
      events.add(toolCallEnd(index, id, "n", "{}"));
    }
    fits(7 * 8195, events.toArray(ModelEvent[]::new));
    assertEquals("15 size-limit", refusedForSize(64 * 1024, events, toolCallStart(7, id, "n")));
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void anEndedToolCallCountsWhatItHoldsBeyondTheStreamedOne() {
    List<ModelEvent> opening =
        List.of(start(), toolCallStart(0, "c", "n"), toolCallDelta(0, "{\"a\":1}"));
    ToolCall same =
        ToolCall.newBuilder().setId("c").setName("n").setArgumentsJson("{\"a\":1}").build();
    // The call as it streamed (1 + 1 + 7 bytes) is not counted twice.
    fits(9, opening.get(0), opening.get(1), opening.get(2), callEnd(0, same));
    // Beyond it: raw arguments (7), a signature (3), and a field the schema does not know (4).
    ToolCall more =
        same.toBuilder()
            .setRawArguments("{\"a\":1}")
            .setThoughtSignature("sig")
            .setUnknownFields(
                UnknownFieldSet.newBuilder()
                    .addField(
                        100,
                        UnknownFieldSet.Field.newBuilder()
                            .addLengthDelimited(ByteString.copyFromUtf8("x"))
                            .build())
                    .build())
            .build();
    fits(23, opening.get(0), opening.get(1), opening.get(2), callEnd(0, more));
    assertEquals("3 size-limit", refusedForSize(22, opening, callEnd(0, more)));
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void thePartialIsBuiltWhenAskedForNotAtEveryDelta() {
    // Building it copies the text so far: at every delta, that is quadratic in the arguments.
    Accumulator accumulator = new Accumulator();
    accumulator.apply(start());
    accumulator.apply(toolCallStart(0, "call_1", "write"));
    accumulator.apply(toolCallDelta(0, "{\"content\":\""));
    for (int delta = 0; delta < 1000; delta++) {
      accumulator.apply(toolCallDelta(0, "line\\n"));
    }
    assertEquals(0, accumulator.builds);
    AssistantMessage partial = accumulator.partial();
    String completed = "{\"content\":\"" + "line\\n".repeat(1000) + "\"}";
    assertEquals(completed, partial.getContent(0).getToolCall().getArgumentsJson());
    assertSame(partial, accumulator.partial());
    assertEquals(1, accumulator.builds);
    // A block the event left as it was is not built again.
    accumulator.apply(
        ModelEvent.newBuilder()
            .setTextStart(TextStartEvent.newBuilder().setContentIndex(1))
            .setUsage(Usage.newBuilder().setOutput(3))
            .build());
    AssistantMessage later = accumulator.partial();
    assertEquals(2, accumulator.builds);
    assertSame(partial.getContent(0), later.getContent(0));
    assertEquals(3, later.getUsage().getOutput());
  }

  /** {@code event}, a done or error event, carrying {@code digest} as its content_sha256. */
  private static ModelEvent withDigest(ModelEvent event, byte[] digest) {
    ByteString sha256 = ByteString.copyFrom(digest);
    ModelEvent.Builder built = event.toBuilder();
    if (event.hasDone()) {
      built.getDoneBuilder().setContentSha256(sha256);
    } else {
      built.getErrorBuilder().setContentSha256(sha256);
    }
    return built.build();
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void theDigestIsOfTheEncodingOfAMessageHoldingOnlyTheContent() {
    // The corpus's digest of one text block "Hello, world" (tests/conformance/resume.yaml).
    assertEquals(
        "4neC0P5vvmFOX7GfuEtvAtP92M6zjfvlFWg903GftrA=",
        java.util.Base64.getEncoder()
            .encodeToString(Digest.contentSha256(List.of(text("Hello, world")))));
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void aTerminalEventWithTheDigestOfTheStreamedContentPasses() {
    AssistantMessage message = assistantMessage(STOP, text("Hello, world"));
    Accumulator accumulator = new Accumulator();
    for (ModelEvent event : Events.eventsOf(message, 5)) {
      accumulator.apply(
          Events.isTerminal(event)
              ? withDigest(event, Digest.contentSha256(message.getContentList()))
              : event);
    }
    assertSame(message, accumulator.partial());

    // An error cut short in a tool call: the digest is of the partial call, raw text and
    // completion, as the corpus gives it.
    Accumulator cut = new Accumulator();
    cut.apply(start());
    cut.apply(toolCallStart(0, "call_1", "read"));
    cut.apply(toolCallDelta(0, "{\"path\":\"RE"));
    ToolCall partialCall =
        ToolCall.newBuilder()
            .setId("call_1")
            .setName("read")
            .setArgumentsJson("{\"path\":\"RE\"}")
            .setRawArguments("{\"path\":\"RE")
            .build();
    AssistantMessage failure =
        failed(AssistantContent.newBuilder().setToolCall(partialCall).build()).toBuilder()
            .setErrorMessage("overloaded")
            .build();
    byte[] digest =
        java.util.Base64.getDecoder().decode("RYrHAZUOuBhgwXehGIZPwPgPekWWzr2KqKzQ8mWzyAc=");
    cut.apply(withDigest(error(ERROR, failure), digest));
    assertSame(failure, cut.partial());
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void aTerminalEventWithAnotherDigestBreaksRuleTerminalDigestKeepingThePartial() {
    AssistantMessage message = assistantMessage(STOP, text("Hello, world"));
    byte[] other = Digest.contentSha256(List.of(text("Hello, world!")));
    Accumulator accumulator = new Accumulator();
    List<ModelEvent> events = Events.eventsOf(message, 5);
    for (ModelEvent event : events.subList(0, events.size() - 1)) {
      accumulator.apply(event);
    }
    AssistantMessage before = accumulator.partial();
    assertEquals(
        (events.size() - 1) + " terminal-digest",
        firstBroken(accumulator, withDigest(events.get(events.size() - 1), other)));
    assertEquals(before, accumulator.partial());

    // An error event's digest is checked alike; no digest at all is no check.
    assertEquals(
        "3 terminal-digest",
        firstBroken(
            start(),
            textStart(0),
            textDelta(0, "Hi"),
            withDigest(error(ERROR, failed(text("Hi"))), other)));
    Accumulator plain = new Accumulator();
    plain.apply(start());
    plain.apply(textStart(0));
    plain.apply(textEnd(0));
    plain.apply(done(STOP, message));
    assertSame(message, plain.partial());
  }
}
