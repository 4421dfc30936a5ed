package io.github.piproto;

import static io.github.piproto.Fixtures.TEST_TIMEOUT_SECONDS;
import static io.github.piproto.Fixtures.assistantMessage;
import static io.github.piproto.Fixtures.text;
import static io.github.piproto.Fixtures.userContext;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.github.piproto.ai.v1.AssistantMessage;
import io.github.piproto.ai.v1.CancelRequest;
import io.github.piproto.ai.v1.ModelEvent;
import io.github.piproto.ai.v1.ResumeRequest;
import io.github.piproto.ai.v1.StopReason;
import io.github.piproto.ai.v1.StreamRequest;
import io.grpc.Metadata;
import io.grpc.Status;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Numbered, resumable streams: a call cut off after its stream id arrived is resumed after the last
 * event applied, repeats are dropped, the attempts and the deadline bound it; a cancel tells the
 * server with Cancel.
 */
class ResumeTest {
  private static final String STREAM_ID = "stream-1";

  private static final AssistantMessage ANSWER =
      assistantMessage(StopReason.STOP_REASON_STOP, text("Hello, world"));

  /**
   * The events of {@link #ANSWER}, numbered from 1, the start giving {@code streamId} and the done
   * event the digest of the content: start, text_start, 4 deltas of 3 characters, text_end, done.
   */
  private static List<ModelEvent> numbered(String streamId) {
    List<ModelEvent> events = new ArrayList<>();
    long seq = 1;
    for (ModelEvent event : Events.eventsOf(ANSWER, 3)) {
      ModelEvent.Builder built = event.toBuilder().setSeq(seq++);
      if (event.hasStart()) {
        built.getStartBuilder().setStreamId(streamId);
      }
      if (event.hasDone()) {
        built
            .getDoneBuilder()
            .setContentSha256(ByteString.copyFrom(Digest.contentSha256(ANSWER.getContentList())));
      }
      events.add(built.build());
    }
    return events;
  }

  private static final List<ModelEvent> EVENTS = numbered(STREAM_ID);

  /** Plays the events numbered {@code from} to {@code to} (from 1) of {@code events}. */
  private static void play(FakeModelServer.Call call, List<ModelEvent> events, int from, int to) {
    for (ModelEvent event : events.subList(from - 1, to)) {
      call.send(event);
    }
  }

  private static final Status LOST = Status.UNAVAILABLE.withDescription("connection lost");

  /** The numbers of the events of {@code events}, drained. */
  private static List<Long> drain(AssistantMessageEventStream events) {
    List<Long> numbers = new ArrayList<>();
    for (ModelEvent event : events) {
      numbers.add(event.getSeq());
    }
    return numbers;
  }

