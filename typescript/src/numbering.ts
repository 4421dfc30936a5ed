/** The numbers of a wire stream's events (ModelEvent.seq), checked by its receiver (rule `sequence`). */

import { StreamProtocolError } from "./accumulator.js";
import { type ModelEvent, StreamRule } from "./gen/pi/ai/v1/event_pb.js";

/**
 * Which events of a numbered stream to apply: each once, none missing.
 *
 * The first event says whether the stream is numbered. In a numbered one, an event numbered at or
 * below the last applied is a repeat, which a resumed server may send, and is dropped; one further
 * on than the next breaks rule `sequence`, except a merged delta when the stream asked for
 * `coalesceDeltas`. `last` is what a client resumes after.
 */
export class Numbering {
  /** The number of the last event applied; 0 before any, and in a stream not numbered. */
  last = 0n;
  private numbered: boolean | undefined;

  /** `coalesced`: the call asked for coalesce_deltas, so a delta may stand for several numbers. */
  constructor(readonly coalesced = false) {}

  /**
   * Whether to apply `event`, the stream's event `index` (the count of events applied before it);
   * false for a repeat. Throws a StreamProtocolError (rule SEQUENCE) for a gap, or for an event
   * numbered unlike the first.
   */
  admit(event: ModelEvent, index: number): boolean {
    const seq = event.seq;
    this.numbered ??= seq !== 0n;
    if (!this.numbered) {
      if (seq !== 0n)
        throw new StreamProtocolError(index, StreamRule.SEQUENCE, `event numbered ${seq} in a stream not numbered`);
      return true;
    }
    if (seq === 0n)
      throw new StreamProtocolError(index, StreamRule.SEQUENCE, "event without a number in a numbered stream");
    if (seq <= this.last) return false;
    const kind = event.event.case;
    const merged = this.coalesced && (kind === "textDelta" || kind === "thinkingDelta" || kind === "toolcallDelta");
    if (seq !== this.last + 1n && !merged) {
      const detail = `event ${this.last + 1n} is missing: the next event is numbered ${seq}`;
      throw new StreamProtocolError(index, StreamRule.SEQUENCE, detail);
    }
    this.last = seq;
    return true;
  }
}
