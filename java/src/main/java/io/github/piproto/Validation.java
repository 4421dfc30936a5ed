package io.github.piproto;

import build.buf.protovalidate.ValidationResult;
import build.buf.protovalidate.Validator;
import build.buf.protovalidate.ValidatorFactory;
import build.buf.validate.FieldPathElement;
import com.google.protobuf.Message;
import java.util.List;
import java.util.stream.Collectors;

/**
 * The rules of a message: the schema's protovalidate ({@code buf.validate}) rules, enforced by
 * protovalidate-java, then, once those all hold, the JSON text rules of {@link JsonText}.
 *
 * <p>Every broken rule is reported, never only the first: a {@link Violation} with the offending
 * field's path, the rule's id and a detail, e.g. {@code
 * context.messages[0].assistant.content[0].tool_call.id}, {@code string.min_len}. The rules of a
 * stream of events live with the {@link Accumulator} that applies them.
 */
public final class Validation {
  private static final Validator VALIDATOR = ValidatorFactory.newBuilder().build();

  private Validation() {}

  /** Every broken rule of {@code message}; empty when it is valid. */
  public static List<Violation> violations(Message message) {
    ValidationResult result;
    try {
      result = VALIDATOR.validate(message);
    } catch (build.buf.protovalidate.exceptions.ValidationException error) {
      // The schema's rules do not compile: a fault of the build, not of the message.
      throw new IllegalStateException("cannot evaluate the schema's rules: " + error, error);
    }
    if (result.isSuccess()) {
      return JsonText.violations(message);
    }
    return result.getViolations().stream().map(found -> of(found.toProto())).toList();
  }

  /**
   * Check {@code message} against every rule.
   *
   * @throws ValidationException listing every broken rule, if any
   */
  public static void check(Message message) {
    List<Violation> found = violations(message);
    if (!found.isEmpty()) {
      throw new ValidationException(found);
    }
  }

  private static Violation of(build.buf.validate.Violation proto) {
    String path =
        proto.getField().getElementsList().stream()
            .map(Validation::step)
            .collect(Collectors.joining("."));
    return new Violation(path, proto.getRuleId(), proto.getMessage());
  }

  /** One element of a field path: the field's name, and the list index or map key if any. */
  private static String step(FieldPathElement element) {
    String name = element.getFieldName();
    return switch (element.getSubscriptCase()) {
      case INDEX -> name + "[" + element.getIndex() + "]";
      case BOOL_KEY -> name + "[" + element.getBoolKey() + "]";
      case INT_KEY -> name + "[" + element.getIntKey() + "]";
      case UINT_KEY -> name + "[" + Long.toUnsignedString(element.getUintKey()) + "]";
      case STRING_KEY -> name + "[" + quoted(element.getStringKey()) + "]";
      case SUBSCRIPT_NOT_SET -> name;
    };
  }

  private static String quoted(String key) {
    return new com.google.gson.JsonPrimitive(key).toString();
  }
}
