package pi.proto;

/**
 * A message that breaks a message rule; the message names the path of the offending field, e.g.
 * {@code message.content[1].tool_call.arguments_json: must be a JSON object, got list}.
 */
public class ValidationException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public ValidationException(String message) {
    super(message);
  }
}
