package io.github.piproto;

import java.util.Optional;

/**
 * The strict reader of the JSON text rules.
 *
 * @deprecated merged into {@link JsonText}: use {@link JsonText#problem}
 */
@Deprecated
public final class StrictJson {
  /** Objects and arrays nest at most this deep: {@link JsonText#MAX_DEPTH}. */
  public static final int MAX_DEPTH = JsonText.MAX_DEPTH;

  /** One broken JSON text rule: its id and what is wrong. */
  public record Problem(String ruleId, String detail) {}

  private StrictJson() {}

  /** What breaks the rules in {@code text}: {@link JsonText#problem}. */
  public static Optional<Problem> problem(String text, boolean objectRequired) {
    return JsonText.problem(text, objectRequired)
        .map(found -> new Problem(found.ruleId(), found.detail()));
  }
}
