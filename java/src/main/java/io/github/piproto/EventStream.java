package io.github.piproto;

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
 * <p>{@link #push} hands an event to the consumer that has waited longest, or queues it when none
 * waits, as pi's EventStream does: several threads iterating one stream take turns, each event
 * going to exactly one of them (A gets e0, e2, e4 and B gets e1, e3, e5 when both wait). {@link
 * #send} first waits for room below the high-water mark. A terminal event, as {@code isTerminal}
 * says, completes {@link #result()} with {@code extractResult(event)} and ends iteration once it
 * has been consumed, with no {@link #end} needed; anything pushed after it is ignored. {@link #end}
 * ends the stream early and releases every waiting consumer.
 *
 * <p>Each {@link #iterator()} is one consumer: each thread iterates with its own. Iteration blocks
 * while no event is there for it and the stream has not ended. A consumer interrupted while it
 * waits calls {@link #consumerInterrupted()}: here it stops waiting with a {@link
 * CancellationException}, interrupt flag kept; a subclass may end the stream instead.
 *
 * <p>The stream is one monitor: producers and consumers may run on different threads.
 */
public class EventStream<T, R> implements Iterable<T> {
  /** How many queued events make {@link #send} wait for a consumer, unless told otherwise. */
  public static final int DEFAULT_HIGH_WATER = 64;

  private final Predicate<? super T> isTerminal;
  private final Function<? super T, ? extends R> extractResult;
  private final int highWater;
  private final ArrayDeque<T> queue = new ArrayDeque<>(); // only while no consumer waits
  private final ArrayDeque<Waiter<T>> waiters = new ArrayDeque<>(); // longest-waiting first
  private final CompletableFuture<R> result = new CompletableFuture<>();
  private boolean done;
  private boolean resultAsked;

  /** A consumer waiting for its event: {@code served} once it got one, or the stream ended. */
  private static final class Waiter<T> {
    T event;
    boolean served;
  }

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

  /** Hand an event to the longest-waiting consumer, or queue it; a no-op once the stream ended. */
  public void push(T event) {
    offer(() -> event);
  }

  /**
   * Push once the queue is below the high-water mark: a producer that calls this is slowed to the
   * pace of its consumers instead of filling memory, until someone asks for {@link #result()}.
   *
   * @throws InterruptedException if the thread is interrupted, waiting or not, as blocking methods
   *     do: that is how a driven producer is stopped
   */
  public void send(T event) throws InterruptedException {
    if (Thread.interrupted()) {
      throw new InterruptedException();
    }
    synchronized (this) {
      while (queue.size() >= highWater && !done && !resultAsked) {
        wait();
      }
    }
    push(event);
  }

  /** End the stream without a result and release every waiting consumer. */
  public synchronized void end() {
    done = true;
    releaseWaiters();
  }

  /** End the stream with {@code finalResult} and release every waiting consumer. */
  public synchronized void end(R finalResult) {
    result.complete(finalResult);
    end();
  }

  /**
   * The final result, completed by the terminal event or by {@link #end(Object)} before any
   * consumer can see the stream end. Asking for it lets a producer in {@link #send} run ahead of
   * the consumers, so that a caller who only waits for the result gets it. Callbacks attached with
   * the non-async methods of CompletableFuture run on the pushing thread, under the stream's lock:
   * keep them short.
   */
  public CompletableFuture<R> result() {
    synchronized (this) {
      if (!resultAsked) {
        resultAsked = true;
        notifyAll(); // a producer waiting for room need not wait any more
      }
    }
    return result;
  }

  /**
   * Deliver the event that {@code build} makes, built under the stream's lock so that events are
   * built in the order they are delivered; nothing is built once the stream has ended. If {@code
   * build} throws, nothing is delivered and the exception reaches the caller.
   */
  protected final synchronized void offer(Supplier<? extends T> build) {
    if (done) {
      return;
    }
    T event = build.get();
    boolean terminal = isTerminal.test(event);
    if (terminal) {
      result.complete(extractResult.apply(event));
      done = true;
    }
    Waiter<T> waiter = waiters.poll();
    if (waiter != null) {
      taken(event);
      waiter.event = event;
      waiter.served = true;
      notifyAll();
    } else {
      queue.add(event);
    }
    if (terminal) {
      releaseWaiters();
    }
  }

  /**
   * Called under the stream's lock with each event as it goes to a consumer, in order: a subclass
   * keeps there what the consumers have seen so far.
   */
  protected void taken(T event) {}

  /**
   * Called under the stream's lock when a consumer is interrupted while it waits for an event. Here
   * it throws {@link CancellationException}; a subclass may end the stream instead, and the
   * consumer then receives what ending it delivers. The interrupt flag is set again either way.
   */
  protected void consumerInterrupted() {
    throw new CancellationException("interrupted while waiting for the next event");
  }

  @Override
  public Iterator<T> iterator() {
    return new Iterator<>() {
      private T next; // taken by hasNext(), returned by next()

      @Override
      public boolean hasNext() {
        if (next == null) {
          next = take();
        }
        return next != null;
      }

      @Override
      public T next() {
        if (!hasNext()) {
          throw new NoSuchElementException("the stream has ended");
        }
        T event = next;
        next = null;
        return event;
      }
    };
  }

  /** The next event for this consumer, waiting for it in turn; null once the stream has ended. */
  private synchronized T take() {
    T queued = queue.poll();
    if (queued != null) {
      taken(queued);
      notifyAll(); // a producer in send() may be waiting for room
      return queued;
    }
    if (done) {
      return null;
    }
    Waiter<T> waiter = new Waiter<>();
    waiters.add(waiter);
    boolean interrupted = false;
    try {
      while (!waiter.served) {
        try {
          wait();
        } catch (InterruptedException interruption) {
          interrupted = true;
          if (!waiter.served) {
            try {
              consumerInterrupted();
            } catch (RuntimeException stop) {
              waiters.remove(waiter);
              throw stop;
            }
          }
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
    return waiter.event;
  }

  private void releaseWaiters() {
    for (Waiter<T> waiter : waiters) {
      waiter.served = true;
    }
    waiters.clear();
    notifyAll();
  }
}
