package pi.proto;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static pi.proto.Fixtures.TEST_TIMEOUT_SECONDS;
import static pi.proto.Fixtures.userContext;

import com.google.protobuf.util.JsonFormat;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import pi.ai.v1.Content.TextContent;
import pi.ai.v1.Content.ToolCall;
import pi.ai.v1.Content.ToolResultContent;
import pi.ai.v1.Content.UserContent;
import pi.ai.v1.Context.AgentContext;
import pi.ai.v1.Event.ModelEvent;
import pi.ai.v1.Message.AgentMessage;
import pi.ai.v1.Message.AssistantMessage;
import pi.ai.v1.Message.StopReason;
import pi.ai.v1.Message.ToolResultMessage;
import pi.ai.v1.Message.UserMessage;
import pi.ai.v1.Service.StreamRequest;

/**
 * The client against Python's {@code pi-proto serve}: the README round trip, cancellation and
 * failures.
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

  private static PythonServer fast; // the README round trip, deltas of 8 characters, no delay
  private static PythonServer slow; // the same, 0.3 s before each event
  private static ModelClient fastClient; // to the fast server

  @BeforeAll
  @Timeout(TEST_TIMEOUT_SECONDS)
  static void startServers() throws Exception {
    fast = PythonServer.start();
    slow = PythonServer.start("--delay", "0.3");
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
    if (slow != null) {
      slow.close();
    }
  }

  private static List<ModelEvent> drain(Iterable<ModelEvent> events) {
    List<ModelEvent> seen = new ArrayList<>();
    events.forEach(seen::add);
    return seen;
  }

  private static List<String> kinds(List<ModelEvent> events) {
    return events.stream().map(Events::kindOf).toList();
  }

  private static ToolCall toolCallOf(AssistantMessage message, int index) {
    assertTrue(message.getContent(index).hasToolCall(), "block " + index + " is a tool call");
    return message.getContent(index).getToolCall();
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
        kinds.add(Events.kindOf(event)); // "start", "text_start", "text_delta", ..., "done"
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
  void theSameEventsAsPiProtoStreamJson() throws Exception {
    AssistantMessageEventStream events = fastClient.stream(userContext("hi"));
    List<ModelEvent> seen = drain(events);
    AssistantMessage message = events.result().get();
    String printed = PythonServer.run("stream", "--json", "--target", fast.target(), "hi");

    assertEquals(README_KINDS, kinds(seen));
    List<ModelEvent> python = new ArrayList<>();
    for (String line : printed.strip().split("\n")) {
      ModelEvent.Builder event = ModelEvent.newBuilder();
      JsonFormat.parser().merge(line, event);
      python.add(event.build());
    }
    assertEquals(python, seen); // as sent: without partial
    for (int index = 0; index < seen.size(); index++) {
      JsonValues.assertSameJson(
          printed.strip().split("\n")[index], JsonFormat.printer().print(seen.get(index)));
    }

    ModelEvent last = seen.get(seen.size() - 1);
    assertSame(message, last.getDone().getMessage());
    assertSame(message, events.partial());
    assertEquals(StopReason.STOP_REASON_TOOL_USE, message.getStopReason());
    assertEquals("我先读取项目说明。", Messages.textOf(message));
    ToolCall call = toolCallOf(message, 1);
    assertEquals("call_1", call.getId());
    assertEquals("read", call.getName());
    JsonValues.assertSameJson("{\"path\": \"README.md\"}", call.getArgumentsJson());
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

    AssistantMessage opened = partials.get(0);
    assertEquals(0, opened.getContentCount());
    assertEquals("scripted-v1", opened.getModel());
    assertEquals("我先读取项目说明", Messages.textOf(partials.get(2)));
    assertEquals("我先读取项目说明。", Messages.textOf(partials.get(3)));
    List<String> raw = new ArrayList<>();
    for (int index : new int[] {6, 7, 8}) {
      ToolCall call = toolCallOf(partials.get(index), 1);
      assertEquals("call_1", call.getId());
      assertEquals("read", call.getName());
      assertEquals("{}", call.getArgumentsJson());
      raw.add(call.getRawArguments());
    }
    assertEquals(List.of("{\"path\":", "{\"path\":\"README.", "{\"path\":\"README.md\"}"), raw);
    ToolCall ended = toolCallOf(partials.get(9), 1);
    JsonValues.assertSameJson("{\"path\": \"README.md\"}", ended.getArgumentsJson());
    assertEquals(StopReason.STOP_REASON_TOOL_USE, partials.get(10).getStopReason());
    assertSame(events.result().get(), partials.get(10));
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void turnTwoAnswersTheToolResult() throws Exception {
    AgentContext request = userContext("请读取 README");
    AssistantMessage first = fastClient.stream(request).result().get();
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
  void cancelAfterTheFirstEventEndsTheStreamWithAborted() throws Exception {
    try (ModelClient paced = new ModelClient(slow.target())) {
      AssistantMessageEventStream events = paced.stream(userContext("hi"));
      Iterator<ModelEvent> iterator = events.iterator();
      assertEquals("start", Events.kindOf(iterator.next()));
      events.cancel();
      List<ModelEvent> rest = new ArrayList<>();
      iterator.forEachRemaining(rest::add);

      assertEquals(List.of("error"), kinds(rest));
      AssistantMessage message = events.result().get();
      assertEquals(StopReason.STOP_REASON_ABORTED, message.getStopReason());
      assertEquals(StopReason.STOP_REASON_ABORTED, rest.get(0).getError().getReason());
      assertEquals("cancelled", message.getErrorMessage());
      assertEquals("scripted-v1", message.getModel()); // the header received before is kept
    }
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void aDeadlineThatPassesEndsTheStreamWithError() throws Exception {
    try (ModelClient paced = new ModelClient(slow.target())) {
      StreamRequest request = StreamRequest.newBuilder().setContext(userContext("hi")).build();
      AssistantMessageEventStream events = paced.stream(request, Duration.ofMillis(100));
      List<ModelEvent> seen = drain(events);
      assertEquals("error", Events.kindOf(seen.get(seen.size() - 1)));
      AssistantMessage message = events.result().get();
      assertEquals(StopReason.STOP_REASON_ERROR, message.getStopReason());
      // The client's deadline or the server's, whichever fires first: both say so.
      String problem = message.getErrorMessage();
      assertTrue(problem.toLowerCase(Locale.ROOT).contains("deadline exceeded"), problem);
    }
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void aStatusErrorBecomesAnErrorEventWithTheStatusMessageUnchanged() throws Exception {
    StreamRequest request =
        StreamRequest.newBuilder().setModel("gpt-9").setContext(userContext("hi")).build();
    AssistantMessageEventStream events = fastClient.stream(request, null);
    assertEquals(List.of("error"), kinds(drain(events)));
    AssistantMessage message = events.result().get();
    assertEquals(StopReason.STOP_REASON_ERROR, message.getStopReason());
    assertEquals(
        "unknown model 'gpt-9': this server plays 'scripted-v1'", message.getErrorMessage());
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
    }
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void aServerKilledMidStreamGivesAnErrorEvent() throws Exception {
    try (PythonServer server = PythonServer.start("--delay", "0.3");
        ModelClient doomed = new ModelClient(server.target())) {
      AssistantMessageEventStream events = doomed.stream(userContext("hi"));
      Iterator<ModelEvent> iterator = events.iterator();
      assertEquals("start", Events.kindOf(iterator.next()));
      server.kill();
      List<ModelEvent> rest = new ArrayList<>();
      iterator.forEachRemaining(rest::add);

      assertEquals("error", Events.kindOf(rest.get(rest.size() - 1)));
      AssistantMessage message = events.result().get();
      assertEquals(StopReason.STOP_REASON_ERROR, message.getStopReason());
      assertFalse(message.getErrorMessage().isEmpty());
      assertEquals("scripted-v1", message.getModel());
    }
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void aServerShuttingDownMidStreamEndsItWithAborted() throws Exception {
    try (PythonServer server = PythonServer.start("--delay", "0.3");
        ModelClient leaving = new ModelClient(server.target())) {
      AssistantMessageEventStream events = leaving.stream(userContext("hi"));
      Iterator<ModelEvent> iterator = events.iterator();
      assertEquals("start", Events.kindOf(iterator.next()));
      server.stop();
      List<ModelEvent> rest = new ArrayList<>();
      iterator.forEachRemaining(rest::add);

      assertEquals("error", Events.kindOf(rest.get(rest.size() - 1)));
      AssistantMessage message = events.result().get();
      assertEquals(StopReason.STOP_REASON_ABORTED, message.getStopReason());
      assertEquals("the server is shutting down", message.getErrorMessage());
    }
  }
}
