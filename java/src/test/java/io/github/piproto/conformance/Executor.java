package io.github.piproto.conformance;

import com.google.protobuf.ByteString;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.Message;
import com.google.protobuf.util.JsonFormat;
import io.github.piproto.Accumulator;
import io.github.piproto.AssistantMessageEventStream;
import io.github.piproto.Costs;
import io.github.piproto.ModelClient;
import io.github.piproto.PiJson;
import io.github.piproto.PiJsonException;
import io.github.piproto.SessionWarning;
import io.github.piproto.StreamProtocolException;
import io.github.piproto.Validation;
import io.github.piproto.Violation;
import io.github.piproto.Wire;
import io.github.piproto.ai.v1.AgentContext;
import io.github.piproto.ai.v1.AssistantMessage;
import io.github.piproto.ai.v1.ModelEvent;
import io.github.piproto.ai.v1.Service;
import io.github.piproto.ai.v1.StartEvent;
import io.github.piproto.ai.v1.ToolCallDeltaEvent;
import io.github.piproto.ai.v1.ToolCallStartEvent;
import io.github.piproto.ai.v1.Transcript;
import io.github.piproto.ai.v1.TranscriptEntry;
import io.github.piproto.conformance.v1.Case;
import io.github.piproto.conformance.v1.CaseRequest;
import io.github.piproto.conformance.v1.CaseResult;
import io.github.piproto.conformance.v1.ClientCase;
import io.github.piproto.conformance.v1.ClientOutcome;
import io.github.piproto.conformance.v1.ClientSettings;
import io.github.piproto.conformance.v1.PartialJsonCase;
import io.github.piproto.conformance.v1.PartialJsonResult;
import io.github.piproto.conformance.v1.PiJsonCase;
import io.github.piproto.conformance.v1.PiJsonResult;
import io.github.piproto.conformance.v1.PiSession;
import io.github.piproto.conformance.v1.StreamCase;
import io.github.piproto.conformance.v1.StreamFailure;
import io.github.piproto.conformance.v1.StreamResult;
import io.github.piproto.conformance.v1.ValidateCase;
import io.github.piproto.conformance.v1.ValidateResult;
import io.github.piproto.conformance.v1.WireCase;
import io.github.piproto.conformance.v1.WireResult;
import io.grpc.Metadata;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The Java executor of the conformance corpus: reads size-delimited {@code CaseRequest}s from
 * standard input, runs each on the runtime's public API, and writes one size-delimited {@code
 * CaseResult} for each to standard output (conformance.proto says what each holds). It compares
 * nothing: the harness (tests/conformance/harness.py) does. Diagnostics go to standard error.
 */
public final class Executor {
  private static final Metadata.Key<String> CASE_HEADER =
      Metadata.Key.of("pi-conformance-case", Metadata.ASCII_STRING_MARSHALLER);

  /** A client call that has not ended by then is cancelled, so a hang fails one case only. */
  private static final Duration CLIENT_LIMIT = Duration.ofSeconds(30);

  private static final ScheduledExecutorService TIMERS =
      Executors.newSingleThreadScheduledExecutor(
          task -> {
            Thread thread = new Thread(task, "executor-timer");
            thread.setDaemon(true);
            return thread;
          });

  /** Every generated pi.ai.v1 message, by full name. */
  private static final Map<String, Message> TYPES = messageTypes();

  private Executor() {}

  public static void main(String[] args) throws IOException {
    InputStream requests = new BufferedInputStream(new FileInputStream(java.io.FileDescriptor.in));
    OutputStream results =
        new BufferedOutputStream(new FileOutputStream(java.io.FileDescriptor.out));
    System.setOut(System.err); // standard output carries the results alone
    CaseRequest request;
    while ((request = CaseRequest.parseDelimitedFrom(requests)) != null) {
      run(request).writeDelimitedTo(results);
      results.flush();
    }
    System.exit(0); // without waiting for the transport's threads
  }

  /** The result of one case: its kind's outcome, or {@code error} with what was raised. */
  static CaseResult run(CaseRequest request) {
    Case testCase = request.getCase();
    CaseResult.Builder result = CaseResult.newBuilder().setName(testCase.getName());
    try {
      switch (testCase.getKindCase()) {
        case WIRE -> result.setWire(wire(testCase.getWire()));
        case VALIDATE -> result.setValidate(validate(testCase.getValidate()));
        case STREAM -> result.setStream(stream(testCase.getStream()));
        case CLIENT ->
            result.setClient(
                client(
                    testCase.getClient(),
                    testCase.getName(),
                    request.getServer(),
                    request.getProtocol()));
        case COST ->
            result.setCost(
                Costs.calculateCost(testCase.getCost().getRates(), testCase.getCost().getUsage()));
        case PARTIAL_JSON -> result.setPartialJson(partialJson(testCase.getPartialJson()));
        case PI_JSON -> result.setPiJson(piJson(testCase.getPiJson()));
        default -> result.setError("the Java runtime does not run " + kindOf(testCase) + " cases");
      }
    } catch (Exception | StackOverflowError error) {
      result.setError(error.getClass().getSimpleName() + ": " + error.getMessage());
    }
    return result.build();
  }

