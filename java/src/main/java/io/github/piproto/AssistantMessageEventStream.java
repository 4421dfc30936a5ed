package io.github.piproto;

import io.github.piproto.ai.v1.AssistantMessage;
import io.github.piproto.ai.v1.ErrorEvent;
import io.github.piproto.ai.v1.ModelEvent;
import io.github.piproto.ai.v1.StopReason;
import io.github.piproto.ai.v1.StreamRule;
import java.util.Objects;
import java.util.Optional;

/**
 * The events of one model call, ending in its final message, and the partial message they build.
 *
 * <p>Events are delivered as they were sent, without {@code partial}: {@link #partial()} is the
 * message as of the last event a consumer took, valid right after each event is taken. Two
 * accumulators keep the partial as parts, each appending a delta without copying the text before
 * it, so a stream costs linear time however long it is. The producer's side checks each pushed
 * event against the stream rules and keeps the message an {@code error} event ending the stream
 * early must carry; the consumers' side applies each event again as it is taken, so the partial
 * follows the consumers even when the producer is many events ahead.
 *
 * <p>A producer feeds it either by calling {@link #push} or by being handed to {@link #drive},
 * which runs it on a thread of its own. A driven stream that stops without a terminal event is
 * ended with an {@code error} event carrying everything received so far: ABORTED when {@link
 * #cancel()} stopped it, ERROR otherwise; {@link #failure()} then says why in structured form.
 * Iterating never throws for a failure of the stream, and {@link #result()} always completes once
 * the stream ends. {@link #cancel()} may come from any thread: a consumer waiting for the next
 * event receives the ABORTED event, and so does a consumer interrupted while it waits (its
 * interrupt flag is kept).
 */
public class AssistantMessageEventStream extends EventStream<ModelEvent, AssistantMessage> {
  /** What feeds a driven stream: it pushes or sends events, and stops when interrupted. */
  @FunctionalInterface
  public interface Producer {
    void produce(AssistantMessageEventStream events) throws Exception;
  }

  private final Accumulator pushed; // guarded by this
  private final Accumulator seen; // guarded by this
  private Thread producer; // guarded by this
  private StreamFailure failure; // guarded by this
  private String streamId = ""; // guarded by this

  public AssistantMessageEventStream() {
    this(Accumulator.DEFAULT_MAX_MESSAGE_BYTES);
  }

  /** A stream that accepts at most {@code maxMessageBytes} bytes of UTF-8 from block events. */
  public AssistantMessageEventStream(long maxMessageBytes) {
    super(Events::isTerminal, Events::terminalMessage);
    this.pushed = new Accumulator(maxMessageBytes);
    this.seen = new Accumulator(maxMessageBytes);
  }

  /**
   * The message as rebuilt from the events consumers have taken so far, up to and including the
   * last one: after the terminal event, the stream's result itself. Building it copies the message,
   * so a consumer that wants it after every event pays that copy each time; the same object comes
   * back until a consumer takes another event.
   */
  public synchronized AssistantMessage partial() {
    return seen.partial();
  }

  /**
   * Why the stream ended itself with an {@code error} event: a gRPC status or a broken stream rule.
   * Empty while the stream runs, and when its terminal event came from the producer or from {@link
   * #cancel()}.
   */
  public synchronized Optional<StreamFailure> failure() {
    return Optional.ofNullable(failure);
  }

  /**
   * The id the server keeps the stream under ({@code StartEvent.stream_id}), from the start event
   * pushed; empty before it, and when the server keeps none.
   */
  public synchronized String streamId() {
    return streamId;
  }

  /**
   * Check {@code event} against the stream so far and deliver it, without any {@code partial} it
   * arrived with: the receiver's own is {@link #partial()}.
   *
   * @throws StreamProtocolException before delivering anything, if the event does not fit the
   *     stream so far (a driven stream turns that into its {@code error} event)
   */
  @Override
  public void push(ModelEvent event) {
    offer(
        () -> {
          pushed.apply(event);
          if (event.hasStart()) {
            streamId = event.getStart().getStreamId();
          }
          return Events.withoutPartial(event);
        });
  }

  /** End the stream with an {@code error} event that keeps everything received so far. */
  public void fail(StopReason reason, String errorMessage) {
    fail(reason, errorMessage, null);
  }

