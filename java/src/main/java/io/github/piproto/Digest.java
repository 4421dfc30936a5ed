package io.github.piproto;

import io.github.piproto.ai.v1.AssistantContent;
import io.github.piproto.ai.v1.AssistantMessage;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.List;

/**
 * The digest a terminal event carries of the content its stream built ({@code
 * DoneEvent.content_sha256}, {@code ErrorEvent.content_sha256}; rule {@code terminal-digest}).
 */
public final class Digest {
  private Digest() {}

  /**
   * SHA-256 of the encoding of an AssistantMessage holding only {@code content}: what the sender
   * and every receiver compute alike, since each block's fields are written in field-number order.
   */
  public static byte[] contentSha256(List<AssistantContent> content) {
    byte[] encoded = Wire.toBytes(AssistantMessage.newBuilder().addAllContent(content).build());
    try {
      return MessageDigest.getInstance("SHA-256").digest(encoded);
    } catch (NoSuchAlgorithmException missing) {
      throw new IllegalStateException("every Java platform has SHA-256", missing);
    }
  }
}
