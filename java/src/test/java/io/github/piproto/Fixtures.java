package io.github.piproto;

import io.github.piproto.ai.v1.AgentContext;
import io.github.piproto.ai.v1.AgentMessage;
import io.github.piproto.ai.v1.AssistantContent;
import io.github.piproto.ai.v1.AssistantMessage;
import io.github.piproto.ai.v1.DoneEvent;
import io.github.piproto.ai.v1.ErrorEvent;
import io.github.piproto.ai.v1.ModelEvent;
import io.github.piproto.ai.v1.StartEvent;
import io.github.piproto.ai.v1.StopReason;
import io.github.piproto.ai.v1.TextContent;
import io.github.piproto.ai.v1.TextDeltaEvent;
import io.github.piproto.ai.v1.TextEndEvent;
import io.github.piproto.ai.v1.TextStartEvent;
import io.github.piproto.ai.v1.ThinkingContent;
import io.github.piproto.ai.v1.ThinkingDeltaEvent;
import io.github.piproto.ai.v1.ThinkingStartEvent;
import io.github.piproto.ai.v1.ToolCall;
import io.github.piproto.ai.v1.ToolCallDeltaEvent;
import io.github.piproto.ai.v1.ToolCallEndEvent;
import io.github.piproto.ai.v1.ToolCallStartEvent;
import io.github.piproto.ai.v1.UserContent;
import io.github.piproto.ai.v1.UserMessage;

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
        .setUsage(Costs.zeroUsage()) // a model call sets every count
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
