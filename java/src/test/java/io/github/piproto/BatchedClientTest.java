package io.github.piproto;

import static io.github.piproto.Fixtures.TEST_TIMEOUT_SECONDS;
import static io.github.piproto.Fixtures.assistantMessage;
import static io.github.piproto.Fixtures.done;
import static io.github.piproto.Fixtures.start;
import static io.github.piproto.Fixtures.text;
import static io.github.piproto.Fixtures.textDelta;
import static io.github.piproto.Fixtures.textEnd;
import static io.github.piproto.Fixtures.textStart;
import static io.github.piproto.Fixtures.toolCall;
import static io.github.piproto.Fixtures.userContext;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.piproto.ai.v1.AssistantMessage;
import io.github.piproto.ai.v1.ModelEvent;
import io.github.piproto.ai.v1.StopReason;
import io.github.piproto.ai.v1.StreamBatchedView;
import io.github.piproto.ai.v1.StreamRequest;
import io.grpc.Metadata;
import io.grpc.Status;
import java.io.ByteArrayOutputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * StreamBatched: a batch's events are taken one at a time, as if each had come in a message of its
 * own; a malformed one fails at its own index after the ones in front of it; a server without
 * StreamBatched is read through Stream; {@code withBatched(false)} calls Stream alone.
 */
class BatchedClientTest {
  private static final AssistantMessage ANSWER =
      assistantMessage(
          StopReason.STOP_REASON_TOOL_USE,
          text("我先读取项目说明。"),
          toolCall("call_1", "read", "{\"path\":\"README.md\"}"));

  /** The kinds of the events of {@code events}, drained. */
  private static List<String> drain(AssistantMessageEventStream events) {
    List<String> kinds = new ArrayList<>();
    for (ModelEvent event : events) {
      kinds.add(Events.eventKind(event));
    }
    return kinds;
  }

  /** The broken rule that ended a stream, as "index rule-id". */
  private static String brokenRule(AssistantMessageEventStream events) {
    StreamProtocolException rule = events.failure().orElseThrow().rule().orElseThrow();
    return rule.eventIndex() + " " + rule.ruleId();
  }

  /** The bytes of a StreamBatchedResponse of these events. */
  private static byte[] batchOf(ModelEvent... events) {
    StreamBatchedView.Builder batch = StreamBatchedView.newBuilder();
    for (ModelEvent event : events) {
      batch.addEvents(event.toByteString());
    }
    return batch.build().toByteArray();
  }

