/**
 * EventStream: an async-iterable queue of events that also yields a final result.
 *
 * `push()` queues an event (`send()` first waits for room below `highWater`); a terminal event,
 * as `isTerminal` says, resolves `result()` with `extractResult(event)` and ends iteration once
 * it has been consumed, with no `end()` needed.
 * Anything pushed after a terminal event is ignored. `end(result)` ends the stream early and
 * releases every waiting consumer; without a result, `result()` keeps waiting.
 */
export class EventStream<T, R> implements AsyncIterable<T>, AsyncIterator<T, undefined> {
  // A head index instead of Array.shift(), which copies: a long answer stays linear in time.
  private queue: T[] = [];
  private head = 0;
  private waiters: Array<() => void> = [];
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

  /** Queue an event for the consumers; a no-op once the stream has ended. */
  push(event: T): void {
    if (this.ended) return;
    if (this.isTerminal(event)) {
      this.ended = true;
      this.resolve(this.extractResult(event));
    }
    this.queue.push(event);
    this.wake();
  }

  /**
   * Push once the queue is below `highWater`: a producer that awaits this is slowed to the pace
   * of its consumer instead of filling memory.
   */
  async send(event: T): Promise<void> {
    while (this.queued >= this.highWater && !this.ended) await this.wait();
    this.push(event);
  }

  /** End the stream, optionally with a result, and release every waiting consumer. */
  end(result?: R): void {
    this.ended = true;
    if (result !== undefined) this.resolve(result);
    this.wake();
  }

  /** The final result, once a terminal event or `end(result)` has provided it. */
  result(): Promise<R> {
    return this.settled;
  }

  [Symbol.asyncIterator](): AsyncIterator<T, undefined> {
    return this;
  }

  async next(): Promise<IteratorResult<T, undefined>> {
    while (this.queued === 0) {
      if (this.ended) return { done: true, value: undefined };
      await this.wait();
    }
    const event = this.queue[this.head] as T;
    this.head += 1;
    if (this.head === this.queue.length) {
      this.queue = [];
      this.head = 0;
    } else if (this.head >= 1024 && this.head * 2 >= this.queue.length) {
      this.queue.splice(0, this.head); // a consumer that never quite catches up
      this.head = 0;
    }
    if (this.waiters.length > 0) this.wake(); // a producer in send() may be waiting for room
    return { done: false, value: event };
  }

  private resolve(result: R): void {
    if (this.resolved) return;
    this.resolved = true;
    this.resolveResult(result);
  }

  private wait(): Promise<void> {
    return new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
}
