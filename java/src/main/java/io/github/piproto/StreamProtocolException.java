package io.github.piproto;

import io.github.piproto.ai.v1.StreamRule;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * An event that does not fit the stream received so far: the event's index (from 0 at the first
 * event of the stream), the stream rule it breaks, and why. For {@code terminal-valid}, {@link
 * #violations()} lists what the terminal event breaks, with paths from the ModelEvent (e.g. {@code
 * done.message.content[0].tool_call.id}); it is empty for every other rule.
 *
 * <p>The rules are stated once, in the schema: the {@code StreamRule} enum of {@code
 * proto/pi/ai/v1/event.proto}.
 */
public class StreamProtocolException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private static final String PREFIX = "STREAM_RULE_";

  private final int eventIndex;
  private final StreamRule rule;
  private final String detail;
  private final transient List<Violation> violations;

  public StreamProtocolException(int eventIndex, StreamRule rule, String detail) {
    this(eventIndex, rule, detail, List.of());
  }

  public StreamProtocolException(
      int eventIndex, StreamRule rule, String detail, List<Violation> violations) {
    super("event %d breaks rule '%s': %s".formatted(eventIndex, ruleId(rule), detail));
    this.eventIndex = eventIndex;
    this.rule = rule;
    this.detail = detail;
    this.violations = List.copyOf(violations);
  }

  /**
   * A broken rule named by its text id.
   *
   * @deprecated name the rule by its {@link StreamRule} value
   * @throws IllegalArgumentException if {@code ruleId} is not the text id of a stream rule
   */
  @Deprecated
  public StreamProtocolException(int eventIndex, String ruleId, String detail) {
    this(eventIndex, ruleOf(ruleId), detail, List.of());
  }

  /**
   * A broken rule named by its text id, with the violations of a terminal event.
   *
   * @deprecated name the rule by its {@link StreamRule} value
   * @throws IllegalArgumentException if {@code ruleId} is not the text id of a stream rule
   */
  @Deprecated
  public StreamProtocolException(
      int eventIndex, String ruleId, String detail, List<Violation> violations) {
    this(eventIndex, ruleOf(ruleId), detail, violations);
  }

  /**
   * The text id of {@code rule}, as the conformance corpus and error messages name it: the value's
   * name without {@code STREAM_RULE_}, in lower case, {@code _} as {@code -} (e.g. {@code
   * STREAM_RULE_BLOCK_OPEN} is {@code block-open}).
   */
  public static String ruleId(StreamRule rule) {
    String name = Objects.requireNonNull(rule, "rule").name();
    if (!name.startsWith(PREFIX)) {
      throw new IllegalArgumentException("not a stream rule: " + name);
    }
    return name.substring(PREFIX.length()).toLowerCase(Locale.ROOT).replace('_', '-');
  }

  private static StreamRule ruleOf(String ruleId) {
    for (StreamRule rule : StreamRule.values()) {
      if (rule != StreamRule.UNRECOGNIZED && ruleId(rule).equals(ruleId)) {
        return rule;
      }
    }
    throw new IllegalArgumentException("not the id of a stream rule: " + ruleId);
  }

  /** The index of the offending event, from 0. */
  public int eventIndex() {
    return eventIndex;
  }

  /** The broken rule. */
  public StreamRule rule() {
    return rule;
  }

  /** The text id of the broken rule, e.g. {@code block-exists}: {@link #ruleId(StreamRule)}. */
  public String ruleId() {
    return ruleId(rule);
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
