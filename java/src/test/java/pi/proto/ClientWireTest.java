package pi.proto;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static pi.proto.Fixtures.TEST_TIMEOUT_SECONDS;
import static pi.proto.Fixtures.assistantMessage;
import static pi.proto.Fixtures.text;
import static pi.proto.Fixtures.textDelta;
import static pi.proto.Fixtures.userContext;

import io.grpc.Status;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import pi.ai.v1.Event.ModelEvent;
import pi.ai.v1.Message.AssistantMessage;
import pi.ai.v1.Message.StopReason;

/** The client against a server that sends what a correct one never does. */
class ClientWireTest {
  private record Outcome(List<String> kinds, AssistantMessage message) {}

  /** Stream one call from a server that sends {@code messages}, then {@code status}. */
  private static Outcome play(List<byte[]> messages, Status status) throws Exception {
    try (RawServer server = RawServer.start(messages, status);
        ModelClient client = new ModelClient(server.target())) {
      AssistantMessageEventStream events = client.stream(userContext("hi"));
      List<String> kinds = drain(events);
      return new Outcome(kinds, events.result().get());
    }
  }

  private static List<ModelEvent> eventsOf(AssistantMessage message) {
    return Events.eventsOf(message, 8);
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void aStreamClosedWithoutATerminalEventIsAnErrorEvent() throws Exception {
    List<ModelEvent> events = eventsOf(assistantMessage(StopReason.STOP_REASON_STOP, text("kept")));
    Outcome outcome = play(RawServer.wire(events.subList(0, 3)), Status.OK);
    assertEquals(List.of("start", "text_start", "text_delta", "error"), outcome.kinds());
    assertEquals(StopReason.STOP_REASON_ERROR, outcome.message().getStopReason());
    assertEquals("stream ended without a terminal event", outcome.message().getErrorMessage());
    assertEquals("kept", Messages.textOf(outcome.message()));
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void eventsAfterTheTerminalEventAreIgnored() throws Exception {
    List<ModelEvent> events =
        new ArrayList<>(eventsOf(assistantMessage(StopReason.STOP_REASON_STOP, text("ok"))));
    List<String> expected = events.stream().map(Events::kindOf).toList();
    events.add(textDelta(0, "late"));
    events.add(textDelta(0, "late"));
    Outcome outcome = play(RawServer.wire(events), Status.OK);
    assertEquals(expected, outcome.kinds());
    assertEquals("done", outcome.kinds().get(outcome.kinds().size() - 1));
    assertEquals(StopReason.STOP_REASON_STOP, outcome.message().getStopReason());
    assertEquals("ok", Messages.textOf(outcome.message()));
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void anUndecodableEventBecomesOneErrorEventNamingItsIndex() throws Exception {
    List<byte[]> messages =
        new ArrayList<>(
            RawServer.wire(eventsOf(assistantMessage(StopReason.STOP_REASON_STOP)).subList(0, 1)));
    messages.add(
        new byte[] {0x0a, 0x05, 0x61, 0x62}); // a start event that claims 5 bytes and has 2
    Outcome outcome = play(messages, Status.OK);
    assertEquals(List.of("start", "error"), outcome.kinds());
    assertEquals(StopReason.STOP_REASON_ERROR, outcome.message().getStopReason());
    String problem = outcome.message().getErrorMessage();
    assertTrue(problem.startsWith("event 1: cannot decode ModelEvent from 4 bytes: "), problem);
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void anEventOutOfPlaceBecomesOneErrorEventNamingTheRule() throws Exception {
    List<ModelEvent> events =
        new ArrayList<>(eventsOf(assistantMessage(StopReason.STOP_REASON_STOP)).subList(0, 1));
    events.add(textDelta(4, "x"));
    Outcome outcome = play(RawServer.wire(events), Status.OK);
    assertEquals(List.of("start", "error"), outcome.kinds());
    assertEquals(StopReason.STOP_REASON_ERROR, outcome.message().getStopReason());
    assertEquals(
        "event 1 (text_delta) breaks rule 'block-exists': content_index 4 refers to no block (the"
            + " message has 0)",
        outcome.message().getErrorMessage());
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void aStatusIsReportedWithItsMessageUnchangedOrItsCodeName() throws Exception {
    Outcome described =
        play(List.of(), Status.INTERNAL.withDescription("parse binary: the server says so"));
    assertEquals(List.of("error"), described.kinds());
    assertEquals("parse binary: the server says so", described.message().getErrorMessage());

    List<byte[]> start =
        RawServer.wire(eventsOf(assistantMessage(StopReason.STOP_REASON_STOP)).subList(0, 1));
    Outcome bare = play(start, Status.RESOURCE_EXHAUSTED);
    assertEquals(List.of("start", "error"), bare.kinds());
    assertEquals(StopReason.STOP_REASON_ERROR, bare.message().getStopReason());
    assertEquals("RESOURCE_EXHAUSTED", bare.message().getErrorMessage());
    assertEquals("scripted-v1", bare.message().getModel());
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void cancelEndsTheCallOnTheServerToo() throws Exception {
    List<byte[]> start =
        RawServer.wire(eventsOf(assistantMessage(StopReason.STOP_REASON_STOP)).subList(0, 1));
    try (RawServer server = RawServer.start(start, null);
        ModelClient client = new ModelClient(server.target())) {
      AssistantMessageEventStream events = client.stream(userContext("hi"));
      assertEquals("start", Events.kindOf(events.iterator().next()));
      events.cancel();
      server.awaitCancelled();
      assertEquals(List.of("error"), drain(events));
      assertEquals("cancelled", events.result().get().getErrorMessage());
    }
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void theCallIsCancelledOnceTheTerminalEventArrives() throws Exception {
    List<ModelEvent> events = eventsOf(assistantMessage(StopReason.STOP_REASON_STOP, text("ok")));
    try (RawServer server = RawServer.start(RawServer.wire(events), null);
        ModelClient client = new ModelClient(server.target())) {
      AssistantMessageEventStream stream = client.stream(userContext("hi"));
      assertEquals(events.stream().map(Events::kindOf).toList(), drain(stream));
      server.awaitCancelled(); // the server would hold the call open forever
      assertEquals("ok", Messages.textOf(stream.result().get()));
    }
  }

  private static List<String> drain(AssistantMessageEventStream events) {
    List<String> kinds = new ArrayList<>();
    events.forEach(event -> kinds.add(Events.kindOf(event)));
    return kinds;
  }
}