  /**
   * End the stream with an {@code error} event that keeps everything received so far, and record
   * {@code why} (null for none) as its {@link #failure()}; a no-op once the stream has ended.
   */
  public void fail(StopReason reason, String errorMessage, StreamFailure why) {
    offer(
        () -> {
          AssistantMessage message =
              pushed.partial().toBuilder()
                  .setStopReason(reason)
                  .setErrorMessage(errorMessage)
                  .build();
          ErrorEvent error = ErrorEvent.newBuilder().setReason(reason).setMessage(message).build();
          ModelEvent event = ModelEvent.newBuilder().setError(error).build();
          // Built from the partial, it need not pass the rules a sender's terminal event must.
          pushed.close(event);
          failure = why;
          return event;
        });
  }

  /** End the stream with the error event of a broken rule, e.g. one a receiver saw. */
  public void fail(StreamProtocolException broken) {
    fail(StopReason.STOP_REASON_ERROR, broken.getMessage(), StreamFailure.ofRule(broken));
  }

  /**
   * End a stream whose events stopped before a terminal event: ERROR "stream ended without a
   * terminal event", rule {@code terminal-missing} at the number of events received.
   */
  public void endWithoutTerminal() {
    synchronized (this) {
      if (isDone()) {
        return;
      }
      StreamProtocolException missing =
          new StreamProtocolException(
              pushed.count(),
              StreamRule.STREAM_RULE_TERMINAL_MISSING,
              "the events ended without a terminal event");
      fail(
          StopReason.STOP_REASON_ERROR,
          "stream ended without a terminal event",
          StreamFailure.ofRule(missing));
    }
  }

  /** Catch the consumers' partial up with {@code event}, which push or fail has checked. */
  @Override
  protected void taken(ModelEvent event) {
    if (Events.isTerminal(event)) {
      seen.close(event); // an error built by fail() need not pass the rules
    } else {
      seen.apply(event);
    }
  }

  /** A consumer interrupted while it waits cancels the stream, and receives the ABORTED event. */
  @Override
  protected void consumerInterrupted() {
    cancel();
  }

  /**
   * Run {@code producer} on a new daemon thread as what feeds this stream; {@link #cancel()}
   * interrupts that thread. When the producer returns or throws, a stream it did not end is ended
   * with an ERROR event: "stream ended without a terminal event" (rule {@code terminal-missing}),
   * the broken rule of a {@link StreamProtocolException}, or the exception's type and message.
   */
  public void drive(Producer producer) {
    Thread thread = new Thread(() -> run(producer), "pi-proto-stream");
    thread.setDaemon(true);
    synchronized (this) {
      if (this.producer != null) {
        throw new IllegalStateException("the stream is already driven");
      }
      this.producer = thread;
    }
    thread.start();
  }

  /** Cancel the call: the stream ends at once with an ABORTED {@code error} event, "cancelled". */
  public void cancel() {
    cancel("cancelled", StopReason.STOP_REASON_ABORTED);
  }

  /**
   * Stop the producer; the stream ends at once with an {@code error} event of {@code reason} (e.g.
   * ERROR for a deadline of the caller's own), after the events already queued, so nothing the
   * producer pushes later is delivered. A no-op once the stream has ended.
   */
  public void cancel(String errorMessage, StopReason reason) {
    Thread driver;
    synchronized (this) {
      if (isDone()) {
        return;
      }
      driver = producer;
      fail(reason, errorMessage, null);
    }
    cancelled();
    if (driver != null) {
      driver.interrupt();
    }
  }

  /**
   * Called once when {@link #cancel(String, StopReason)} has ended the stream, before the producer
   * is interrupted, on the cancelling thread (under the stream's lock when a consumer was
   * interrupted): a subclass tells whatever keeps the stream elsewhere. It must not block.
   */
  protected void cancelled() {}

  private void run(Producer producer) {
    try {
      producer.produce(this);
      endWithoutTerminal();
    } catch (InterruptedException interrupted) {
      // Interrupted by cancel(), which has already ended the stream, or by someone else.
      fail(StopReason.STOP_REASON_ABORTED, "cancelled");
    } catch (StreamProtocolException broken) {
      fail(broken);
    } catch (Exception error) {
      fail(StopReason.STOP_REASON_ERROR, describe(error));
    } catch (Error error) {
      fail(StopReason.STOP_REASON_ERROR, describe(error));
      throw error;
    }
  }

  /** A failed producer's exception: its type, then its message. */
  private static String describe(Throwable error) {
    return error.getClass().getSimpleName() + ": " + Objects.toString(error.getMessage(), "");
  }
}
