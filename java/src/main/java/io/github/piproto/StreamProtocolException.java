package io.github.piproto;

import java.util.List;

/**
 * An event that does not fit the stream received so far: the event's index (from 0 at the first
 * event of the stream), the id of the stream rule it breaks, and why. For {@code terminal-valid},
 * {@link #violations()} lists what the terminal event breaks, with paths from the ModelEvent (e.g.
 * {@code done.message.content[0].tool_call.id}); it is empty for every other rule.
 *
 * <p>The rule ids are listed on {@link Accumulator}, plus {@code terminal-missing} (the events
 * ended without a terminal event; the index is the number of events received) and {@code
 * event-decode} (bytes that do not decode as a ModelEvent), which only a receiver can see.
 */
public class StreamProtocolException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final int eventIndex;
  private final String ruleId;
  private final String detail;
  private final transient List<Violation> violations;

  public StreamProtocolException(int eventIndex, String ruleId, String detail) {
    this(eventIndex, ruleId, detail, List.of());
  }

  public StreamProtocolException(
      int eventIndex, String ruleId, String detail, List<Violation> violations) {
    super("event %d breaks rule '%s': %s".formatted(eventIndex, ruleId, detail));
    this.eventIndex = eventIndex;
    this.ruleId = ruleId;
    this.detail = detail;
    this.violations = List.copyOf(violations);
  }

  /** The index of the offending event, from 0. */
  public int eventIndex() {
    return eventIndex;
  }

  /** The id of the broken rule, e.g. {@code block-exists}. */
  public String ruleId() {
    return ruleId;
  }

  /** What is wrong, in words. */
  public String detail() {
    return detail;
  }

  /** For {@code terminal-valid}, the terminal event's violations; otherwise empty. */
  public List<Violation> violations() {
    return violations;
  }
}
