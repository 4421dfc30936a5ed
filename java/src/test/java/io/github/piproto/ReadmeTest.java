package io.github.piproto;

import static io.github.piproto.Fixtures.TEST_TIMEOUT_SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The README's streaming example is the code of ClientTest.theReadmeExample, so it cannot rot. */
class ReadmeTest {
  private static final Path JAVA = Fixtures.repoRoot().resolve("java");

  private static String between(String text, String begin, String end) {
    int from = text.indexOf(begin);
    if (from < 0) {
      throw new AssertionError("missing: " + begin);
    }
    from += begin.length();
    return text.substring(from, text.indexOf(end, from));
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void theStreamingExampleIsTheCodeOfATest() throws Exception {
    String readme = Files.readString(JAVA.resolve("README.md"));
    String example = between(readme, "## Streaming\n\n```java\n", "\n```");

    String test = Files.readString(JAVA.resolve("src/test/java/io/github/piproto/ClientTest.java"));
    String code = between(test, "    // README example: begin\n", "    // README example: end");
    String dedented =
        code.lines()
            .map(line -> line.startsWith("    ") ? line.substring(4) : line)
            .collect(Collectors.joining("\n"));

    assertEquals(dedented, example);
  }
}
