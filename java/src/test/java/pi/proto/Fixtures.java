package pi.proto;

import pi.ai.v1.Content.AssistantContent;
import pi.ai.v1.Content.TextContent;
import pi.ai.v1.Content.ThinkingContent;
import pi.ai.v1.Content.ToolCall;
import pi.ai.v1.Content.UserContent;
import pi.ai.v1.Context.AgentContext;
import pi.ai.v1.Event.DoneEvent;
import pi.ai.v1.Event.ErrorEvent;
import pi.ai.v1.Event.ModelEvent;
import pi.ai.v1.Event.StartEvent;
import pi.ai.v1.Event.TextDeltaEvent;
import pi.ai.v1.Event.TextEndEvent;
import pi.ai.v1.Event.TextStartEvent;
import pi.ai.v1.Event.ThinkingDeltaEvent;
import pi.ai.v1.Event.ThinkingStartEvent;
import pi.ai.v1.Event.ToolCallDeltaEvent;
import pi.ai.v1.Event.ToolCallEndEvent;
import pi.ai.v1.Event.ToolCallStartEvent;
import pi.ai.v1.Message.AgentMessage;
import pi.ai.v1.Message.AssistantMessage;
import pi.ai.v1.Message.StopReason;
import pi.ai.v1.Message.Usage;
import pi.ai.v1.Message.UserMessage;

/** Builders for the messages and events of the tests. */
final class Fixtures {
  /** How long any one test may run, in seconds, before it fails. */
  static final int TEST_TIMEOUT_SECONDS = 30;

  private Fixtures() {}

  /** The repository root, which the build passes in. */
  static java.nio.file.Path repoRoot() {
    String root = System.getProperty("pi.repo.root");
    if (root == null) {
      throw new IllegalStateException("run the tests through Maven: it sets pi.repo.root");
    }
    return java.nio.file.Path.of(root).toAbsolutePath().normalize();
  }

  static AssistantContent text(String text) {
    return AssistantContent.newBuilder().setText(TextContent.newBuilder().setText(text)).build();
  }

  static AssistantContent thinking(String thinking) {
    return AssistantContent.newBuilder()
        .setThinking(ThinkingContent.newBuilder().setThinking(thinking))
        .build();
  }

  static AssistantContent toolCall(String id, String name, String argumentsJson) {
    ToolCall call =
        ToolCall.newBuilder().setId(id).setName(name).setArgumentsJson(argumentsJson).build();
    return AssistantContent.newBuilder().setToolCall(call).build();
  }

  /** An assistant message from the scripted model, stopped by {@code reason}. */
  static AssistantMessage assistantMessage(StopReason reason, AssistantContent... content) {
    return AssistantMessage.newBuilder()
        .setApi("scripted")
        .setProvider("scripted")
        .setModel("scripted-v1")
        .setUsage(Usage.getDefaultInstance())
        .setStopReason(reason)
        .setTimestamp(1)
        .addAllContent(java.util.List.of(content))
        .build();
  }

  /** A context holding one user message with one text block. */
  static AgentContext userContext(String text) {
    UserMessage user =
        UserMessage.newBuilder()
            .addContent(UserContent.newBuilder().setText(TextContent.newBuilder().setText(text)))
            .build();
    return AgentContext.newBuilder().addMessages(AgentMessage.newBuilder().setUser(user)).build();
  }

  static ModelEvent start() {
    AssistantMessage header = AssistantMessage.newBuilder().setModel("scripted-v1").build();
    return ModelEvent.newBuilder().setStart(StartEvent.newBuilder().setHeader(header)).build();
  }

  static ModelEvent textStart(int index) {
    return ModelEvent.newBuilder()
        .setTextStart(TextStartEvent.newBuilder().setContentIndex(index))
        .build();
  }

  static ModelEvent textDelta(int index, String delta) {
    return ModelEvent.newBuilder()
        .setTextDelta(TextDeltaEvent.newBuilder().setContentIndex(index).setDelta(delta))
        .build();
  }

  static ModelEvent textEnd(int index) {
    return ModelEvent.newBuilder()
        .setTextEnd(TextEndEvent.newBuilder().setContentIndex(index))
        .build();
  }

  static ModelEvent thinkingStart(int index) {
    return ModelEvent.newBuilder()
        .setThinkingStart(ThinkingStartEvent.newBuilder().setContentIndex(index))
        .build();
  }

  static ModelEvent thinkingDelta(int index, String delta) {
    return ModelEvent.newBuilder()
        .setThinkingDelta(ThinkingDeltaEvent.newBuilder().setContentIndex(index).setDelta(delta))
        .build();
  }

  static ModelEvent toolCallStart(int index, String id, String name) {
    return ModelEvent.newBuilder()
        .setToolcallStart(
            ToolCallStartEvent.newBuilder().setContentIndex(index).setId(id).setName(name))
        .build();
  }

  static ModelEvent toolCallDelta(int index, String delta) {
    return ModelEvent.newBuilder()
        .setToolcallDelta(ToolCallDeltaEvent.newBuilder().setContentIndex(index).setDelta(delta))
        .build();
  }

  static ModelEvent toolCallEnd(int index, String id, String name, String argumentsJson) {
    ToolCall call =
        ToolCall.newBuilder().setId(id).setName(name).setArgumentsJson(argumentsJson).build();
    return ModelEvent.newBuilder()
        .setToolcallEnd(ToolCallEndEvent.newBuilder().setContentIndex(index).setToolCall(call))
        .build();
  }

  static ModelEvent done(StopReason reason, AssistantMessage message) {
    return ModelEvent.newBuilder()
        .setDone(DoneEvent.newBuilder().setReason(reason).setMessage(message))
        .build();
  }

  static ModelEvent error(StopReason reason, AssistantMessage message) {
    return ModelEvent.newBuilder()
        .setError(ErrorEvent.newBuilder().setReason(reason).setMessage(message))
        .build();
  }
}