  private static String kindOf(Case testCase) {
    FieldDescriptor field =
        Case.getDescriptor().findFieldByNumber(testCase.getKindCase().getNumber());
    return field == null ? "unset" : field.getName();
  }

  /** Decoded and encoded again (map entries in key order), printed, and parsed from the JSON. */
  private static WireResult wire(WireCase wire) throws IOException {
    Message prototype = TYPES.get(wire.getType());
    if (prototype == null) {
      throw new IllegalArgumentException("no pi.ai.v1 type " + wire.getType());
    }
    Message message = prototype.getParserForType().parseFrom(wire.getBinary());
    Message.Builder parsed = prototype.newBuilderForType();
    JsonFormat.parser().merge(JsonFormat.printer().print(wire.getJson()), parsed);
    return WireResult.newBuilder()
        .setBinary(ByteString.copyFrom(Wire.toBytes(message)))
        .setJson(JsonFormat.printer().print(message))
        .setJsonBinary(ByteString.copyFrom(Wire.toBytes(parsed.build())))
        .build();
  }

  private static ValidateResult validate(ValidateCase validate) {
    FieldDescriptor input =
        ValidateCase.getDescriptor().findFieldByNumber(validate.getInputCase().getNumber());
    if (input == null) {
      throw new IllegalArgumentException("the case has no input");
    }
    return ValidateResult.newBuilder()
        .addAllViolations(violations(Validation.violations((Message) validate.getField(input))))
        .build();
  }

  /** The events pushed in order, each taken at once; stops at a broken rule or a terminal event. */
  private static StreamResult stream(StreamCase stream) {
    long limit = stream.getMaxMessageBytes();
    AssistantMessageEventStream events =
        new AssistantMessageEventStream(limit == 0 ? Accumulator.DEFAULT_MAX_MESSAGE_BYTES : limit);
    Iterator<ModelEvent> taking = events.iterator();
    StreamResult.Builder result = StreamResult.newBuilder();
    for (ModelEvent event : stream.getEventsList()) {
      if (events.isDone()) {
        break; // events after a terminal event are not delivered
      }
      try {
        events.push(event);
      } catch (StreamProtocolException broken) {
        return result.setFailure(failure(broken)).build();
      }
      taking.next();
      result.addPartials(events.partial());
    }
    AssistantMessage message = events.isDone() ? events.result().getNow(null) : null;
    if (message != null) {
      result.setResult(message);
    }
    return result.build();
  }

  /** One call of the reference server, which plays the case the request metadata names. */
  private static ClientOutcome client(
      ClientCase client, String name, String server, String protocol) throws Exception {
    if (!protocol.isEmpty() && !protocol.equals("grpc")) {
      throw new UnsupportedOperationException("the Java client speaks gRPC only, not " + protocol);
    }
    ClientSettings settings = client.getClient();
    Metadata headers = new Metadata();
    headers.put(CASE_HEADER, name);
    Duration deadline =
        settings.getDeadlineMs() == 0 ? null : Duration.ofMillis(settings.getDeadlineMs());
    int count = 0;
    ModelEvent last = ModelEvent.getDefaultInstance();
    AssistantMessageEventStream events;
    AssistantMessage message;
    try (ModelClient base = new ModelClient(server)) {
      ModelClient caller =
          settings.getMaxMessageBytes() == 0
              ? base
              : base.withMaxMessageBytes(settings.getMaxMessageBytes());
      events = caller.stream(client.getRequest(), deadline, headers);
      AssistantMessageEventStream started = events;
      ScheduledFuture<?> canceller =
          settings.getCancelAfterMs() == 0
              ? null
              : TIMERS.schedule(
                  (Runnable) started::cancel, settings.getCancelAfterMs(), TimeUnit.MILLISECONDS);
      AtomicBoolean late = new AtomicBoolean();
      ScheduledFuture<?> watchdog =
          TIMERS.schedule(
              () -> {
                late.set(true);
                started.cancel();
              },
              CLIENT_LIMIT.toMillis(),
              TimeUnit.MILLISECONDS);
      for (ModelEvent event : events) {
        count += 1;
        last = event;
        if (count == settings.getCancelAfterEvents()) {
          events.cancel();
        }
        if (count == settings.getCloseAfterEvents()) {
          caller.close();
        }
      }
      watchdog.cancel(false);
      if (canceller != null) {
        canceller.cancel(false);
      }
      if (late.get()) {
        throw new IllegalStateException(
            "no terminal event within " + CLIENT_LIMIT.toSeconds() + " s");
      }
      message = events.result().get(CLIENT_LIMIT.toMillis(), TimeUnit.MILLISECONDS);
    }
    ClientOutcome.Builder outcome = ClientOutcome.newBuilder().setEvents(count).setResult(message);
    if (last.hasDone()) {
      outcome.setReason(last.getDone().getReason());
    } else if (last.hasError()) {
      outcome.setReason(last.getError().getReason());
    }
    events
        .failure()
        .ifPresent(
            failure -> {
              failure.statusCode().ifPresent(outcome::setStatusCode);
              failure.rule().ifPresent(rule -> outcome.setRule(failure(rule)));
            });
    return outcome.build();
  }

