package io.github.piproto;

import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.MessageLite;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * The binary encoding the schema asks for: map entries sorted by key (protobuf's deterministic
 * serialization), so a message encodes to the same bytes in every language. protobuf-java's own
 * {@code toByteArray()} writes a map in the order its entries were put.
 */
public final class Wire {
  private Wire() {}

  /** The bytes of {@code message}, map entries in key order; unknown fields are kept. */
  public static byte[] toBytes(MessageLite message) {
    byte[] bytes = new byte[message.getSerializedSize()];
    CodedOutputStream output = CodedOutputStream.newInstance(bytes);
    output.useDeterministicSerialization();
    try {
      message.writeTo(output);
    } catch (IOException error) {
      throw new UncheckedIOException(error); // an array of the exact size does not overflow
    }
    output.checkNoSpaceLeft();
    return bytes;
  }
}
