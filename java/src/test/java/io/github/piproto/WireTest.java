package io.github.piproto;

import static io.github.piproto.Fixtures.TEST_TIMEOUT_SECONDS;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.github.piproto.ai.v1.GenerationOptions;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The schema's encoding writes map entries in key order, whatever order they were put in. */
class WireTest {
  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void mapEntriesEncodeInKeyOrder() throws Exception {
    GenerationOptions putLastFirst =
        GenerationOptions.newBuilder().putHeaders("x-trace", "abc").putHeaders("a-b", "c").build();
    GenerationOptions putInOrder =
        GenerationOptions.newBuilder().putHeaders("a-b", "c").putHeaders("x-trace", "abc").build();
    assertFalse(Arrays.equals(putInOrder.toByteArray(), putLastFirst.toByteArray()));
    assertArrayEquals(putInOrder.toByteArray(), Wire.toBytes(putLastFirst));
    assertEquals(putLastFirst, GenerationOptions.parseFrom(Wire.toBytes(putLastFirst)));
  }
}
