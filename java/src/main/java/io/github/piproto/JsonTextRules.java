package io.github.piproto;

import com.google.protobuf.Message;
import java.util.List;

/**
 * The JSON text rules of a message.
 *
 * @deprecated merged into {@link JsonText}: use {@link JsonText#violations}
 */
@Deprecated
public final class JsonTextRules {
  private JsonTextRules() {}

  /** The broken JSON text rules of {@code message}: {@link JsonText#violations}. */
  public static List<Violation> violations(Message message) {
    return JsonText.violations(message);
  }
}
