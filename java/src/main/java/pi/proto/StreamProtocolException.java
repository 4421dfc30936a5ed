package pi.proto;

/**
 * An event that does not fit the stream received so far; the message names the event's index, its
 * kind and the rule it breaks, e.g. {@code event 1 (text_delta) breaks rule 'block-exists':
 * content_index 4 refers to no block (the message has 0)}.
 */
public class StreamProtocolException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public StreamProtocolException(String message) {
    super(message);
  }
}
