/**
 * EventStream: an async-iterable queue of events that also yields a final result.
 *
 * `push()` hands an event to the consumer that has waited longest, or queues it when none waits,
 * as pi's EventStream does: several consumers of one stream take turns (with A and B both
 * waiting, A gets e0, e2, e4 and B gets e1, e3, e5). `send()` first waits for room below
 * `highWater`. A terminal event, as `isTerminal` says, resolves `result()` with
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
    while (this.queued >= this.highWater && !this.ended) {
      await new Promise<void>((resolve) => this.writers.push(resolve));
    }
    this.push(event);
  }

  /** End the stream, optionally with a result, and release every waiting consumer. */
  end(result?: R): void {
    this.ended = true;
    if (result !== undefined) this.resolve(result);
    this.release();
  }

  /** The final result, once a terminal event or `end(result)` has provided it. */
  result(): Promise<R> {
    return this.settled;
  }

  [Symbol.asyncIterator](): AsyncIterator<T, undefined> {
    return this;
  }

  next(): Promise<IteratorResult<T, undefined>> {
    if (this.queued > 0) return Promise.resolve({ done: false, value: this.take() });
    if (this.ended) return Promise.resolve({ done: true, value: undefined });
    return new Promise((resolve) => this.readers.push(resolve));
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

  private wakeWriters(): void {
    const writers = this.writers;
    this.writers = [];
    for (const wake of writers) wake();
  }
}
