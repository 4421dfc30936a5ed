package io.github.piproto;

import java.util.List;
import java.util.stream.Collectors;

/** A message that breaks one or more rules of the schema; {@link #violations()} lists them all. */
public class ValidationException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final transient List<Violation> violations;

  public ValidationException(List<Violation> violations) {
    super(violations.stream().map(Violation::toString).collect(Collectors.joining("; ")));
    this.violations = List.copyOf(violations);
  }

  /** Every broken rule, as protovalidate found them, or the JSON text rules if those all hold. */
  public List<Violation> violations() {
    return violations;
  }
}
