package io.github.piproto;

import static io.github.piproto.Fixtures.TEST_TIMEOUT_SECONDS;
import static io.github.piproto.Fixtures.assistantMessage;
import static io.github.piproto.Fixtures.done;
import static io.github.piproto.Fixtures.start;
import static io.github.piproto.Fixtures.text;
import static io.github.piproto.Fixtures.textDelta;
import static io.github.piproto.Fixtures.textStart;
import static io.github.piproto.Fixtures.toolCall;
import static io.github.piproto.Fixtures.userContext;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.piproto.ai.v1.AgentContext;
import io.github.piproto.ai.v1.AgentMessage;
import io.github.piproto.ai.v1.AssistantMessage;
import io.github.piproto.ai.v1.GenerationOptions;
import io.github.piproto.ai.v1.Model;
import io.github.piproto.ai.v1.ModelCost;
import io.github.piproto.ai.v1.ModelEvent;
import io.github.piproto.ai.v1.StopReason;
import io.github.piproto.ai.v1.StreamRequest;
import io.github.piproto.ai.v1.TextContent;
import io.github.piproto.ai.v1.ThinkingLevel;
import io.github.piproto.ai.v1.ToolCall;
import io.github.piproto.ai.v1.ToolChoice;
import io.github.piproto.ai.v1.ToolChoiceMode;
import io.github.piproto.ai.v1.ToolResultContent;
import io.github.piproto.ai.v1.ToolResultMessage;
import io.github.piproto.ai.v1.UserContent;
import io.github.piproto.ai.v1.UserMessage;
import io.grpc.Metadata;
import io.grpc.Status;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The client against a server in the test's own process: the README round trip, the partial,
 * cancellation, deadlines, and every failure a server can cause, each ending in one error event.
 */
class ClientTest {
  private static final List<String> README_KINDS =
      List.of(
          "start",
          "text_start",
          "text_delta",
          "text_delta",
          "text_end",
          "toolcall_start",
          "toolcall_delta",
          "toolcall_delta",
          "toolcall_delta",
          "toolcall_end",
          "done");

  /** The model's first answer: it reads the README. */
  private static final AssistantMessage READ_THE_README =
      assistantMessage(
          StopReason.STOP_REASON_TOOL_USE,
          text("我先读取项目说明。"),
          toolCall("call_1", "read", "{\"path\":\"README.md\"}"));

  /** Its answer once the tool result is in the context. */
  private static final AssistantMessage ANSWER =
      assistantMessage(StopReason.STOP_REASON_STOP, text("README 的标题就是项目名：pi-proto。"));

  /**
   * A server gone quiet: the start of the README answer, then nothing until the client goes away
   * (no pause a busy machine could outlast).
   */
  private static final FakeModelServer.Script START_THEN_QUIET =
      (request, headers, call) -> {
        call.send(Events.eventsOf(READ_THE_README, 8).get(0));
        call.awaitGone();
      };

  /**
   * Wait until {@code thread} waits (for the next event, in these tests), rather than for a time it
   * may well need more of; the test's own timeout bounds the wait.
   */
  private static void awaitWaiting(Thread thread) throws InterruptedException {
    while (thread.getState() != Thread.State.WAITING) {
      Thread.sleep(1);
    }
  }

  private static FakeModelServer fast; // the README round trip, deltas of 8 characters, no delay
  private static ModelClient fastClient; // to the fast server

  /** The scripted model: its first or second answer, as events of 8 characters a delta. */
  private static FakeModelServer.Script scripted(Duration delay) {
    return (request, headers, call) -> {
      List<AgentMessage> messages = request.getContext().getMessagesList();
      boolean answered = !messages.isEmpty() && messages.get(messages.size() - 1).hasToolResult();
      for (ModelEvent event : Events.eventsOf(answered ? ANSWER : READ_THE_README, 8)) {
        if (call.pause(delay)) {
          return;
        }
        call.send(event);
      }
      call.finish();
    };
  }

