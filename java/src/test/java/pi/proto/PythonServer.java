package pi.proto;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Python's {@code pi-proto serve}, run as a child process for the client tests. */
final class PythonServer implements AutoCloseable {
  private static final Pattern LISTENING = Pattern.compile("^listening on (\\S+)$");

  private final Process process;
  private final String target;

  private PythonServer(Process process, String target) {
    this.process = process;
    this.target = target;
  }

  /** The pi-proto command of the repository's virtualenv. */
  static Path piProto() {
    return Fixtures.repoRoot().resolve(".venv/bin/pi-proto");
  }

  /**
   * Start {@code pi-proto serve --port 0 ...args} and wait for its "listening on HOST:PORT" line.
   */
  static PythonServer start(String... args) throws IOException {
    List<String> command = new ArrayList<>(List.of(piProto().toString(), "serve", "--port", "0"));
    command.addAll(List.of(args));
    Process process =
        new ProcessBuilder(command)
            .directory(Fixtures.repoRoot().toFile())
            .redirectError(ProcessBuilder.Redirect.INHERIT)
            .start();
    // A test run that ends early must not leave its servers running.
    Runtime.getRuntime().addShutdownHook(new Thread(process::destroyForcibly));
    BufferedReader output =
        new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    String line = output.readLine();
    Matcher listening = LISTENING.matcher(line == null ? "" : line);
    if (!listening.matches()) {
      process.destroyForcibly();
      throw new IllegalStateException(
          "pi-proto serve printed " + line + " instead of \"listening on HOST:PORT\"");
    }
    discardTheRest(process.getInputStream());
    return new PythonServer(process, listening.group(1));
  }

  /** Run {@code pi-proto ...args} to completion and return its standard output. */
  static String run(String... args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of(piProto().toString()));
    command.addAll(List.of(args));
    Process process =
        new ProcessBuilder(command)
            .directory(Fixtures.repoRoot().toFile())
            .redirectError(ProcessBuilder.Redirect.INHERIT)
            .start();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    int status = process.waitFor();
    if (status != 0) {
      throw new IllegalStateException(
          "pi-proto " + String.join(" ", args) + " exited with " + status);
    }
    return output;
  }

  /** host:port, as printed by {@code pi-proto serve}. */
  String target() {
    return target;
  }

  /** SIGTERM: the server shuts down gracefully, ending open streams with ABORTED. */
  void stop() throws InterruptedException {
    process.destroy();
    process.waitFor();
  }

  /** SIGKILL: the server vanishes mid-whatever. */
  void kill() throws InterruptedException {
    process.destroyForcibly();
    process.waitFor();
  }

  @Override
  public void close() throws InterruptedException {
    if (process.isAlive()) {
      stop();
    }
  }

  /** Keep reading the server's output so that it never blocks on a full pipe. */
  private static void discardTheRest(InputStream output) {
    Thread reader =
        new Thread(
            () -> {
              try (output) {
                output.transferTo(OutputStream.nullOutputStream());
              } catch (IOException closed) {
                // the server has exited
              }
            },
            "pi-proto-serve-output");
    reader.setDaemon(true);
    reader.start();
  }
}
