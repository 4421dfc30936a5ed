/**
 * AssistantMessageEventStream: the events of one model call, each with `partial` filled in,
 * ending in its final message. It turns any failure of the producer that feeds it into an
 * `error` event, so iterating it never throws and `result()` always resolves.
 */

import { create } from "@bufbuild/protobuf";
import { Accumulator, DEFAULT_MAX_MESSAGE_BYTES, StreamProtocolError } from "./accumulator.js";
import { EventStream } from "./event-stream.js";
import { isTerminal, terminalMessage } from "./events.js";
import { type ModelEvent, ModelEventSchema, StreamRule } from "./gen/pi/ai/v1/event_pb.js";
import { type AssistantMessage, StopReason } from "./gen/pi/ai/v1/message_pb.js";
import type { Violation } from "./validate.js";

/** Produces the events of a stream; it should stop once `signal` is aborted. */
export type Producer = (signal: AbortSignal) => Promise<void>;

/**
 * Why a receiver ended a stream itself, with an `error` event of its own making: a gRPC status
 * ended the call (its code's name, e.g. "UNAVAILABLE"), or an event broke a stream rule (its
 * index, the rule and its text id, and for TERMINAL_VALID the violations). `detail` says it in
 * words.
 */
export type StreamFailure =
  | { readonly kind: "status"; readonly statusCode: string; readonly detail: string }
  | {
      readonly kind: "rule";
      readonly eventIndex: number;
      readonly rule: StreamRule;
      /** The rule's text id, e.g. "block-open" (streamRuleId). */
      readonly ruleId: string;
      readonly violations: readonly Violation[];
      readonly detail: string;
    };

/** The failure of a broken stream rule. */
export function ruleFailure(error: StreamProtocolError): StreamFailure {
  const { eventIndex, rule, ruleId, violations } = error;
  return { kind: "rule", eventIndex, rule, ruleId, violations, detail: error.message };
}

/** Options of a stream. */
export interface StreamOptions {
  /** The most bytes of UTF-8 the block events may add up to (rule SIZE_LIMIT); 64 MiB by default. */
  maxMessageBytes?: number;
}

/**
 * A producer feeds the stream either by calling `push()` or by being handed to `drive()`. A
 * driven stream that stops without a terminal event is ended with an `error` event carrying
 * everything received so far: ABORTED when `cancel()` stopped it, ERROR otherwise; `failure`
 * then says why, unless it was a cancel.
 */
export class AssistantMessageEventStream extends EventStream<ModelEvent, AssistantMessage> {
  private readonly accumulator: Accumulator;
  private producer: AbortController | undefined;
  private ownFailure: StreamFailure | undefined;

  constructor(options: StreamOptions = {}) {
    super(isTerminal, terminalMessage);
    this.accumulator = new Accumulator(options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES);
  }

  /** The message as rebuilt from the events pushed so far. */
  get partial(): AssistantMessage {
    return this.accumulator.partial;
  }

  /** How many events have been pushed, the refused one included. */
  get received(): number {
    return this.accumulator.count;
  }

  /**
   * Why this stream ended itself, if it did: a status or a broken rule. Undefined while it runs,
   * and when its terminal event came from the producer or from a cancel.
   */
  get failure(): StreamFailure | undefined {
    return this.ownFailure;
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
  fail(reason: StopReason, errorMessage: string, failure?: StreamFailure): void {
    if (this.done) return;
    this.ownFailure = failure;
    const message = this.accumulator.partial;
    message.stopReason = reason;
    message.errorMessage = errorMessage;
    // Built from the partial, it need not pass the rules a sender's terminal event must.
    const event = create(ModelEventSchema, { event: { case: "error", value: { reason, message } } });
    super.push(this.accumulator.close(event));
  }

  /** End the stream because `error` broke a stream rule. */
  failRule(error: StreamProtocolError): void {
    this.fail(StopReason.ERROR, error.message, ruleFailure(error));
  }

  /** End a stream whose events stopped before a terminal event (rule TERMINAL_MISSING). */
  endWithoutTerminal(): void {
    const error = new StreamProtocolError(this.received, StreamRule.TERMINAL_MISSING, "the events ended without one");
    this.fail(StopReason.ERROR, "stream ended without a terminal event", ruleFailure(error));
  }

  /** Run `producer` as what feeds this stream; `cancel()` aborts the signal it is given. */
  drive(producer: Producer): void {
    const controller = new AbortController();
    this.producer = controller;
    Promise.resolve()
      .then(() => producer(controller.signal))
      .then(
        () => this.endWithoutTerminal(),
        (error: unknown) => {
          if (error instanceof StreamProtocolError) this.failRule(error);
          else this.fail(StopReason.ERROR, describe(error));
        },
      );
  }

  /**
   * Stop the producer, from anywhere; the stream ends right away with an `error` event (ABORTED
   * unless another reason is given), after the events already queued, so nothing the producer
   * pushes later is delivered. A consumer waiting for the next event receives it.
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
