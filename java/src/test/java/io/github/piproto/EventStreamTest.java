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
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.piproto.ai.v1.AssistantMessage;
import io.github.piproto.ai.v1.ModelEvent;
import io.github.piproto.ai.v1.StopReason;
import io.github.piproto.ai.v1.StreamRule;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

class EventStreamTest {
  private static List<ModelEvent> drain(Iterable<ModelEvent> events) {
    List<ModelEvent> seen = new ArrayList<>();
    events.forEach(seen::add);
    return seen;
  }

  private static EventStream<String, String> strings(int highWater) {
    return new EventStream<>(event -> event.startsWith("end"), event -> event + "!", highWater);
  }

  /** Wait until {@code thread} waits on the stream; the test's own timeout bounds the wait. */
  private static void awaitBlocked(Thread thread) throws InterruptedException {
    while (thread.getState() != Thread.State.WAITING) {
      assertNotEquals(
          Thread.State.TERMINATED, thread.getState(), "the thread ended without waiting");
      Thread.sleep(1);
    }
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void anErrorEventEndsIterationAfterThatOneEvent() throws Exception {
    AssistantMessage message =
        assistantMessage(StopReason.STOP_REASON_ERROR, text("partial answer")).toBuilder()
            .setErrorMessage("socket reset")
            .build();
    AssistantMessageEventStream events = new AssistantMessageEventStream();

    events.push(error(StopReason.STOP_REASON_ERROR, message));
    events.push(start()); // after the terminal event: ignored

    List<ModelEvent> seen = drain(events);
    assertEquals(1, seen.size());
    assertEquals("error", Events.eventKind(seen.get(0)));
    AssistantMessage result = events.result().get();
    assertSame(message, result);
    assertSame(result, events.partial());
    assertEquals("socket reset", result.getErrorMessage());
    assertTrue(events.isDone());
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void aTerminalEventResolvesTheResultAndLaterPushesAreIgnored() throws Exception {
    EventStream<String, String> stream = strings(8);
    stream.push("a");
    stream.push("end");
    stream.push("late");

    List<String> seen = new ArrayList<>();
    stream.forEach(seen::add);
    assertEquals(List.of("a", "end"), seen);
    assertEquals("end!", stream.result().get());
    assertFalse(stream.iterator().hasNext());
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void endReleasesAWaitingConsumer() throws Exception {
    EventStream<String, String> stream = strings(8);
    List<String> seen = new ArrayList<>();
    Thread consumer = new Thread(() -> stream.forEach(seen::add));
    consumer.start();
    stream.push("a");
    awaitBlocked(consumer);

    stream.end("over");
    consumer.join();
    assertEquals(List.of("a"), seen);
    assertEquals("over", stream.result().get());
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void sendWaitsForRoomBelowTheHighWaterMark() throws Exception {
    EventStream<String, String> stream = strings(1);
    Thread producer =
        new Thread(
            () -> {
              try {
                stream.send("a");
                stream.send("b");
                stream.send("end");
              } catch (InterruptedException interrupted) {
                Thread.currentThread().interrupt();
              }
            });
    producer.start();
    awaitBlocked(producer);
    assertEquals(1, stream.queued()); // "b" waits until "a" is taken

    List<String> seen = new ArrayList<>();
    stream.forEach(seen::add);
    producer.join();
    assertEquals(List.of("a", "b", "end"), seen);
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void anInterruptedConsumerStopsWaitingAndKeepsTheInterrupt() {
    EventStream<String, String> stream = strings(8);
    Iterator<String> iterator = stream.iterator();
    Thread.currentThread().interrupt();
    assertThrows(CancellationException.class, iterator::hasNext);
    assertTrue(Thread.interrupted());
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void thePartialFollowsTheConsumerNotTheProducer() throws Exception {
    AssistantMessageEventStream events = new AssistantMessageEventStream();
    assertEquals(AssistantMessage.getDefaultInstance(), events.partial());
    events.push(start());
    events.push(textStart(0));
    events.push(textDelta(0, "一"));
    events.push(textDelta(0, "二"));
    events.push(textEnd(0));
    AssistantMessage message = assistantMessage(StopReason.STOP_REASON_STOP, text("一二"));
    events.push(done(StopReason.STOP_REASON_STOP, message));

    Iterator<ModelEvent> iterator = events.iterator();
    assertEquals("scripted-v1", partialAfter(iterator, events, "start").getModel());
    assertEquals(0, events.partial().getContentCount()); // every event is queued, none taken yet
    assertEquals("", Messages.textOf(partialAfter(iterator, events, "text_start")));
    AssistantMessage first = partialAfter(iterator, events, "text_delta");
    assertEquals("一", Messages.textOf(first));
    assertSame(first, events.partial()); // built once until the next event
    assertEquals("一二", Messages.textOf(partialAfter(iterator, events, "text_delta")));
    assertEquals("一", Messages.textOf(first)); // a partial once built never changes
    assertEquals("一二", Messages.textOf(partialAfter(iterator, events, "text_end")));
    assertSame(events.result().get(), partialAfter(iterator, events, "done"));
    assertFalse(iterator.hasNext());
  }

  /** Take the next event, of {@code kind} and without partial; return the partial after it. */
  private static AssistantMessage partialAfter(
      Iterator<ModelEvent> iterator, AssistantMessageEventStream events, String kind) {
    ModelEvent event = iterator.next();
    assertEquals(kind, Events.eventKind(event));
    assertFalse(event.hasPartial());
    return events.partial();
  }

  /**
   * One block of 200,000 deltas of 8 characters, each taken with the partial as of its event. How
   * long it takes is for {@code make bench}: were each event to copy the text before it, as a
   * message per event would, this would copy some 160 GB.
   */
  @Test
  @Timeout(60)
  void aLongStreamRebuildsTheWholeText() throws Exception {
    int deltas = 200_000;
    StringBuilder expected = new StringBuilder();
    AssistantMessageEventStream events = new AssistantMessageEventStream();
    events.push(start());
    events.push(textStart(0));
    for (int index = 0; index < deltas; index++) {
      String delta = "%07d ".formatted(index);
      expected.append(delta);
      events.push(textDelta(0, delta));
    }
    events.push(textEnd(0));
    AssistantMessage message =
        assistantMessage(StopReason.STOP_REASON_STOP, text(expected.toString()));
    events.push(done(StopReason.STOP_REASON_STOP, message));

    int taken = 0;
    String ended = null;
    for (ModelEvent event : events) {
      taken += 1;
      if (event.hasTextEnd()) {
        ended = Messages.textOf(events.partial());
      }
    }
    assertEquals(deltas + 4, taken);
    assertEquals(expected.toString(), ended);
    assertSame(events.result().get(), events.partial());
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void cancelEndsTheStreamWithAbortedKeepingThePartial() throws Exception {
    AssistantMessageEventStream events = new AssistantMessageEventStream();
    events.push(start());
    events.push(textStart(0));
    events.push(textDelta(0, "half an ans"));
    events.cancel();
    events.cancel(); // once ended, a no-op
    events.push(textDelta(0, "wer")); // ignored

    List<ModelEvent> seen = drain(events);
    assertEquals(
        List.of("start", "text_start", "text_delta", "error"),
        seen.stream().map(Events::eventKind).toList());
    AssistantMessage message = events.result().get();
    assertEquals(StopReason.STOP_REASON_ABORTED, message.getStopReason());
    assertEquals(StopReason.STOP_REASON_ABORTED, seen.get(3).getError().getReason());
    assertEquals("cancelled", message.getErrorMessage());
    assertEquals("half an ans", Messages.textOf(message));
    assertEquals("scripted-v1", message.getModel());
    assertSame(message, events.partial());
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void aProducerThatStopsEarlyEndsTheStreamWithError() throws Exception {
    AssistantMessageEventStream events = new AssistantMessageEventStream();
    events.drive(
        stream -> {
          stream.send(start());
          stream.send(textStart(0));
          stream.send(textDelta(0, "kept"));
        });
    List<ModelEvent> seen = drain(events);
    assertEquals(4, seen.size());
    AssistantMessage message = events.result().get();
    assertEquals(StopReason.STOP_REASON_ERROR, message.getStopReason());
    assertEquals("stream ended without a terminal event", message.getErrorMessage());
    assertEquals("kept", Messages.textOf(message));
    StreamProtocolException rule = events.failure().orElseThrow().rule().orElseThrow();
    assertEquals(3, rule.eventIndex());
    assertEquals(StreamRule.STREAM_RULE_TERMINAL_MISSING, rule.rule());
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void aProducerThatThrowsEndsTheStreamWithItsError() throws Exception {
    AssistantMessageEventStream events = new AssistantMessageEventStream();
    events.drive(
        stream -> {
          stream.send(start());
          throw new IllegalStateException("boom");
        });
    assertEquals(List.of("start", "error"), drain(events).stream().map(Events::eventKind).toList());
    assertEquals("IllegalStateException: boom", events.result().get().getErrorMessage());

    AssistantMessageEventStream misplaced = new AssistantMessageEventStream();
    misplaced.drive(
        stream -> {
          stream.send(start());
          stream.send(textDelta(4, "x"));
        });
    assertEquals(
        List.of("start", "error"), drain(misplaced).stream().map(Events::eventKind).toList());
    StreamProtocolException rule = misplaced.failure().orElseThrow().rule().orElseThrow();
    assertEquals(1, rule.eventIndex());
    assertEquals("block-exists", rule.ruleId());
    assertEquals(StopReason.STOP_REASON_ERROR, misplaced.result().get().getStopReason());
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void cancelInterruptsAProducerWaitingForRoom() throws Exception {
    CountDownLatch stopped = new CountDownLatch(1);
    AssistantMessageEventStream events = new AssistantMessageEventStream();
    events.drive(
        stream -> {
          try {
            stream.send(start());
            stream.send(textStart(0));
            while (true) {
              stream.send(textDelta(0, "more "));
            }
          } finally {
            stopped.countDown();
          }
        });
    Iterator<ModelEvent> iterator = events.iterator();
    assertEquals("start", Events.eventKind(iterator.next()));
    events.cancel();
    stopped.await();

    List<ModelEvent> rest = new ArrayList<>();
    iterator.forEachRemaining(rest::add);
    assertEquals("error", Events.eventKind(rest.get(rest.size() - 1)));
    assertEquals(StopReason.STOP_REASON_ABORTED, events.result().get().getStopReason());
    assertEquals("cancelled", events.result().get().getErrorMessage());
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void consumersTakeTurnsLongestWaitingFirst() throws Exception {
    EventStream<String, String> stream = strings(8);
    List<String> first = java.util.Collections.synchronizedList(new ArrayList<>());
    List<String> second = java.util.Collections.synchronizedList(new ArrayList<>());
    Thread a = new Thread(() -> stream.forEach(first::add));
    Thread b = new Thread(() -> stream.forEach(second::add));
    a.start();
    awaitBlocked(a);
    b.start();
    awaitBlocked(b);
    List<String> pushed = List.of("e0", "e1", "e2", "e3", "e4");
    for (int index = 0; index < pushed.size(); index++) {
      stream.push(pushed.get(index));
      // Each consumer waits again before the next event, as both would when events come slowly.
      while (first.size() + second.size() <= index) {
        Thread.sleep(1);
      }
      awaitBlocked(a);
      awaitBlocked(b);
    }
    stream.push("end");
    a.join();
    b.join();
    assertEquals(List.of("e0", "e2", "e4"), first);
    assertEquals(List.of("e1", "e3", "end"), second);
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void cancelFromAnotherThreadEndsTheIterationOfAWaitingConsumer() throws Exception {
    AssistantMessageEventStream events = new AssistantMessageEventStream();
    events.push(start());
    List<ModelEvent> seen = new ArrayList<>();
    List<Throwable> thrown = new ArrayList<>();
    Thread consumer =
        new Thread(
            () -> {
              try {
                events.forEach(seen::add);
              } catch (Throwable error) {
                thrown.add(error);
              }
            });
    consumer.start();
    awaitBlocked(consumer); // in hasNext(), after start
    events.cancel();
    consumer.join();

    assertEquals(List.of(), thrown);
    assertEquals(List.of("start", "error"), seen.stream().map(Events::eventKind).toList());
    assertEquals(StopReason.STOP_REASON_ABORTED, seen.get(1).getError().getReason());
    assertEquals(StopReason.STOP_REASON_ABORTED, events.result().get().getStopReason());
    assertTrue(events.failure().isEmpty());
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void anInterruptedConsumerOfAModelStreamReceivesTheAbortedEvent() throws Exception {
    AssistantMessageEventStream events = new AssistantMessageEventStream();
    events.push(start());
    Iterator<ModelEvent> iterator = events.iterator();
    assertEquals("start", Events.eventKind(iterator.next()));
    Thread.currentThread().interrupt();
    assertTrue(iterator.hasNext()); // no exception: the wait ends with the ABORTED event
    assertTrue(Thread.interrupted()); // and the interrupt is kept
    assertEquals(StopReason.STOP_REASON_ABORTED, iterator.next().getError().getReason());
    assertFalse(iterator.hasNext());
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void askingForTheResultLetsTheProducerRunAhead() throws Exception {
    EventStream<String, String> stream = strings(1);
    Thread producer =
        new Thread(
            () -> {
              try {
                for (int index = 0; index < 100; index++) {
                  stream.send("e" + index);
                }
                stream.send("end");
              } catch (InterruptedException interrupted) {
                Thread.currentThread().interrupt();
              }
            });
    producer.start();
    awaitBlocked(producer); // the queue is full at one event
    assertEquals("end!", stream.result().get()); // no consumer: it must not wait for one
    producer.join();
    assertEquals(101, stream.queued());
  }
}