  @BeforeAll
  @Timeout(TEST_TIMEOUT_SECONDS)
  static void startServers() throws Exception {
    fast = FakeModelServer.start(scripted(Duration.ZERO));
    fastClient = new ModelClient(fast.target());
  }

  @AfterAll
  @Timeout(TEST_TIMEOUT_SECONDS)
  static void stopServers() throws Exception {
    if (fastClient != null) {
      fastClient.close();
    }
    if (fast != null) {
      fast.close();
    }
  }

  private static List<ModelEvent> drain(Iterable<ModelEvent> events) {
    List<ModelEvent> seen = new ArrayList<>();
    events.forEach(seen::add);
    return seen;
  }

  private static List<String> kinds(List<ModelEvent> events) {
    return events.stream().map(Events::eventKind).toList();
  }

  private static ToolCall toolCallOf(AssistantMessage message, int index) {
    assertTrue(message.getContent(index).hasToolCall(), "block " + index + " is a tool call");
    return message.getContent(index).getToolCall();
  }

  /** The broken rule that ended a stream, as "index rule-id". */
  private static String brokenRule(AssistantMessageEventStream events) {
    StreamProtocolException rule = events.failure().orElseThrow().rule().orElseThrow();
    return rule.eventIndex() + " " + rule.ruleId();
  }

  /** A stream played to its end, and the kinds of the events it delivered. */
  private record Played(AssistantMessageEventStream events, List<String> kinds) {}

