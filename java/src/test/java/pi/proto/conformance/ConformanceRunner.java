package pi.proto.conformance;

import com.google.protobuf.Message;
import com.google.protobuf.util.JsonFormat;
import io.grpc.Metadata;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import pi.ai.v1.Content.TextContent;
import pi.ai.v1.Content.UserContent;
import pi.ai.v1.Context.AgentContext;
import pi.ai.v1.Event.ModelEvent;
import pi.ai.v1.Message.AgentMessage;
import pi.ai.v1.Message.AssistantMessage;
import pi.ai.v1.Message.StopReason;
import pi.ai.v1.Message.UserMessage;
import pi.ai.v1.Service.StreamRequest;
import pi.conformance.v1.Conformance;
import pi.proto.Accumulator;
import pi.proto.AssistantMessageEventStream;
import pi.proto.ModelClient;
import pi.proto.StreamFailure;
import pi.proto.StreamProtocolException;
import pi.proto.Validation;
import pi.proto.Violation;

/**
 * Runs every case of a conformance corpus against the Java runtime's public API and prints one line
 * per case, then {@code java: N passed, M failed, K known failures, S skipped}; exits 1 when a case
 * fails or a known failure passes.
 *
 * <pre>ConformanceRunner --corpus DIR [--known-failures FILE] [--server HOST:PORT]</pre>
 */
public final class ConformanceRunner {
  private static final Metadata.Key<String> CASE_HEADER =
      Metadata.Key.of("pi-conformance-case", Metadata.ASCII_STRING_MARSHALLER);
  private static final ScheduledExecutorService CANCELLERS =
      Executors.newSingleThreadScheduledExecutor(
          task -> {
            Thread thread = new Thread(task, "canceller");
            thread.setDaemon(true);
            return thread;
          });

  private final String server;

  private ConformanceRunner(String server) {
    this.server = server;
  }

  public static void main(String[] args) throws Exception {
    Map<String, String> options = new HashMap<>();
    for (int at = 0; at + 1 < args.length; at += 2) {
      options.put(args[at], args[at + 1]);
    }
    Path corpus = Path.of(options.get("--corpus"));
    Conformance.KnownFailures.Builder known = Conformance.KnownFailures.newBuilder();
    String knownFile = options.get("--known-failures");
    if (knownFile != null && !knownFile.isEmpty()) {
      JsonFormat.parser().merge(Files.readString(Path.of(knownFile)), known);
    }
    Map<String, String> expectedToFail = new HashMap<>();
    known.getFailuresList().forEach(item -> expectedToFail.put(item.getCase(), item.getReason()));
    Map<String, String> unsupported = new HashMap<>();
    known.getUnsupportedList().forEach(item -> unsupported.put(item.getKind(), item.getReason()));
    String target = options.get("--server");
    ConformanceRunner runner =
        new ConformanceRunner(target == null || target.isEmpty() ? null : target);

    int passed = 0, failed = 0, knownFailures = 0, skipped = 0;
    for (Conformance.Case testCase : cases(corpus)) {
      String name = testCase.getName();
      String kind = kindOf(testCase);
      if (unsupported.containsKey(kind) || (kind.equals("client") && runner.server == null)) {
        skipped += 1;
        System.out.println(
            "SKIP " + name + ": " + unsupported.getOrDefault(kind, "no --server given"));
        continue;
      }
      String problem = runner.outcome(testCase);
      if (expectedToFail.containsKey(name)) {
        if (problem == null) {
          failed += 1;
          System.out.println("FIXED " + name + ": passes now; remove it from the known failures");
        } else {
          knownFailures += 1;
          System.out.println("KNOWN " + name + ": " + problem);
        }
      } else if (problem == null) {
        passed += 1;
        System.out.println("PASS " + name);
      } else {
        failed += 1;
        System.out.println("FAIL " + name + ": " + problem);
      }
    }
    System.out.printf(
        "java: %d passed, %d failed, %d known failures, %d skipped%n",
        passed, failed, knownFailures, skipped);
    System.exit(failed == 0 ? 0 : 1);
  }