  private static byte[] concat(byte[]... parts) {
    ByteArrayOutputStream all = new ByteArrayOutputStream();
    for (byte[] part : parts) {
      all.writeBytes(part);
    }
    return all.toByteArray();
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void aBatchOfSeveralEventsYieldsEachWithItsOwnPartial() throws Exception {
    List<ModelEvent> sent = Events.eventsOf(ANSWER, 2);
    try (FakeModelServer server =
            FakeModelServer.start(
                (request, headers, call) -> {
                  call.sendBatch(sent.toArray(ModelEvent[]::new)); // the whole stream, one message
                  call.finish();
                });
        ModelClient client = new ModelClient(server.target())) {
      AssistantMessageEventStream events = client.stream(userContext("hi"));
      Accumulator expected = new Accumulator();
      int index = 0;
      for (ModelEvent event : events) {
        assertEquals(sent.get(index), event, "event " + index);
        if (Events.isTerminal(event)) {
          assertEquals(ANSWER, events.partial());
        } else {
          expected.apply(event);
          assertEquals(expected.partial(), events.partial(), "the partial as of event " + index);
        }
        index += 1;
      }
      assertEquals(sent.size(), index);
      assertEquals(ANSWER, events.result().get());
      assertTrue(events.failure().isEmpty());
      assertEquals(List.of("StreamBatched"), server.methods());
    }
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void aMalformedEventInABatchKeepsTheEventsBeforeItAndFailsAtItsIndex() throws Exception {
    AssistantMessage never = assistantMessage(StopReason.STOP_REASON_STOP, text("ab"));
    try (FakeModelServer server =
            FakeModelServer.start(
                (request, headers, call) -> {
                  call.sendBatch(start(), textStart(0));
                  call.sendBatchBytes(
                      textDelta(0, "ab").toByteArray(),
                      new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff},
                      done(StopReason.STOP_REASON_STOP, never).toByteArray());
                  call.finish();
                });
        ModelClient client = new ModelClient(server.target())) {
      AssistantMessageEventStream events = client.stream(userContext("hi"));
      assertEquals(List.of("start", "text_start", "text_delta", "error"), drain(events));
      assertEquals("3 event-decode", brokenRule(events)); // events, not messages, are counted
      AssistantMessage message = events.result().get();
      assertEquals(StopReason.STOP_REASON_ERROR, message.getStopReason());
      assertEquals("ab", Messages.textOf(message)); // the good events are kept
    }
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void aBatchCutShortFailsAsAWholeAtTheIndexOfItsFirstEvent() throws Exception {
    try (FakeModelServer server =
            FakeModelServer.start(
                (request, headers, call) -> {
                  call.sendBatch(start());
                  // Two events, then field 1 saying 16 bytes follow where 1 does.
                  call.sendMessage(
                      concat(
                          batchOf(textStart(0), textDelta(0, "lost")),
                          new byte[] {0x0A, 0x10, 0x01}));
                  call.finish();
                });
        ModelClient client = new ModelClient(server.target())) {
      AssistantMessageEventStream events = client.stream(userContext("hi"));
      assertEquals(List.of("start", "error"), drain(events));
      assertEquals("1 event-decode", brokenRule(events)); // none of the batch's events is applied
      AssistantMessage message = events.result().get();
      assertEquals(0, message.getContentCount());
      assertTrue(
          message.getErrorMessage().contains("cannot decode the batch: "),
          message.getErrorMessage());
    }
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void otherFieldsOfABatchAreSkippedAndAFieldThatDoesNotParseFailsTheBatch() throws Exception {
    AssistantMessage textMessage = assistantMessage(StopReason.STOP_REASON_STOP, text(""));
    byte[] others =
        concat(
            new byte[] {0x10, (byte) 0x96, 0x01}, // field 2, varint 150
            new byte[] {0x1D, 1, 2, 3, 4}, // field 3, fixed32
            new byte[] {0x21, 1, 2, 3, 4, 5, 6, 7, 8}, // field 4, fixed64
            new byte[] {0x2A, 0x02, 0x0A, 0x00}, // field 5, length-delimited
            new byte[] {0x33, 0x08, 0x01, 0x34}); // field 6, a group holding a varint
    try (FakeModelServer server =
            FakeModelServer.start(
                (request, headers, call) -> {
                  call.sendBatch(start());
                  switch (request.getModel()) {
                    case "group" ->
                        call.sendMessage(concat(batchOf(textStart(0)), new byte[] {0x13}));
                    case "field0" ->
                        call.sendMessage(concat(batchOf(textStart(0)), new byte[] {0x02, 0x00}));
                    case "varint1" -> // protobuf-java keeps it as an unknown field
                        call.sendMessage(concat(batchOf(textStart(0)), new byte[] {0x08, 0x01}));
                    default ->
                        call.sendMessage(
                            concat(
                                others,
                                batchOf(textStart(0)),
                                others,
                                batchOf(
                                    textEnd(0), done(StopReason.STOP_REASON_STOP, textMessage))));
                  }
                  call.finish();
                });
        ModelClient client = new ModelClient(server.target())) {
      AssistantMessageEventStream events = client.stream(userContext("hi"));
      assertEquals(List.of("start", "text_start", "text_end", "done"), drain(events));
      assertEquals(textMessage, events.result().get());

      for (String model : List.of("group", "field0")) { // a group never ended; field number 0
        AssistantMessageEventStream bad =
            client.stream(
                StreamRequest.newBuilder().setModel(model).setContext(userContext("hi")).build());
        assertEquals(List.of("start", "error"), drain(bad), model);
        assertEquals("1 event-decode", brokenRule(bad), model);
        String why = bad.result().get().getErrorMessage();
        assertTrue(why.contains("cannot decode the batch: "), why);
      }
      AssistantMessageEventStream unknown =
          client.stream(
              StreamRequest.newBuilder().setModel("varint1").setContext(userContext("hi")).build());
      assertEquals(List.of("start", "text_start", "error"), drain(unknown));
      assertEquals("2 terminal-missing", brokenRule(unknown));
    }
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void theRulesAndTheSizeLimitCountTheEventsOfABatch() throws Exception {
    try (FakeModelServer server =
            FakeModelServer.start(
                (request, headers, call) -> {
                  if (request.getModel().equals("rule")) {
                    call.sendBatch(start(), textStart(0), textDelta(0, "a"), textDelta(4, "x"));
                  } else {
                    call.sendBatch(
                        start(), textStart(0), textDelta(0, "12345678"), textDelta(0, "abc"));
                  }
                  call.finish();
                });
        ModelClient client = new ModelClient(server.target())) {
      StreamRequest rule =
          StreamRequest.newBuilder().setModel("rule").setContext(userContext("hi")).build();
      AssistantMessageEventStream broken = client.stream(rule);
      assertEquals(List.of("start", "text_start", "text_delta", "error"), drain(broken));
      assertEquals("3 block-exists", brokenRule(broken));
      assertEquals("a", Messages.textOf(broken.result().get()));

      AssistantMessageEventStream big =
          client.withMaxMessageBytes(10).stream(userContext("hi")); // 8 bytes, then 11
      assertEquals(List.of("start", "text_start", "text_delta", "error"), drain(big));
      assertEquals("3 size-limit", brokenRule(big));
    }
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void aServerWithoutStreamBatchedIsReadThroughStream() throws Exception {
    CompletableFuture<Long> secondsLeft = new CompletableFuture<>();
    CompletableFuture<String> header = new CompletableFuture<>();
    Metadata.Key<String> key = Metadata.Key.of("x-test", Metadata.ASCII_STRING_MARSHALLER);
    try (FakeModelServer server =
            FakeModelServer.startWithoutBatched(
                (request, headers, call) -> {
                  io.grpc.Deadline deadline = io.grpc.Context.current().getDeadline();
                  secondsLeft.complete(
                      deadline == null ? -1 : deadline.timeRemaining(TimeUnit.SECONDS));
                  header.complete(headers.get(key));
                  Events.eventsOf(ANSWER, 4).forEach(call::send);
                  call.finish();
                });
        ModelClient client = new ModelClient(server.target())) {
      Metadata headers = new Metadata();
      headers.put(key, "fallback");
      StreamRequest request = StreamRequest.newBuilder().setContext(userContext("hi")).build();
      AssistantMessageEventStream events = client.stream(request, Duration.ofSeconds(60), headers);
      List<String> kinds = drain(events);
      assertEquals(Events.eventsOf(ANSWER, 4).stream().map(Events::eventKind).toList(), kinds);
      assertEquals(ANSWER, events.result().get());
      assertTrue(events.failure().isEmpty());
      assertEquals(List.of("Stream"), server.methods()); // StreamBatched was answered UNIMPLEMENTED
      assertEquals("fallback", header.get()); // the headers go along
      // Within the first deadline: less than it, by how long the first call took (less than the
      // test may take).
      long left = secondsLeft.get();
      assertTrue(left > 60 - TEST_TIMEOUT_SECONDS && left < 60, "seconds left: " + left);
    }
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void unimplementedAfterAnEventIsAFailureNotAFallback() throws Exception {
    try (FakeModelServer server =
            FakeModelServer.start(
                (request, headers, call) -> {
                  call.send(start());
                  call.fail(Status.UNIMPLEMENTED.withDescription("not this far"));
                });
        ModelClient client = new ModelClient(server.target())) {
      AssistantMessageEventStream events = client.stream(userContext("hi"));
      assertEquals(List.of("start", "error"), drain(events));
      assertEquals("not this far", events.result().get().getErrorMessage());
      assertEquals("UNIMPLEMENTED", events.failure().orElseThrow().statusCode().orElseThrow());
      assertEquals(List.of("StreamBatched"), server.methods());
    }
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void withBatchedFalseCallsStreamAlone() throws Exception {
    try (FakeModelServer server =
            FakeModelServer.start(
                (request, headers, call) -> {
                  Events.eventsOf(ANSWER, 4).forEach(call::send);
                  call.finish();
                });
        ModelClient client = new ModelClient(server.target())) {
      AssistantMessageEventStream events = client.withBatched(false).stream(userContext("hi"));
      drain(events);
      assertEquals(ANSWER, events.result().get());
      assertEquals(List.of("Stream"), server.methods());

      client.stream(userContext("hi")).result().get(); // the client itself still batches
      assertEquals(List.of("Stream", "StreamBatched"), server.methods());
    }
  }
}
