/**
 * EventStream: an async-iterable queue of events that also yields a final result.
 *
 * `push()` hands an event to the consumer that has waited longest, or queues it when none waits,
 * as pi's EventStream does: several consumers of one stream take turns (with A and B both
 * waiting, A gets e0, e2, e4 and B gets e1, e3, e5). `send()` first waits for room below
 * `highWater`; `offer()` waits until a consumer asks for an event and none is queued, so the
 * event is pushed just as it is consumed. Once `result()` has been called, neither waits: whoever
 * awaits the result needs every event pushed. A terminal event, as `isTerminal` says, resolves `result()` with
 * `extractResult(event)` and ends iteration once it has been consumed, with no `end()` needed;
 * anything pushed after it is ignored. `end(result)` ends the stream early and releases every
 * waiting consumer; without a result, `result()` keeps waiting.
 */
export class EventStream<T, R> implements AsyncIterable<T>, AsyncIterator<T, undefined> {
  // A head index instead of Array.shift(), which copies: a long answer stays linear in time.
  private queue: T[] = [];
  private head = 0;
  // Consumers waiting for an event, longest first. Events are handed to them, never raced for,
  // so the queue holds events only while nobody waits.
  private readers: Array<(item: IteratorResult<T, undefined>) => void> = [];
  private writers: Array<() => void> = []; // producers in send(), waiting for room
  private offers: Array<() => void> = []; // producers in offer(), waiting for a consumer to ask
  private resultWanted = false; // result() has been called: producers no longer wait
  private ended = false;
  private resolved = false;
  private resolveResult!: (result: R) => void;
  private readonly settled: Promise<R>;

  /** How many queued events make `send()` wait for a consumer. */
  readonly highWater: number;

  constructor(
    private readonly isTerminal: (event: T) => boolean,
    private readonly extractResult: (event: T) => R,
    options: { highWater?: number } = {},
  ) {
    this.highWater = options.highWater ?? 64;
    this.settled = new Promise<R>((resolve) => {
      this.resolveResult = resolve;
    });
  }

  /** Whether the stream has ended: nothing pushed from now on is delivered. */
  get done(): boolean {
    return this.ended;
  }

  /** Events pushed but not yet taken by a consumer. */
  get queued(): number {
    return this.queue.length - this.head;
  }

  /** Hand an event to the longest-waiting consumer, or queue it; a no-op once the stream has ended. */
  push(event: T): void {
    if (this.ended) return;
    if (this.isTerminal(event)) {
      this.ended = true;
      this.resolve(this.extractResult(event));
    }
    const reader = this.readers.shift();
    if (reader !== undefined) reader({ done: false, value: event });
    else this.queue.push(event);
    if (this.ended) this.release();
  }

  /**
   * Push once the queue is below `highWater`: a producer that awaits this is slowed to the pace
   * of its consumer instead of filling memory.
   */
  async send(event: T): Promise<void> {
    while (this.queued >= this.highWater && !this.ended && !this.resultWanted) {
      await new Promise<void>((resolve) => this.writers.push(resolve));
    }
    this.push(event);
  }

  /**
   * Push once a consumer waits for an event and none is queued (or once `result()` has been
   * called, or the stream has ended): a producer that awaits this for each event hands them over
   * one at a time, as they are consumed, so whatever the push does (such as updating a live
   * partial) happens only when the consumer before it has asked for the next event.
   */
  async offer(event: T): Promise<void> {
    while (!this.ended && !this.resultWanted && !(this.readers.length > 0 && this.queued === 0)) {
      await new Promise<void>((resolve) => this.offers.push(resolve));
    }
    this.push(event);
  }

  /** End the stream, optionally with a result, and release every waiting consumer. */
  end(result?: R): void {
    this.ended = true;
    if (result !== undefined) this.resolve(result);
    this.release();
  }

  /**
   * The final result, once a terminal event or `end(result)` has provided it. From this call on,
   * producers in `send()` and `offer()` no longer wait for consumers, so the result arrives
   * whether or not anyone reads the events.
   */
  result(): Promise<R> {
    if (!this.resultWanted) {
      this.resultWanted = true;
      this.wakeWriters();
    }
    return this.settled;
  }

  [Symbol.asyncIterator](): AsyncIterator<T, undefined> {
    return this;
  }

  next(): Promise<IteratorResult<T, undefined>> {
    if (this.queued > 0) return Promise.resolve({ done: false, value: this.take() });
    if (this.ended) return Promise.resolve({ done: true, value: undefined });
    const asked = new Promise<IteratorResult<T, undefined>>((resolve) => this.readers.push(resolve));
    this.wakeOffers(); // a consumer waits with nothing queued: offer() may push
    return asked;
  }

  private take(): T {
    const event = this.queue[this.head] as T;
    this.head += 1;
    if (this.head === this.queue.length) {
      this.queue = [];
      this.head = 0;
    } else if (this.head >= 1024 && this.head * 2 >= this.queue.length) {
      this.queue.splice(0, this.head); // a consumer that never quite catches up
      this.head = 0;
    }
    if (this.writers.length > 0 && this.queued < this.highWater) this.wakeWriters();
    return event;
  }

  private resolve(result: R): void {
    if (this.resolved) return;
    this.resolved = true;
    this.resolveResult(result);
  }

  /** The stream has ended: waiting consumers see the end, waiting producers go on (to a no-op push). */
  private release(): void {
    const readers = this.readers;
    this.readers = [];
    for (const reader of readers) reader({ done: true, value: undefined });
    this.wakeWriters();
  }

  /** Wake the producers in send() and in offer(); each checks again whether it may push. */
  private wakeWriters(): void {
    const writers = this.writers;
    this.writers = [];
    for (const wake of writers) wake();
    this.wakeOffers();
  }

  private wakeOffers(): void {
    const offers = this.offers;
    this.offers = [];
    for (const wake of offers) wake();
  }
}
