package io.github.piproto.conformance;

import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Message;
import com.google.protobuf.util.JsonFormat;
import io.github.piproto.Accumulator;
import io.github.piproto.AssistantMessageEventStream;
import io.github.piproto.Costs;
import io.github.piproto.StreamProtocolException;
import io.github.piproto.Validation;
import io.github.piproto.Violation;
import io.github.piproto.ai.v1.AssistantMessage;
import io.github.piproto.ai.v1.Cost;
import io.github.piproto.ai.v1.ModelEvent;
import io.github.piproto.ai.v1.StartEvent;
import io.github.piproto.ai.v1.ToolCallDeltaEvent;
import io.github.piproto.ai.v1.ToolCallStartEvent;
import io.github.piproto.conformance.v1.Case;
import io.github.piproto.conformance.v1.CostCase;
import io.github.piproto.conformance.v1.KnownFailures;
import io.github.piproto.conformance.v1.PartialJsonCase;
import io.github.piproto.conformance.v1.StreamCase;
import io.github.piproto.conformance.v1.Suite;
import io.github.piproto.conformance.v1.ValidateCase;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * Runs every case of a conformance corpus against the Java runtime's public API and prints one line
 * per case, then {@code java: N passed, M failed, K known failures, S skipped}; exits 1 when a case
 * fails or a known failure passes.
 *
 * <pre>ConformanceRunner --corpus DIR [--known-failures FILE] [--server HOST:PORT]</pre>
 */
public final class ConformanceRunner {
  private ConformanceRunner() {}

  public static void main(String[] args) throws Exception {
    Map<String, String> options = new HashMap<>();
    for (int at = 0; at + 1 < args.length; at += 2) {
      options.put(args[at], args[at + 1]);
    }
    Path corpus = Path.of(options.get("--corpus"));
    KnownFailures.Builder known = KnownFailures.newBuilder();
    String knownFile = options.get("--known-failures");
    if (knownFile != null && !knownFile.isEmpty()) {
      JsonFormat.parser().merge(Files.readString(Path.of(knownFile)), known);
    }
    Map<String, String> expectedToFail = new HashMap<>();
    known.getFailuresList().forEach(item -> expectedToFail.put(item.getCase(), item.getReason()));
    Map<String, String> unsupported = new HashMap<>();
    known.getUnsupportedList().forEach(item -> unsupported.put(item.getKind(), item.getReason()));
    String target = options.get("--server");
    String server = target == null || target.isEmpty() ? null : target;

    int passed = 0, failed = 0, knownFailures = 0, skipped = 0;
    for (Case testCase : cases(corpus)) {
      String name = testCase.getName();
      String kind = kindOf(testCase);
      if (unsupported.containsKey(kind) || (kind.equals("client") && server == null)) {
        skipped += 1;
        System.out.println(
            "SKIP " + name + ": " + unsupported.getOrDefault(kind, "no --server given"));
        continue;
      }
      String problem = outcome(testCase, server);
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
  private static List<Case> cases(Path corpus) throws Exception {
    List<Path> files;
    try (Stream<Path> listing = Files.list(corpus)) {
      files = listing.filter(path -> path.toString().endsWith(".json")).sorted().toList();
    }
    List<Case> cases = new ArrayList<>();
    for (Path file : files) {
      Suite.Builder suite = Suite.newBuilder();
      JsonFormat.parser().merge(Files.readString(file), suite);
      cases.addAll(suite.getCasesList());
    }
    return cases;
  }

  private static String kindOf(Case testCase) {
    var field =
        testCase.getDescriptorForType().findFieldByNumber(testCase.getKindCase().getNumber());
    return field == null ? "" : field.getName();
  }

  /** Null when the case passes, else why not. */
  private static String outcome(Case testCase, String server) {
    try {
      switch (testCase.getKindCase()) {
        case WIRE -> WireCases.run(testCase.getWire());
        case VALIDATE -> runValidate(testCase.getValidate());
        case STREAM -> runStream(testCase.getStream());
        case CLIENT -> ClientCases.run(testCase.getClient(), testCase.getName(), server);
        case COST -> runCost(testCase.getCost());
        case PARTIAL_JSON -> runPartialJson(testCase.getPartialJson());
        default -> throw new Mismatch("no runner for kind " + kindOf(testCase));
      }
      return null;
    } catch (Mismatch mismatch) {
      return mismatch.getMessage();
    } catch (Exception | StackOverflowError error) {
      return "threw " + error;
    }
  }

  private static void runValidate(ValidateCase validate) throws Mismatch {
    FieldDescriptor input =
        validate.getDescriptorForType().findFieldByNumber(validate.getInputCase().getNumber());
    if (input == null) {
      throw new Mismatch("the case has no input");
    }
    Message message = (Message) validate.getField(input);
    sameViolations(Validation.violations(message), validate.getViolationsList());
  }

  private static void runStream(StreamCase stream) throws Mismatch {
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

  private static void runCost(CostCase cost) throws Mismatch {
    Cost got = Costs.calculateCost(cost.getRates(), cost.getUsage());
    Cost want = cost.getCost();
    // Compared as doubles, part by part: bit for bit but for the sign of a zero.
    if (got.getInput() != want.getInput()
        || got.getOutput() != want.getOutput()
        || got.getCacheRead() != want.getCacheRead()
        || got.getCacheWrite() != want.getCacheWrite()
        || got.getTotal() != want.getTotal()
        // Its presence too: pi sets it false on every cost it computes.
        || got.hasTotalFromProvider() != want.hasTotalFromProvider()
        || got.getTotalFromProvider() != want.getTotalFromProvider()) {
      throw new Mismatch("costs " + got);
    }
  }

  /** Through the public accumulator: the text as one delta, then one code point at a time. */
  private static void runPartialJson(PartialJsonCase partialJson) throws Mismatch {
    String text = partialJson.getText();
    List<String> oneByOne = text.codePoints().mapToObj(Character::toString).toList();
    for (List<String> deltas : List.of(List.of(text), oneByOne)) {
      Accumulator accumulator = new Accumulator();
      accumulator.apply(ModelEvent.newBuilder().setStart(StartEvent.getDefaultInstance()).build());
      accumulator.apply(
          ModelEvent.newBuilder()
              .setToolcallStart(ToolCallStartEvent.newBuilder().setId("c").setName("n"))
              .build());
      for (String delta : deltas) {
        accumulator.apply(
            ModelEvent.newBuilder()
                .setToolcallDelta(ToolCallDeltaEvent.newBuilder().setDelta(delta))
                .build());
      }
      String completed = accumulator.partial().getContent(0).getToolCall().getArgumentsJson();
      if (!completed.equals(partialJson.getCompleted())) {
        throw new Mismatch("completes as " + completed + " from " + deltas.size() + " deltas");
      }
    }
  }

  static void sameRule(
      StreamProtocolException broken, io.github.piproto.conformance.v1.StreamFailure expected)
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

  private static void sameViolations(
      List<Violation> found, List<io.github.piproto.conformance.v1.Violation> expected)
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