  /** Every case of the corpus, file by file in name order. */
  private static List<Conformance.Case> cases(Path corpus) throws Exception {
    List<Path> files;
    try (Stream<Path> listing = Files.list(corpus)) {
      files = listing.filter(path -> path.toString().endsWith(".json")).sorted().toList();
    }
    List<Conformance.Case> cases = new ArrayList<>();
    for (Path file : files) {
      Conformance.Suite.Builder suite = Conformance.Suite.newBuilder();
      JsonFormat.parser().merge(Files.readString(file), suite);
      cases.addAll(suite.getCasesList());
    }
    return cases;
  }

  private static String kindOf(Conformance.Case testCase) {
    var field =
        testCase.getDescriptorForType().findFieldByNumber(testCase.getKindCase().getNumber());
    return field == null ? "" : field.getName();
  }

  /** Null when the case passes, else why not. */
  private String outcome(Conformance.Case testCase) {
    try {
      switch (testCase.getKindCase()) {
        case WIRE -> WireCases.run(testCase.getWire());
        case VALIDATE -> runValidate(testCase.getValidate());
        case STREAM -> runStream(testCase.getStream());
        case CLIENT -> runClient(testCase.getClient(), testCase.getName());
        default -> throw new Mismatch("no runner for kind " + kindOf(testCase));
      }
      return null;
    } catch (Mismatch mismatch) {
      return mismatch.getMessage();
    } catch (Exception | StackOverflowError error) {
      return "threw " + error;
    }
  }

  private static void runValidate(Conformance.ValidateCase validate) throws Mismatch {
    Message input =
        switch (validate.getInputCase()) {
          case REQUEST -> validate.getRequest();
          case CONTEXT -> validate.getContext();
          case MESSAGE -> validate.getMessage();
          case EVENT -> validate.getEvent();
          case INPUT_NOT_SET -> throw new Mismatch("the case has no input");
        };
    sameViolations(Validation.violations(input), validate.getViolationsList());
  }

  private static void runStream(Conformance.StreamCase stream) throws Mismatch {
    long limit = stream.getMaxMessageBytes();
    AssistantMessageEventStream events =
        new AssistantMessageEventStream(limit == 0 ? Accumulator.DEFAULT_MAX_MESSAGE_BYTES : limit);
    Iterator<ModelEvent> taking = events.iterator();
    List<AssistantMessage> partials = new ArrayList<>();
    for (ModelEvent event : stream.getEventsList()) {
      if (events.isDone()) {
        break; // events after a terminal event are not delivered
      }
      try {
        events.push(event);
      } catch (StreamProtocolException broken) {
        if (!stream.hasFailure()) {
          throw new Mismatch("event broke a rule: " + broken.getMessage());
        }
        sameRule(broken, stream.getFailure());
        return;
      }
      taking.next();
      partials.add(events.partial());
    }
    if (!stream.hasSuccess()) {
      throw new Mismatch(
          "expected rule %s at event %d; every event fit"
              .formatted(stream.getFailure().getRuleId(), stream.getFailure().getEventIndex()));
    }
    List<AssistantMessage> expected = stream.getSuccess().getPartialsList();
    for (int index = 0; index < Math.min(partials.size(), expected.size()); index++) {
      if (!partials.get(index).equals(expected.get(index))) {
        throw new Mismatch("the partial after event " + index + " differs: " + partials.get(index));
      }
    }
    if (partials.size() != expected.size()) {
      throw new Mismatch(partials.size() + " events delivered, expected " + expected.size());
    }
    AssistantMessage result = events.isDone() ? events.result().getNow(null) : null;
    if (stream.getSuccess().hasResult() != (result != null)) {
      throw new Mismatch(result == null ? "the stream has no result" : "the stream has a result");
    }
    if (result != null && !result.equals(stream.getSuccess().getResult())) {
      throw new Mismatch("the result differs: " + result);
    }
  }

