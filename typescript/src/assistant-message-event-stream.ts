/**
 * AssistantMessageEventStream: the events of one model call, each with `partial` filled in,
 * ending in its final message. It turns any failure of the producer that feeds it into an
 * `error` event, so iterating it never throws and `result()` always resolves.
 */

import { create } from "@bufbuild/protobuf";
import { type ModelEvent, ModelEventSchema } from "./gen/pi/ai/v1/event_pb.js";
import { type AssistantMessage, StopReason } from "./gen/pi/ai/v1/message_pb.js";
import { Accumulator } from "./accumulator.js";
import { EventStream } from "./event-stream.js";
import { isTerminal, terminalMessage } from "./events.js";

/** Produces the events of a stream; it should stop once `signal` is aborted. */
export type Producer = (signal: AbortSignal) => Promise<void>;

/**
 * A producer feeds the stream either by calling `push()` or by being handed to `drive()`. A
 * driven stream that stops without a terminal event is ended with an `error` event carrying
 * everything received so far: ABORTED when `cancel()` stopped it, ERROR otherwise.
 */
export class AssistantMessageEventStream extends EventStream<ModelEvent, AssistantMessage> {
  private readonly accumulator = new Accumulator();
  private producer: AbortController | undefined;

  constructor() {
    super(isTerminal, terminalMessage);
  }

  /** The message as rebuilt from the events pushed so far. */
  get partial(): AssistantMessage {
    return this.accumulator.partial;
  }

  /**
   * Rebuild the partial from `event`, attach it, and queue the event.
   *
   * Throws StreamProtocolError, before queueing anything, if the event does not fit the stream
   * so far (a driven stream turns that into its `error` event).
   */
  override push(event: ModelEvent): void {
    if (this.done) return;
    super.push(this.accumulator.apply(event));
  }

  /** End the stream with an `error` event that keeps everything received so far. */
  fail(reason: StopReason, errorMessage: string): void {
    if (this.done) return;
    const message = this.accumulator.partial;
    message.stopReason = reason;
    message.errorMessage = errorMessage;
    // Built from the partial, it need not pass the rules a sender's terminal event must.
    const event = create(ModelEventSchema, { event: { case: "error", value: { reason, message } } });
    super.push(this.accumulator.close(event));
  }

  /** Run `producer` as what feeds this stream; `cancel()` aborts the signal it is given. */
  drive(producer: Producer): void {
    const controller = new AbortController();
    this.producer = controller;
    Promise.resolve()
      .then(() => producer(controller.signal))
      .then(
        () => this.fail(StopReason.ERROR, "stream ended without a terminal event"),
        (error: unknown) => this.fail(StopReason.ERROR, describe(error)),
      );
  }

  /**
   * Stop the producer; the stream ends right away with an `error` event (ABORTED unless another
   * reason is given, e.g. ERROR for a deadline), after the events already queued, so nothing the
   * producer pushes later is delivered.
   */
  cancel(message = "cancelled", reason: StopReason = StopReason.ABORTED): void {
    if (this.done) return;
    this.fail(reason, message);
    this.producer?.abort();
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
