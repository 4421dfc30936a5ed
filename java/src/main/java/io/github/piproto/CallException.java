package io.github.piproto;

import io.grpc.Status;

/**
 * A catalog call ({@link ModelClient#listModels}, {@link ModelClient#getModel}) that ended with a
 * gRPC status other than OK: {@link #statusCode()} names the code, e.g. {@code NOT_FOUND} or {@code
 * UNAVAILABLE}, and {@link #detail()} is the server's description of it.
 */
public class CallException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final String statusCode;
  private final String detail;

  public CallException(String statusCode, String detail) {
    super(statusCode + ": " + detail);
    this.statusCode = statusCode;
    this.detail = detail;
  }

  /** The exception of a call that ended with {@code status}. */
  static CallException of(Status status) {
    String code = status.getCode().name();
    String description = status.getDescription();
    return new CallException(
        code, description == null || description.isEmpty() ? code : description);
  }

  /** The name of the gRPC status code, e.g. {@code NOT_FOUND}. */
  public String statusCode() {
    return statusCode;
  }

  /** The status description, or the code's name when it has none. */
  public String detail() {
    return detail;
  }
}
