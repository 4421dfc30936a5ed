package pi.proto;

import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * A blocking queue of events that also yields the final result they lead to.
 *
 * <p>{@link #push} queues an event ({@link #send} first waits for room below the high-water mark);
 * a terminal event, as {@code isTerminal} says, completes {@link #result()} with {@code
 * extractResult(event)} and ends iteration once it has been consumed, with no {@link #end} needed.
 * Anything pushed after a terminal event is ignored. {@link #end} ends the stream early and
 * releases every waiting consumer.
 *
 * <p>Iterating takes events from the one shared queue: iterate once, from one thread. Iteration
 * blocks while the queue is empty and the stream has not ended; it throws only if the consuming
 * thread is interrupted while it waits ({@link CancellationException}, interrupt flag kept).
 *
 * <p>The stream is one monitor: producers and consumers may run on different threads.
 */
public class EventStream<T, R> implements Iterable<T> {
  /** How many queued events make {@link #send} wait for a consumer, unless told otherwise. */
  public static final int DEFAULT_HIGH_WATER = 64;

  private final Predicate<? super T> isTerminal;
  private final Function<? super T, ? extends R> extractResult;
  private final int highWater;
  private final ArrayDeque<T> queue = new ArrayDeque<>();
  private final CompletableFuture<R> result = new CompletableFuture<>();
  private boolean done;

  public EventStream(
      Predicate<? super T> isTerminal, Function<? super T, ? extends R> extractResult) {
    this(isTerminal, extractResult, DEFAULT_HIGH_WATER);
  }

  public EventStream(
      Predicate<? super T> isTerminal,
      Function<? super T, ? extends R> extractResult,
      int highWater) {
    if (highWater < 1) {
      throw new IllegalArgumentException("highWater must be at least 1, got " + highWater);
    }
    this.isTerminal = isTerminal;
    this.extractResult = extractResult;
    this.highWater = highWater;
  }

  /** How many queued events make {@link #send} wait for a consumer. */
  public int highWater() {
    return highWater;
  }

  /** Events pushed but not yet taken by a consumer. */
  public synchronized int queued() {
    return queue.size();
  }

  /** Whether the stream has ended: nothing pushed from now on is delivered. */
  public synchronized boolean isDone() {
    return done;
  }

  /** Queue an event for the consumers; a no-op once the stream has ended. */
  public void push(T event) {
    offer(() -> event);
  }

  /**
   * Push once the queue is below the high-water mark: a producer that calls this is slowed to the
   * pace of its consumer instead of filling memory.
   *
   * @throws InterruptedException if the thread is interrupted, waiting or not, as blocking methods
   *     do: that is how a driven producer is stopped
   */
  public void send(T event) throws InterruptedException {
    if (Thread.interrupted()) {
      throw new InterruptedException();
    }
    synchronized (this) {
      while (queue.size() >= highWater && !done) {
        wait();
      }
    }
    push(event);
  }

  /** End the stream without a result and release every waiting consumer. */
  public synchronized void end() {
    done = true;
    notifyAll();
  }

  /** End the stream with {@code finalResult} and release every waiting consumer. */
  public synchronized void end(R finalResult) {
    result.complete(finalResult);
    end();
  }

  /**
   * The final result, completed by the terminal event or by {@link #end(Object)} before any
   * consumer can see the stream end. Callbacks attached with the non-async methods of
   * CompletableFuture run on the pushing thread, under the stream's lock: keep them short.
   */
  public CompletableFuture<R> result() {
    return result;
  }

  /**
   * Queue the event that {@code build} makes, built under the stream's lock so that events are
   * built in the order they are queued; nothing is built once the stream has ended. If {@code
   * build} throws, nothing is queued and the exception reaches the caller.
   */
  protected final synchronized void offer(Supplier<? extends T> build) {
    if (done) {
      return;
    }
    T event = build.get();
    if (isTerminal.test(event)) {
      result.complete(extractResult.apply(event));
      done = true;
    }
    queue.add(event);
    notifyAll();
  }

  /**
   * Called under the stream's lock with each event a consumer takes, in order, before it is
   * returned: a subclass keeps there what the consumer has seen so far.
   */
  protected void taken(T event) {}

  @Override
  public Iterator<T> iterator() {
    return new Iterator<>() {
      @Override
      public boolean hasNext() {
        synchronized (EventStream.this) {
          while (queue.isEmpty()) {
            if (done) {
              return false;
            }
            awaitChange();
          }
          return true;
        }
      }

      @Override
      public T next() {
        synchronized (EventStream.this) {
          if (!hasNext()) {
            throw new NoSuchElementException("the stream has ended");
          }
          T event = queue.poll();
          taken(event);
          EventStream.this.notifyAll(); // a producer in send() may be waiting for room
          return event;
        }
      }
    };
  }

  private void awaitChange() {
    try {
      wait();
    } catch (InterruptedException interrupted) {
      Thread.currentThread().interrupt();
      CancellationException error =
          new CancellationException("interrupted while waiting for the next event");
      error.initCause(interrupted);
      throw error;
    }
  }
}