  private void runClient(Conformance.ClientCase client, String name) throws Exception {
    Conformance.ClientSettings settings = client.getClient();
    Metadata headers = new Metadata();
    headers.put(CASE_HEADER, name);
    Duration deadline =
        settings.getDeadlineMs() == 0 ? null : Duration.ofMillis(settings.getDeadlineMs());
    int count = 0;
    ModelEvent last = ModelEvent.getDefaultInstance();
    AssistantMessageEventStream events;
    AssistantMessage result;
    try (ModelClient base = new ModelClient(server)) {
      ModelClient caller =
          settings.getMaxMessageBytes() == 0
              ? base
              : base.withMaxMessageBytes(settings.getMaxMessageBytes());
      events = caller.stream(requestOf(client), deadline, headers);
      ScheduledFuture<?> canceller =
          settings.getCancelAfterMs() == 0
              ? null
              : CANCELLERS.schedule(
                  (Runnable) events::cancel, settings.getCancelAfterMs(), TimeUnit.MILLISECONDS);
      AtomicBoolean late = new AtomicBoolean(); // a client that never ends fails, not hangs
      ScheduledFuture<?> watchdog =
          CANCELLERS.schedule(
              () -> {
                late.set(true);
                events.cancel();
              },
              30,
              TimeUnit.SECONDS);
      for (ModelEvent event : events) {
        count += 1;
        last = event;
        if (count == settings.getCancelAfterEvents()) {
          events.cancel();
        }
      }
      watchdog.cancel(false);
      if (canceller != null) {
        canceller.cancel(false);
      }
      if (late.get()) {
        throw new Mismatch("no terminal event within 30 s");
      }
      result = events.result().get(30, TimeUnit.SECONDS);
    }
    Conformance.ClientOutcome expect = client.getExpect();
    StopReason reason =
        last.hasDone()
            ? last.getDone().getReason()
            : last.hasError() ? last.getError().getReason() : null;
    if (reason != expect.getReason()) {
      throw new Mismatch("ended with " + reason + ", expected " + expect.getReason());
    }
    if (count != expect.getEvents()) {
      throw new Mismatch(count + " events, expected " + expect.getEvents());
    }
    StreamFailure failure = events.failure().orElse(null);
    switch (expect.getFailureCase()) {
      case FAILURE_NOT_SET -> {
        if (failure != null) {
          throw new Mismatch("the client failed the stream itself: " + failure);
        }
      }
      case STATUS_CODE -> {
        if (failure == null || !expect.getStatusCode().equals(failure.statusCode().orElse(null))) {
          throw new Mismatch("expected status " + expect.getStatusCode() + ", got " + failure);
        }
      }
      case RULE -> {
        if (failure == null || failure.rule().isEmpty()) {
          throw new Mismatch("expected rule " + expect.getRule().getRuleId() + ", got " + failure);
        }
        sameRule(failure.rule().get(), expect.getRule());
      }
    }
    if (expect.hasResult()) {
      boolean failed =
          result.getStopReason() == StopReason.STOP_REASON_ERROR
              || result.getStopReason() == StopReason.STOP_REASON_ABORTED;
      if (failed && result.getErrorMessage().isEmpty()) {
        throw new Mismatch("a failed message without an error_message");
      }
      if (!result.toBuilder()
          .clearErrorMessage()
          .build()
          .equals(expect.getResult().toBuilder().clearErrorMessage().build())) {
        throw new Mismatch("the result differs: " + result);
      }
    }
  }

  /** The case's request, or a context of one user message with one text block "hi". */
  private static StreamRequest requestOf(Conformance.ClientCase client) {
    if (client.hasRequest()) {
      return client.getRequest();
    }
    UserMessage user =
        UserMessage.newBuilder()
            .addContent(UserContent.newBuilder().setText(TextContent.newBuilder().setText("hi")))
            .build();
    AgentContext context =
        AgentContext.newBuilder().addMessages(AgentMessage.newBuilder().setUser(user)).build();
    return StreamRequest.newBuilder().setContext(context).build();
  }

  private static void sameRule(StreamProtocolException broken, Conformance.StreamFailure expected)
      throws Mismatch {
    if (broken.eventIndex() != expected.getEventIndex()
        || !broken.ruleId().equals(expected.getRuleId())) {
      throw new Mismatch(
          "rule %s at event %d, expected %s at %d (%s)"
              .formatted(
                  broken.ruleId(),
                  broken.eventIndex(),
                  expected.getRuleId(),
                  expected.getEventIndex(),
                  broken.detail()));
    }
    sameViolations(broken.violations(), expected.getViolationsList());
  }

  private static void sameViolations(List<Violation> found, List<Conformance.Violation> expected)
      throws Mismatch {
    List<String> got =
        found.stream().map(item -> item.fieldPath() + " " + item.ruleId()).sorted().toList();
    List<String> want =
        expected.stream()
            .map(item -> item.getFieldPath() + " " + item.getRuleId())
            .sorted()
            .toList();
    if (!got.equals(want)) {
      throw new Mismatch("violations " + got + ", expected " + want);
    }
  }
}
