package io.github.piproto;

import io.github.piproto.ai.v1.ModelThinkingLevel;
import io.github.piproto.ai.v1.NestedCallStatus;
import io.github.piproto.ai.v1.StopReason;
import io.github.piproto.ai.v1.Strictness;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * pi's words for the values of an enum, both ways. A word pi does not define is refused when read,
 * as no value could hold it; a value pi has no word for cannot be written where one is required.
 */
final class PiWords<E> {
  static final PiWords<StopReason> STOP_REASONS =
      new PiWords<StopReason>()
          .with("stop", StopReason.STOP_REASON_STOP)
          .with("length", StopReason.STOP_REASON_LENGTH)
          .with("toolUse", StopReason.STOP_REASON_TOOL_USE)
          .with("error", StopReason.STOP_REASON_ERROR)
          .with("aborted", StopReason.STOP_REASON_ABORTED)
          .with("pending", StopReason.STOP_REASON_PENDING)
          .with("deferred", StopReason.STOP_REASON_DEFERRED);

  static final PiWords<ModelThinkingLevel> THINKING_LEVELS =
      new PiWords<ModelThinkingLevel>()
          .with("off", ModelThinkingLevel.MODEL_THINKING_LEVEL_OFF)
          .with("minimal", ModelThinkingLevel.MODEL_THINKING_LEVEL_MINIMAL)
          .with("low", ModelThinkingLevel.MODEL_THINKING_LEVEL_LOW)
          .with("medium", ModelThinkingLevel.MODEL_THINKING_LEVEL_MEDIUM)
          .with("high", ModelThinkingLevel.MODEL_THINKING_LEVEL_HIGH)
          .with("xhigh", ModelThinkingLevel.MODEL_THINKING_LEVEL_XHIGH)
          .with("max", ModelThinkingLevel.MODEL_THINKING_LEVEL_MAX);

  static final PiWords<NestedCallStatus> NESTED_CALL_STATUSES =
      new PiWords<NestedCallStatus>()
          .with("ok", NestedCallStatus.NESTED_CALL_STATUS_OK)
          .with("error", NestedCallStatus.NESTED_CALL_STATUS_ERROR)
          .with("unfinished", NestedCallStatus.NESTED_CALL_STATUS_UNFINISHED);

  static final PiWords<Strictness> STRICTNESS =
      new PiWords<Strictness>()
          .with("prefer", Strictness.STRICTNESS_PREFER)
          .with("require", Strictness.STRICTNESS_REQUIRE);

  private final Map<String, E> values = new LinkedHashMap<>();
  private final Map<E, String> words = new LinkedHashMap<>();

  private PiWords() {}

  private PiWords<E> with(String word, E value) {
    values.put(word, value);
    words.put(value, word);
    return this;
  }

  /** The value of pi's {@code word}; empty for a word pi does not define. */
  Optional<E> value(String word) {
    return Optional.ofNullable(values.get(word));
  }

  /** pi's word for {@code value}; empty when pi has none (an unset enum). */
  Optional<String> word(E value) {
    return Optional.ofNullable(words.get(value));
  }

  /** pi's word for a value the message must have set; {@code where} names the field. */
  String requiredWord(E value, String where) {
    return word(value)
        .orElseThrow(
            () ->
                new PiJsonException(
                    where, "must be one of " + list(words.values()) + ", got " + value));
  }

  /** pi's words, listed for an error. */
  String list() {
    return list(values.keySet());
  }

  private static String list(Iterable<String> words) {
    return String.join(", ", words);
  }
}