  private static final List<Long> ALL = List.of(1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L);

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void aCallCutOffWithUnavailableResumesAfterTheLastEventApplied() throws Exception {
    try (FakeModelServer server =
            FakeModelServer.startResumable(
                (request, headers, call) -> {
                  play(call, EVENTS, 1, 3); // start, text_start, "Hel"
                  call.fail(LOST);
                },
                (resume, call) -> {
                  play(call, EVENTS, 2, 8); // events 2 and 3 again, then the rest
                  call.finish();
                });
        ModelClient client = new ModelClient(server.target())) {
      StreamRequest request =
          StreamRequest.newBuilder().setContext(userContext("hi")).setCoalesceDeltas(true).build();
      AssistantMessageEventStream events = client.stream(request);
      assertEquals(ALL, drain(events)); // every event once, in one stream
      assertEquals(ANSWER, events.result().get());
      assertTrue(events.failure().isEmpty());
      assertEquals(STREAM_ID, events.streamId());
      assertEquals(
          List.of(
              ResumeRequest.newBuilder()
                  .setStreamId(STREAM_ID)
                  .setAfterSeq(3)
                  .setCoalesceDeltas(true)
                  .build()),
          server.resumes());
      assertEquals(List.of("StreamBatched"), server.methods()); // Resume is no fallback
    }
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void aCallThatEndsWithoutItsTerminalEventResumesEachTimeAfterTheLastEvent() throws Exception {
    try (FakeModelServer server =
            FakeModelServer.startResumable(
                (request, headers, call) -> {
                  play(call, EVENTS, 1, 2);
                  call.finish(); // status OK, but no terminal event
                },
                (resume, call) -> {
                  if (resume.getAfterSeq() == 2) {
                    play(call, EVENTS, 3, 5);
                    call.fail(LOST);
                  } else {
                    play(call, EVENTS, (int) resume.getAfterSeq() + 1, 8);
                    call.finish();
                  }
                });
        ModelClient client = new ModelClient(server.target()).withBatched(false)) {
      AssistantMessageEventStream events = client.stream(userContext("hi"));
      assertEquals(ALL, drain(events));
      assertEquals(ANSWER, events.result().get());
      assertEquals(
          List.of(2L, 5L), server.resumes().stream().map(ResumeRequest::getAfterSeq).toList());
    }
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void aCallStopsResumingAfterMaxResumesInARow() throws Exception {
    try (FakeModelServer server =
            FakeModelServer.startResumable(
                (request, headers, call) -> {
                  play(call, EVENTS, 1, 3);
                  call.fail(LOST);
                },
                (resume, call) -> call.fail(LOST));
        ModelClient client = new ModelClient(server.target())) {
      AssistantMessageEventStream events = client.stream(userContext("hi"));
      assertEquals(List.of(1L, 2L, 3L, 0L), drain(events)); // the error event is the client's
      assertEquals(ModelClient.MAX_RESUMES, server.resumes().size());
      assertEquals("UNAVAILABLE", events.failure().orElseThrow().statusCode().orElseThrow());
      assertEquals("Hel", Messages.textOf(events.result().get()));
    }
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void aCallIsNotResumedPastItsDeadline() throws Exception {
    try (FakeModelServer server =
            FakeModelServer.startResumable(
                (request, headers, call) -> {
                  play(call, EVENTS, 1, 3);
                  call.fail(LOST);
                },
                (resume, call) -> call.fail(LOST));
        ModelClient client = new ModelClient(server.target())) {
      // Five attempts wait 1.55 s in all: far more than the deadline leaves.
      AssistantMessageEventStream events =
          client.stream(
              StreamRequest.newBuilder().setContext(userContext("hi")).build(),
              Duration.ofMillis(500));
      drain(events);
      assertTrue(server.resumes().size() < ModelClient.MAX_RESUMES, "" + server.resumes().size());
      String code = events.failure().orElseThrow().statusCode().orElseThrow();
      assertTrue(code.equals("UNAVAILABLE") || code.equals("DEADLINE_EXCEEDED"), code);
    }
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void aCallWithoutAStreamIdIsNotResumed() throws Exception {
    List<ModelEvent> unkept = numbered("");
    try (FakeModelServer server =
            FakeModelServer.startResumable(
                (request, headers, call) -> {
                  play(call, unkept, 1, 3);
                  call.fail(LOST);
                },
                (resume, call) -> {
                  play(call, unkept, 4, 8);
                  call.finish();
                });
        ModelClient client = new ModelClient(server.target())) {
      AssistantMessageEventStream events = client.stream(userContext("hi"));
      assertEquals(4, drain(events).size());
      assertEquals("UNAVAILABLE", events.failure().orElseThrow().statusCode().orElseThrow());
      assertEquals(List.of(), server.resumes());
    }
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void aResumeRefusedWithAnotherStatusEndsTheStreamWithIt() throws Exception {
    try (FakeModelServer server = // its Resume answers NOT_FOUND
            FakeModelServer.start(
                (request, headers, call) -> {
                  play(call, EVENTS, 1, 3);
                  call.fail(LOST);
                });
        ModelClient client = new ModelClient(server.target())) {
      AssistantMessageEventStream events = client.stream(userContext("hi"));
      assertEquals(4, drain(events).size());
      assertEquals("NOT_FOUND", events.failure().orElseThrow().statusCode().orElseThrow());
      assertEquals(1, server.resumes().size());
      assertEquals(StopReason.STOP_REASON_ERROR, events.result().get().getStopReason());
      assertEquals("Hel", Messages.textOf(events.result().get()));
    }
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void aGapInTheNumbersEndsTheStreamWithRuleSequence() throws Exception {
    try (FakeModelServer server =
            FakeModelServer.start(
                (request, headers, call) -> {
                  play(call, EVENTS, 1, 3);
                  play(call, EVENTS, 5, 8); // event 4 never comes
                  call.finish();
                });
        ModelClient client = new ModelClient(server.target())) {
      AssistantMessageEventStream events = client.stream(userContext("hi"));
      assertEquals(4, drain(events).size());
      StreamProtocolException rule = events.failure().orElseThrow().rule().orElseThrow();
      assertEquals("3 sequence", rule.eventIndex() + " " + rule.ruleId());
    }
  }

  /** A server that sends the first three events, then waits for the client to go away. */
  private static FakeModelServer waiting(List<ModelEvent> events) throws Exception {
    return FakeModelServer.startResumable(
        (request, headers, call) -> {
          play(call, events, 1, 3);
          call.awaitGone();
        },
        (resume, call) -> call.fail(Status.NOT_FOUND));
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void cancellingAKeptStreamSendsCancelWithTheCallsHeaders() throws Exception {
    Metadata.Key<String> tenant = Metadata.Key.of("x-tenant", Metadata.ASCII_STRING_MARSHALLER);
    Metadata headers = new Metadata();
    headers.put(tenant, "t-1");
    try (FakeModelServer server = waiting(EVENTS);
        ModelClient client = new ModelClient(server.target())) {
      AssistantMessageEventStream events =
          client.stream(
              StreamRequest.newBuilder().setContext(userContext("hi")).build(), null, headers);
      Iterator<ModelEvent> taking = events.iterator();
      for (int taken = 0; taken < 3; taken++) {
        taking.next();
      }
      events.cancel();
      assertEquals(StopReason.STOP_REASON_ABORTED, taking.next().getError().getReason());
      assertFalse(taking.hasNext());
      CancelRequest cancel = server.takeCancel();
      assertEquals(STREAM_ID, cancel.getStreamId());
      assertEquals("t-1", server.takeCancelHeaders().get(tenant));
      assertTrue(events.failure().isEmpty());
      assertEquals(List.of(), server.resumes()); // a cancelled call is not resumed
    }
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void closingTheClientSendsCancelForTheKeptStreamsBeforeTheChannelGoes() throws Exception {
    try (FakeModelServer server = waiting(EVENTS)) {
      ModelClient client = new ModelClient(server.target());
      AssistantMessageEventStream events = client.stream(userContext("hi"));
      Iterator<ModelEvent> taking = events.iterator();
      for (int taken = 0; taken < 3; taken++) {
        taking.next();
      }
      client.close(); // waits for the Cancel call, which the channel would otherwise cut off
      CancelRequest cancel = server.takeCancel(Duration.ZERO);
      assertNotNull(cancel, "no Cancel came before close() returned");
      assertEquals(STREAM_ID, cancel.getStreamId());
      assertEquals(ModelClient.CLIENT_CLOSED, events.result().get().getErrorMessage());
    }
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void aStreamWithoutAStreamIdSendsNoCancel() throws Exception {
    try (FakeModelServer server = waiting(numbered(""))) {
      ModelClient client = new ModelClient(server.target());
      AssistantMessageEventStream events = client.stream(userContext("hi"));
      Iterator<ModelEvent> taking = events.iterator();
      for (int taken = 0; taken < 3; taken++) {
        taking.next();
      }
      events.cancel();
      assertEquals(StopReason.STOP_REASON_ABORTED, events.result().get().getStopReason());
      // close() waits for the Cancel calls on their way (see the test above): any that was made
      // has arrived once it returns, rather than none seen for a while.
      client.close();
      assertNull(server.takeCancel(Duration.ZERO));
    }
  }
}
