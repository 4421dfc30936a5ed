package pi.proto;

/**
 * Bounds on the JSON text a message may carry.
 *
 * @param maxJsonBytes the largest {@code *_json} field, in bytes of UTF-8
 * @param maxJsonDepth the deepest nesting of objects and arrays in a {@code *_json} field
 */
public record Limits(long maxJsonBytes, int maxJsonDepth) {
  /** Room for a 4 MiB tool argument or result, nested at most 64 deep. */
  public static final Limits DEFAULT = new Limits(4L * 1024 * 1024, 64);
}