  /** Play {@code script} once and drain the client's stream. */
  private static Played against(FakeModelServer.Script script) throws Exception {
    try (FakeModelServer server = FakeModelServer.start(script);
        ModelClient client = new ModelClient(server.target())) {
      AssistantMessageEventStream events = client.stream(userContext("hi"));
      return new Played(events, kinds(drain(events)));
    }
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void theReadmeExample() throws Exception {
    String target = fast.target();
    // README example: begin
    UserMessage user =
        UserMessage.newBuilder()
            .addContent(
                UserContent.newBuilder().setText(TextContent.newBuilder().setText("请读取 README")))
            .build();
    AgentContext context =
        AgentContext.newBuilder().addMessages(AgentMessage.newBuilder().setUser(user)).build();
    List<String> kinds = new ArrayList<>();
    AssistantMessage message;
    try (ModelClient client = new ModelClient(target)) { // plaintext HTTP/2 to host:port
      AssistantMessageEventStream events = client.stream(context);
      for (ModelEvent event : events) { // never throws: failures arrive as an "error" event
        kinds.add(Events.eventKind(event)); // "start", "text_start", "text_delta", ..., "done"
      }
      message = events.result().get(); // the AssistantMessage the terminal event carries
    }
    String answer = Messages.textOf(message); // "我先读取项目说明。"
    // README example: end
    assertEquals(README_KINDS, kinds);
    assertEquals("我先读取项目说明。", answer);
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void thePartialIsRebuiltAtEveryStep() throws Exception {
    AssistantMessageEventStream events = fastClient.stream(userContext("hi"));
    List<ModelEvent> seen = new ArrayList<>();
    List<AssistantMessage> partials = new ArrayList<>();
    for (ModelEvent event : events) {
      seen.add(event);
      partials.add(events.partial()); // as of this event, however far the client has read ahead
    }
    assertEquals(README_KINDS, kinds(seen));
    assertTrue(seen.stream().noneMatch(ModelEvent::hasPartial)); // events arrive as sent

    AssistantMessage opened = partials.get(0);
    assertEquals(0, opened.getContentCount());
    assertEquals("scripted-v1", opened.getModel());
    assertEquals("我先读取项目说明", Messages.textOf(partials.get(2)));
    assertEquals("我先读取项目说明。", Messages.textOf(partials.get(3)));
    List<String> raw = new ArrayList<>();
    List<String> live = new ArrayList<>();
    for (int index : new int[] {6, 7, 8}) {
      ToolCall call = toolCallOf(partials.get(index), 1);
      assertEquals("call_1", call.getId());
      assertEquals("read", call.getName());
      raw.add(call.getRawArguments());
      live.add(call.getArgumentsJson());
    }
    assertEquals(List.of("{\"path\":", "{\"path\":\"README.", "{\"path\":\"README.md\"}"), raw);
    // The arguments so far, completed into a JSON object.
    assertEquals(List.of("{}", "{\"path\":\"README.\"}", "{\"path\":\"README.md\"}"), live);
    assertEquals("{\"path\":\"README.md\"}", toolCallOf(partials.get(9), 1).getArgumentsJson());
    assertSame(events.result().get(), partials.get(10));
    assertEquals(READ_THE_README, partials.get(10));
    assertTrue(events.failure().isEmpty());
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void turnTwoAnswersTheToolResult() throws Exception {
    AgentContext request = userContext("请读取 README");
    AssistantMessage first = fastClient.stream(request).result().get(); // no one iterates
    ToolCall call = toolCallOf(first, 1);
    ToolResultMessage result =
        ToolResultMessage.newBuilder()
            .setToolCallId(call.getId())
            .setToolName(call.getName())
            .addContent(
                ToolResultContent.newBuilder()
                    .setText(TextContent.newBuilder().setText("# pi-proto")))
            .build();
    AgentContext context =
        request.toBuilder()
            .addMessages(AgentMessage.newBuilder().setAssistant(first))
            .addMessages(AgentMessage.newBuilder().setToolResult(result))
            .build();
    AssistantMessage second = fastClient.stream(context).result().get();
    assertEquals(StopReason.STOP_REASON_STOP, second.getStopReason());
    assertEquals("README 的标题就是项目名：pi-proto。", Messages.textOf(second));
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void theResultOfALongStreamComesWithoutAConsumer() throws Exception {
    AssistantMessage longAnswer =
        assistantMessage(StopReason.STOP_REASON_STOP, text("x".repeat(1000)));
    try (FakeModelServer server =
            FakeModelServer.start(
                (request, headers, call) -> {
                  Events.eventsOf(longAnswer, 1)
                      .forEach(call::send); // far above the high-water mark
                  call.finish();
                });
        ModelClient client = new ModelClient(server.target())) {
      AssistantMessageEventStream events = client.stream(userContext("hi"));
      assertEquals(longAnswer, events.result().get()); // no one iterates
      assertEquals(1004, drain(events).size()); // every event is still there to take
    }
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void cancelAfterTheFirstEventEndsTheStreamWithAborted() throws Exception {
    try (FakeModelServer server = FakeModelServer.start(START_THEN_QUIET);
        ModelClient paced = new ModelClient(server.target())) {
      AssistantMessageEventStream events = paced.stream(userContext("hi"));
      Iterator<ModelEvent> iterator = events.iterator();
      assertEquals("start", Events.eventKind(iterator.next()));
      events.cancel();
      List<ModelEvent> rest = new ArrayList<>();
      iterator.forEachRemaining(rest::add);

      assertEquals(List.of("error"), kinds(rest));
      AssistantMessage message = events.result().get();
      assertEquals(StopReason.STOP_REASON_ABORTED, message.getStopReason());
      assertEquals(StopReason.STOP_REASON_ABORTED, rest.get(0).getError().getReason());
      assertEquals("cancelled", message.getErrorMessage());
      assertEquals("scripted-v1", message.getModel()); // the header received before is kept
      assertTrue(events.failure().isEmpty()); // a cancel is no failure of the stream
      server.awaitCancelled(); // the server sees it too
    }
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void cancelFromAnotherThreadReachesTheConsumerWaitingForTheNextEvent() throws Exception {
    try (FakeModelServer quiet = FakeModelServer.start(START_THEN_QUIET);
        ModelClient paced = new ModelClient(quiet.target())) {
      AssistantMessageEventStream events = paced.stream(userContext("hi"));
      CompletableFuture<AssistantMessage> waiting = events.result();
      Iterator<ModelEvent> iterator = events.iterator();
      assertEquals("start", Events.eventKind(iterator.next()));
      Thread consumer = Thread.currentThread();
      Thread canceller =
          new Thread(
              () -> {
                try {
                  awaitWaiting(consumer); // for the event after start
                } catch (InterruptedException interrupted) {
                  Thread.currentThread().interrupt();
                }
                events.cancel();
              });
      canceller.start();
      List<ModelEvent> rest = new ArrayList<>();
      iterator.forEachRemaining(rest::add); // returns, throws nothing
      canceller.join();

      assertEquals(List.of("error"), kinds(rest));
      assertEquals(StopReason.STOP_REASON_ABORTED, rest.get(0).getError().getReason());
      assertEquals(StopReason.STOP_REASON_ABORTED, waiting.get().getStopReason());
      assertSame(waiting.get(), events.partial());
    }
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void aDeadlineThatPassesEndsTheStreamWithError() throws Exception {
    try (FakeModelServer quiet = FakeModelServer.start(START_THEN_QUIET);
        ModelClient paced = new ModelClient(quiet.target())) {
      StreamRequest request = StreamRequest.newBuilder().setContext(userContext("hi")).build();
      AssistantMessageEventStream events = paced.stream(request, Duration.ofMillis(100));
      List<ModelEvent> seen = drain(events);
      assertEquals("error", Events.eventKind(seen.get(seen.size() - 1)));
      AssistantMessage message = events.result().get();
      assertEquals(StopReason.STOP_REASON_ERROR, message.getStopReason());
      assertFalse(message.getErrorMessage().isEmpty());
      assertEquals("DEADLINE_EXCEEDED", events.failure().orElseThrow().statusCode().orElseThrow());
    }
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void theDefaultDeadlineAndTheHeadersReachTheServer() throws Exception {
    CompletableFuture<Long> secondsLeft = new CompletableFuture<>();
    CompletableFuture<String> header = new CompletableFuture<>();
    Metadata.Key<String> key = Metadata.Key.of("x-test", Metadata.ASCII_STRING_MARSHALLER);
    try (FakeModelServer server =
            FakeModelServer.start(
                (request, headers, call) -> {
                  io.grpc.Deadline deadline = io.grpc.Context.current().getDeadline();
                  secondsLeft.complete(
                      deadline == null ? -1 : deadline.timeRemaining(TimeUnit.SECONDS));
                  header.complete(headers.get(key));
                  call.fail(Status.UNAVAILABLE.withDescription("down for maintenance"));
                });
        ModelClient client = new ModelClient(server.target())) {
      Metadata headers = new Metadata();
      headers.put(key, "case-1");
      StreamRequest request = StreamRequest.newBuilder().setContext(userContext("hi")).build();
      AssistantMessageEventStream events = client.stream(request, null, headers);
      assertEquals(List.of("error"), kinds(drain(events)));
      assertEquals("down for maintenance", events.result().get().getErrorMessage());
      assertEquals("UNAVAILABLE", events.failure().orElseThrow().statusCode().orElseThrow());
      assertEquals("case-1", header.get());
      // 15 minutes by default, less what the call took to arrive (less than the test may take).
      long left = secondsLeft.get();
      assertTrue(left > 900 - TEST_TIMEOUT_SECONDS && left <= 900, "seconds left: " + left);
    }
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void closingTheClientEndsItsOpenStreamsWithAbortedAndLaterOnesAtOnce() throws Exception {
    try (FakeModelServer server = FakeModelServer.start(START_THEN_QUIET)) {
      ModelClient client = new ModelClient(server.target());
      ModelClient sibling = client.withBatched(false); // the same channel
      AssistantMessageEventStream waited = client.stream(userContext("hi"));
      AssistantMessageEventStream unread = sibling.stream(userContext("hi"));
      Iterator<ModelEvent> iterator = waited.iterator();
      assertEquals("start", Events.eventKind(iterator.next()));
      Thread consumer = Thread.currentThread();
      Thread closer =
          new Thread(
              () -> {
                try {
                  awaitWaiting(consumer); // for the event after start
                } catch (InterruptedException interrupted) {
                  Thread.currentThread().interrupt();
                }
                client.close();
              });
      closer.start();
      List<ModelEvent> rest = new ArrayList<>();
      iterator.forEachRemaining(rest::add); // returns, throws nothing
      closer.join();

      assertEquals(List.of("error"), kinds(rest));
      for (AssistantMessageEventStream events : List.of(waited, unread)) {
        AssistantMessage message = events.result().get();
        assertEquals(StopReason.STOP_REASON_ABORTED, message.getStopReason());
        assertEquals(ModelClient.CLIENT_CLOSED, message.getErrorMessage());
        assertTrue(events.failure().isEmpty()); // the caller's doing, not a failure
      }
      assertEquals("scripted-v1", waited.result().get().getModel()); // what arrived is kept
      List<String> unreadKinds = kinds(drain(unread));
      assertEquals("error", unreadKinds.get(unreadKinds.size() - 1));

      for (ModelClient closed : List.of(client, sibling, sibling.withBatched(true))) {
        AssistantMessageEventStream late = closed.stream(userContext("hi"));
        assertTrue(late.isDone()); // at once, not after a round trip
        assertEquals(List.of("error"), kinds(drain(late)));
        AssistantMessage message = late.result().get();
        assertEquals(StopReason.STOP_REASON_ABORTED, message.getStopReason());
        assertEquals(ModelClient.CLIENT_CLOSED, message.getErrorMessage());
        assertTrue(late.failure().isEmpty());
        CallException refused = assertThrows(CallException.class, closed::listModels);
        assertEquals("CANCELLED", refused.statusCode());
        assertEquals(ModelClient.CLIENT_CLOSED, refused.detail());
      }
      assertEquals(2, server.methods().size()); // nothing was called after close
    }
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void aDeadlineTooLongForNanosecondsIsAsGoodAsNone() throws Exception {
    StreamRequest request = StreamRequest.newBuilder().setContext(userContext("hi")).build();
    Duration forever = Duration.ofSeconds(Long.MAX_VALUE);
    List<AssistantMessageEventStream> streams =
        List.of(
            fastClient.stream(request, forever),
            fastClient.stream(request, Duration.ofDays(1000L * 365)),
            fastClient.withDefaultTimeout(forever).stream(request));
    for (AssistantMessageEventStream events : streams) {
      assertEquals(README_KINDS, kinds(drain(events)));
    }
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void aHeaderValueThatGrpcWouldDropEndsTheStreamInsteadOfGoingWithout() throws Exception {
    Metadata headers = new Metadata();
    Metadata.Key<String> authorization =
        Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
    headers.put(authorization, "Bearer secret\n"); // a token read from a file, newline and all
    try (FakeModelServer server = FakeModelServer.start(scripted(Duration.ZERO));
        ModelClient client = new ModelClient(server.target())) {
      StreamRequest request = StreamRequest.newBuilder().setContext(userContext("hi")).build();
      AssistantMessageEventStream events = client.stream(request, null, headers);

      assertEquals(List.of("error"), kinds(drain(events)));
      AssistantMessage message = events.result().get();
      assertEquals(StopReason.STOP_REASON_ERROR, message.getStopReason());
      assertTrue(message.getErrorMessage().contains("'authorization'"), message.getErrorMessage());
      assertFalse(message.getErrorMessage().contains("secret")); // the value is not echoed
      assertEquals("INVALID_ARGUMENT", events.failure().orElseThrow().statusCode().orElseThrow());
      assertEquals(List.of(), server.methods()); // not sent without it

      headers.removeAll(authorization);
      headers.put(authorization, "Bearer secret");
      assertEquals(README_KINDS, kinds(drain(client.stream(request, null, headers))));
    }
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void noServerIsAnErrorEventNotAnException() throws Exception {
    int port;
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = socket.getLocalPort(); // free once closed: nothing listens there
    }
    try (ModelClient nowhere = new ModelClient("127.0.0.1:" + port)) {
      AssistantMessageEventStream events = nowhere.stream(userContext("hi"));
      assertEquals(List.of("error"), kinds(drain(events)));
      AssistantMessage message = events.result().get();
      assertEquals(StopReason.STOP_REASON_ERROR, message.getStopReason());
      assertFalse(message.getErrorMessage().isEmpty());
      assertEquals("UNAVAILABLE", events.failure().orElseThrow().statusCode().orElseThrow());
    }
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void aServerKilledMidStreamGivesAnErrorEvent() throws Exception {
    try (FakeModelServer server = FakeModelServer.start(scripted(Duration.ofMillis(300)));
        ModelClient doomed = new ModelClient(server.target())) {
      AssistantMessageEventStream events = doomed.stream(userContext("hi"));
      Iterator<ModelEvent> iterator = events.iterator();
      assertEquals("start", Events.eventKind(iterator.next()));
      server.kill();
      List<ModelEvent> rest = new ArrayList<>();
      iterator.forEachRemaining(rest::add);

      assertEquals("error", Events.eventKind(rest.get(rest.size() - 1)));
      AssistantMessage message = events.result().get();
      assertEquals(StopReason.STOP_REASON_ERROR, message.getStopReason());
      assertFalse(message.getErrorMessage().isEmpty());
      assertEquals("scripted-v1", message.getModel());
      assertTrue(events.failure().orElseThrow().statusCode().isPresent());
    }
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void aStreamClosedWithoutATerminalEventIsAnErrorEvent() throws Exception {
    Played played =
        against(
            (request, headers, call) -> {
              call.send(start());
              call.send(textStart(0));
              call.finish();
            });
    assertEquals(List.of("start", "text_start", "error"), played.kinds());
    AssistantMessage message = played.events().result().get();
    assertEquals(StopReason.STOP_REASON_ERROR, message.getStopReason());
    assertEquals("stream ended without a terminal event", message.getErrorMessage());
    assertEquals("2 terminal-missing", brokenRule(played.events()));
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void anUndecodableEventBecomesOneErrorEventNamingItsIndex() throws Exception {
    Played played =
        against(
            (request, headers, call) -> {
              call.send(start());
              call.sendBytes(new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff});
              call.finish();
            });
    assertEquals(List.of("start", "error"), played.kinds());
    assertEquals(StopReason.STOP_REASON_ERROR, played.events().result().get().getStopReason());
    assertEquals("1 event-decode", brokenRule(played.events()));
    assertEquals("scripted-v1", played.events().partial().getModel());
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void anEventOutOfPlaceBecomesOneErrorEventNamingTheRule() throws Exception {
    AssistantMessage message = assistantMessage(StopReason.STOP_REASON_STOP);
    Played played =
        against(
            (request, headers, call) -> {
              call.send(start());
              call.send(textDelta(4, "x"));
              call.send(done(StopReason.STOP_REASON_STOP, message));
              call.finish();
            });
    assertEquals(List.of("start", "error"), played.kinds());
    assertEquals(StopReason.STOP_REASON_ERROR, played.events().result().get().getStopReason());
    assertEquals("1 block-exists", brokenRule(played.events()));
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void aStreamOverTheSizeLimitEndsWithError() throws Exception {
    try (ModelClient small = fastClient.withMaxMessageBytes(10)) {
      AssistantMessageEventStream events = small.stream(userContext("hi"));
      List<ModelEvent> seen = drain(events);
      // The first delta is 8 characters of 3 bytes each: 24 bytes, over the limit of 10.
      assertEquals(List.of("start", "text_start", "error"), kinds(seen));
      assertEquals("2 size-limit", brokenRule(events));
    }
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void eventsAfterTheTerminalEventAreIgnoredAndTheCallIsCancelled() throws Exception {
    AssistantMessage message = assistantMessage(StopReason.STOP_REASON_STOP);
    try (FakeModelServer server =
            FakeModelServer.start(
                (request, headers, call) -> {
                  call.send(start());
                  call.send(done(StopReason.STOP_REASON_STOP, message));
                  call.sendBytes(new byte[] {(byte) 0xff});
                  call.awaitGone();
                });
        ModelClient client = new ModelClient(server.target())) {
      AssistantMessageEventStream events = client.stream(userContext("hi"));
      assertEquals(List.of("start", "done"), kinds(drain(events)));
      assertEquals(message, events.result().get());
      assertTrue(events.failure().isEmpty());
      server.awaitCancelled();
    }
  }

  private static final Model OPUS =
      Model.newBuilder()
          .setId("claude-opus-4-5")
          .setName("Claude Opus 4.5")
          .setProvider("anthropic")
          .setContextWindow(200_000)
          .setCost(ModelCost.newBuilder().setInput(5).setOutput(25))
          .build();
  private static final Model GPT =
      Model.newBuilder().setId("gpt-5").setProvider("openai").setContextWindow(400_000).build();

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void aStreamNamesItsModelByProviderAndId() throws Exception {
    CompletableFuture<StreamRequest> received = new CompletableFuture<>();
    AssistantMessage message = assistantMessage(StopReason.STOP_REASON_STOP);
    try (FakeModelServer server =
            FakeModelServer.start(
                (request, headers, call) -> {
                  received.complete(request);
                  call.send(start());
                  call.send(done(StopReason.STOP_REASON_STOP, message));
                  call.finish();
                });
        ModelClient client = new ModelClient(server.target())) {
      AgentContext context = userContext("hi");
      AssistantMessageEventStream events = client.stream("anthropic", "claude-opus-4-5", context);
      assertEquals(message, events.result().get());
      StreamRequest request = received.get();
      assertEquals("anthropic", request.getProvider());
      assertEquals("claude-opus-4-5", request.getModel());
      assertEquals(context, request.getContext());
    }
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void aRequestCarriesPisCallOptions() throws Exception {
    CompletableFuture<StreamRequest> received = new CompletableFuture<>();
    try (FakeModelServer server =
            FakeModelServer.start(
                (request, headers, call) -> {
                  received.complete(request);
                  call.finish();
                });
        ModelClient client = new ModelClient(server.target())) {
      AgentContext context = userContext("hi");
      StreamRequest request =
          StreamRequest.newBuilder()
              .setProvider("anthropic")
              .setModel("claude-opus-4-5")
              .setContext(context)
              .setOptions(
                  GenerationOptions.newBuilder()
                      .setReasoning(ThinkingLevel.THINKING_LEVEL_HIGH)
                      .setToolChoice(
                          ToolChoice.newBuilder()
                              .setMode(ToolChoiceMode.TOOL_CHOICE_MODE_TOOL)
                              .setTool("read"))
                      .setSessionId("session-1")
                      .setMetadataJson("{\"user_id\":\"u-1\"}")
                      .putHeaders("x-trace", "abc")
                      .putHeaders("anthropic-beta", "fine-grained-tool-streaming-2025-05-14"))
              .build();
      Validation.check(request); // the server answers an invalid one with INVALID_ARGUMENT
      client.stream(request).result().get();
      // As given, and resumable: every client here says it resumes a stream cut off.
      assertEquals(request.toBuilder().setResumable(true).build(), received.get());
    }
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void theCatalogListsAndFindsModels() throws Exception {
    try (FakeModelServer server =
            FakeModelServer.start((request, headers, call) -> call.finish(), List.of(OPUS, GPT));
        ModelClient client = new ModelClient(server.target())) {
      assertEquals(List.of(OPUS, GPT), client.listModels());
      assertEquals(List.of(GPT), client.listModels("openai"));
      assertEquals(OPUS, client.getModel("claude-opus-4-5"));
      assertEquals(GPT, client.getModel("gpt-5", "openai"));

      CallException missing =
          assertThrows(CallException.class, () -> client.getModel("gpt-5", "anthropic"));
      assertEquals("NOT_FOUND", missing.statusCode());
      assertEquals("no model gpt-5 is served", missing.detail());
    }
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void aCatalogCallWithoutAServerThrowsItsStatus() throws Exception {
    int port;
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = socket.getLocalPort();
    }
    try (ModelClient nowhere = new ModelClient("127.0.0.1:" + port)) {
      CallException down = assertThrows(CallException.class, nowhere::listModels);
      assertEquals("UNAVAILABLE", down.statusCode());
    }
  }
}
