package io.github.piproto;

import java.util.Optional;

/**
 * Why a receiver ended a stream itself, with an {@code error} event of its own making: either a
 * gRPC status ended the call ({@link #statusCode()}, e.g. {@code UNAVAILABLE}), or an event broke a
 * stream rule ({@link #rule()}: the event's index, the rule and its text id and, for {@code
 * terminal-valid}, the violations). A stream whose terminal event came from the sender or from a
 * cancel has none.
 */
public final class StreamFailure {
  private final String statusCode;
  private final StreamProtocolException rule;
  private final String detail;

  private StreamFailure(String statusCode, StreamProtocolException rule, String detail) {
    this.statusCode = statusCode;
    this.rule = rule;
    this.detail = detail;
  }

  /** A call ended by a non-OK status, e.g. {@code DEADLINE_EXCEEDED}. */
  public static StreamFailure ofStatus(String code, String detail) {
    return new StreamFailure(code, null, detail);
  }

  /** A stream ended because an event broke a rule, or because no terminal event came. */
  public static StreamFailure ofRule(StreamProtocolException rule) {
    return new StreamFailure(null, rule, rule.getMessage());
  }

  /** The name of the gRPC status code that ended the call, if one did. */
  public Optional<String> statusCode() {
    return Optional.ofNullable(statusCode);
  }

  /** The broken stream rule, if one ended the stream. */
  public Optional<StreamProtocolException> rule() {
    return Optional.ofNullable(rule);
  }

  /** What happened, in words: the status message or the rule's. */
  public String detail() {
    return detail;
  }

  @Override
  public String toString() {
    return (statusCode != null ? statusCode + ": " : "") + detail;
  }
}
