package io.github.piproto;

import io.github.piproto.ai.v1.ModelEvent;
import io.github.piproto.ai.v1.StreamRule;

/**
 * Which events of a numbered stream ({@code ModelEvent.seq}) to apply: each once, none missing
 * (rule {@code sequence}).
 *
 * <p>The first event says whether the stream is numbered. In a numbered one, an event numbered at
 * or below the last applied is a repeat, which a resumed server may send, and is dropped; one
 * further on than the next breaks rule {@code sequence}, except a merged delta when the stream
 * asked for {@code coalesce_deltas}. An unnumbered event in a numbered stream, or a numbered one in
 * an unnumbered stream, breaks it too. {@link #last()} is what a client resumes after.
 *
 * <p>Not thread-safe: one stream admits its events from one thread at a time.
 */
public final class Numbering {
  private final boolean coalesced;
  private long last;
  private Boolean numbered; // null until the first event

  /** The numbering of a stream that did not ask for {@code coalesce_deltas}. */
  public Numbering() {
    this(false);
  }

  /** The numbering of a stream; {@code coalesced} when it asked for {@code coalesce_deltas}. */
  public Numbering(boolean coalesced) {
    this.coalesced = coalesced;
  }

  /** The number of the last event applied; 0 before any, and in a stream not numbered. */
  public long last() {
    return last;
  }

  /**
   * Whether to apply {@code event}, which would be the stream's event {@code index} (the count of
   * events applied before it): false for a repeat, to be dropped unapplied and uncounted.
   *
   * @throws StreamProtocolException for rule {@code sequence}, at {@code index}
   */
  public boolean admit(ModelEvent event, int index) {
    long seq = event.getSeq(); // a uint64: compared unsigned
    if (numbered == null) {
      numbered = seq != 0;
    }
    if (!numbered) {
      if (seq != 0) {
        throw new StreamProtocolException(
            index,
            StreamRule.STREAM_RULE_SEQUENCE,
            "event numbered %s in a stream not numbered".formatted(Long.toUnsignedString(seq)));
      }
      return true;
    }
    if (seq == 0) {
      throw new StreamProtocolException(
          index, StreamRule.STREAM_RULE_SEQUENCE, "event without a number in a numbered stream");
    }
    if (Long.compareUnsigned(seq, last) <= 0) {
      return false;
    }
    boolean merged =
        coalesced && (event.hasTextDelta() || event.hasThinkingDelta() || event.hasToolcallDelta());
    if (seq != last + 1 && !merged) {
      throw new StreamProtocolException(
          index,
          StreamRule.STREAM_RULE_SEQUENCE,
          "event %s is missing: the next event is numbered %s"
              .formatted(Long.toUnsignedString(last + 1), Long.toUnsignedString(seq)));
    }
    last = seq;
    return true;
  }
}
