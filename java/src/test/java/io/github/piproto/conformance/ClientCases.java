package io.github.piproto.conformance;

import io.github.piproto.AssistantMessageEventStream;
import io.github.piproto.ModelClient;
import io.github.piproto.StreamFailure;
import io.github.piproto.ai.v1.AgentContext;
import io.github.piproto.ai.v1.AgentMessage;
import io.github.piproto.ai.v1.AssistantMessage;
import io.github.piproto.ai.v1.ModelEvent;
import io.github.piproto.ai.v1.StopReason;
import io.github.piproto.ai.v1.StreamRequest;
import io.github.piproto.ai.v1.TextContent;
import io.github.piproto.ai.v1.UserContent;
import io.github.piproto.ai.v1.UserMessage;
import io.github.piproto.conformance.v1.ClientCase;
import io.github.piproto.conformance.v1.ClientOutcome;
import io.github.piproto.conformance.v1.ClientSettings;
import io.grpc.Metadata;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The client cases: a call of the reference server, which plays the case the request metadata
 * names, through the default client (StreamBatched, whose batches group the case's consecutive
 * events); the terminal event's reason, the events received, the failure and the result compared.
 */
final class ClientCases {
  private static final Metadata.Key<String> CASE_HEADER =
      Metadata.Key.of("pi-conformance-case", Metadata.ASCII_STRING_MARSHALLER);
  private static final ScheduledExecutorService CANCELLERS =
      Executors.newSingleThreadScheduledExecutor(
          task -> {
            Thread thread = new Thread(task, "canceller");
            thread.setDaemon(true);
            return thread;
          });

  private ClientCases() {}

  static void run(ClientCase client, String name, String server) throws Exception {
    ClientSettings settings = client.getClient();
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
        if (count == settings.getCloseAfterEvents()) {
          caller.close();
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
    ClientOutcome expect = client.getExpect();
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
        ConformanceRunner.sameRule(failure.rule().get(), expect.getRule());
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
  private static StreamRequest requestOf(ClientCase client) {
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
}