  /**
   * The partial's arguments after a tool call streamed the text through the public accumulator, as
   * one delta and one code point at a time.
   */
  private static PartialJsonResult partialJson(PartialJsonCase partialJson) {
    String text = partialJson.getText();
    List<String> byCharacter = text.codePoints().mapToObj(Character::toString).toList();
    return PartialJsonResult.newBuilder()
        .setWhole(streamed(List.of(text)))
        .setByCharacter(streamed(byCharacter))
        .build();
  }

  private static String streamed(List<String> deltas) {
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
    return accumulator.partial().getContent(0).getToolCall().getArgumentsJson();
  }

  /**
   * The case's text read as an entry, or as a session file, a context or an event when the case
   * expects one, and written back; an event without its partial in pi 1.6's delta-only form. A
   * refused text gives the path of the offending value.
   */
  private static PiJsonResult piJson(PiJsonCase piJson) {
    String text = piJson.getText();
    try {
      return switch (piJson.getExpectCase()) {
        case SESSION -> {
          List<SessionWarning> warnings = new ArrayList<>();
          List<TranscriptEntry> entries = PiJson.sessionFromPi(text, warnings);
          PiSession.Builder session = PiSession.newBuilder().addAllEntries(entries);
          warnings.forEach(warning -> session.addWarnedLines(warning.line()));
          yield PiJsonResult.newBuilder()
              .setSession(session)
              .setWritten(PiJson.sessionToPi(entries))
              .build();
        }
        case EVENT -> {
          ModelEvent event = PiJson.eventFromPi(text);
          PiJson.EventForm form =
              event.hasPartial() ? PiJson.EventForm.WITH_PARTIAL : PiJson.EventForm.DELTA_ONLY;
          yield PiJsonResult.newBuilder()
              .setEvent(event)
              .setWritten(PiJson.eventToPi(event, form))
              .build();
        }
        case CONTEXT -> {
          AgentContext context = PiJson.contextFromPi(text);
          yield PiJsonResult.newBuilder()
              .setContext(context)
              .setWritten(PiJson.contextToPi(context))
              .build();
        }
        default -> {
          TranscriptEntry entry = PiJson.entryFromPi(text);
          PiJsonResult.Builder result =
              PiJsonResult.newBuilder().setEntry(entry).setWritten(PiJson.entryToPi(entry));
          if (piJson.hasEdited()) {
            result.setEditedWritten(PiJson.entryToPi(piJson.getEdited()));
          }
          yield result.build();
        }
      };
    } catch (PiJsonException error) {
      return PiJsonResult.newBuilder().setErrorPath(error.path()).build();
    }
  }

  private static StreamFailure failure(StreamProtocolException broken) {
    return StreamFailure.newBuilder()
        .setEventIndex(broken.eventIndex())
        .setRuleId(broken.ruleId())
        .addAllViolations(violations(broken.violations()))
        .build();
  }

  private static List<io.github.piproto.conformance.v1.Violation> violations(
      List<Violation> found) {
    return found.stream()
        .map(
            violation ->
                io.github.piproto.conformance.v1.Violation.newBuilder()
                    .setFieldPath(violation.fieldPath())
                    .setRuleId(violation.ruleId())
                    .build())
        .toList();
  }

  private static Map<String, Message> messageTypes() {
    Map<String, Message> types = new HashMap<>();
    // The service's and the transcript's files import every other file of pi.ai.v1.
    ArrayDeque<FileDescriptor> files =
        new ArrayDeque<>(List.of(Service.getDescriptor(), Transcript.getDescriptor()));
    Set<FileDescriptor> seen = new HashSet<>();
    while (!files.isEmpty()) {
      FileDescriptor file = files.pop();
      if (!file.getPackage().equals("pi.ai.v1") || !seen.add(file)) {
        continue;
      }
      files.addAll(file.getDependencies());
      for (Descriptor type : file.getMessageTypes()) {
        String className = file.getOptions().getJavaPackage() + "." + type.getName();
        try {
          Message prototype =
              (Message) Class.forName(className).getMethod("getDefaultInstance").invoke(null);
          types.put(type.getFullName(), prototype);
        } catch (ReflectiveOperationException error) {
          throw new IllegalStateException(error);
        }
      }
    }
    return types;
  }
}
