package io.github.piproto;

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
import io.github.piproto.ai.v1.ThinkingEndEvent;
import io.github.piproto.ai.v1.ThinkingStartEvent;
import io.github.piproto.ai.v1.ToolCall;
import io.github.piproto.ai.v1.ToolCallDeltaEvent;
import io.github.piproto.ai.v1.ToolCallEndEvent;
import io.github.piproto.ai.v1.ToolCallStartEvent;
import java.util.ArrayList;
import java.util.List;

/**
 * ModelEvent helpers: an event's kind, its wire form, terminal events, and the events of a message.
 */
public final class Events {
  private Events() {}

  /** The event's kind, pi's event type name (e.g. "text_delta"); "" when no kind is set. */
  public static String eventKind(ModelEvent event) {
    if (event.getEventCase() == ModelEvent.EventCase.EVENT_NOT_SET) {
      return "";
    }
    return ModelEvent.getDescriptor().findFieldByNumber(event.getEventCase().getNumber()).getName();
  }

  /**
   * The event's kind, pi's event type name.
   *
   * @deprecated renamed {@link #eventKind}, the name every runtime gives it
   */
  @Deprecated
  public static String kindOf(ModelEvent event) {
    return eventKind(event);
  }

  /** Whether an event ends its stream: {@code done} or {@code error}. */
  public static boolean isTerminal(ModelEvent event) {
    return event.hasDone() || event.hasError();
  }

  /** The final message a terminal event carries; other events cannot produce a result. */
  public static AssistantMessage terminalMessage(ModelEvent event) {
    if (event.hasDone() && event.getDone().hasMessage()) {
      return event.getDone().getMessage();
    }
    if (event.hasError() && event.getError().hasMessage()) {
      return event.getError().getMessage();
    }
    throw new IllegalArgumentException(
        "only a done or error event carrying a message produces the final message");
  }

  /** The event as it travels: {@code partial} is never sent (stream contract, rule 4). */
  public static ModelEvent withoutPartial(ModelEvent event) {
    return event.hasPartial() ? event.toBuilder().clearPartial().build() : event;
  }

  /**
   * The events that stream {@code message}: start, each block's start, deltas and end, then the
   * terminal event. Text, reasoning and tool-call arguments are cut into deltas of {@code
   * deltaSize} characters (Unicode code points, so no surrogate pair is split). The terminal event
   * carries {@code message} itself.
   */
  public static List<ModelEvent> eventsOf(AssistantMessage message, int deltaSize) {
    if (deltaSize < 1) {
      throw new IllegalArgumentException("delta_size must be at least 1, got " + deltaSize);
    }
    List<ModelEvent> events = new ArrayList<>();
    // The header copies only the fields the message sets, so an absent one stays absent.
    AssistantMessage.Builder header = AssistantMessage.newBuilder().setUsage(Costs.zeroUsage());
    if (message.hasApi()) {
      header.setApi(message.getApi());
    }
    if (message.hasProvider()) {
      header.setProvider(message.getProvider());
    }
    if (message.hasModel()) {
      header.setModel(message.getModel());
    }
    if (message.hasTimestamp()) {
      header.setTimestamp(message.getTimestamp());
    }
    events.add(ModelEvent.newBuilder().setStart(StartEvent.newBuilder().setHeader(header)).build());
    for (int index = 0; index < message.getContentCount(); index++) {
      addBlockEvents(events, index, message.getContent(index), deltaSize);
    }
    int reason = message.getStopReasonValue();
    if (reason == StopReason.STOP_REASON_ERROR_VALUE
        || reason == StopReason.STOP_REASON_ABORTED_VALUE) {
      ErrorEvent error = ErrorEvent.newBuilder().setReasonValue(reason).setMessage(message).build();
      events.add(ModelEvent.newBuilder().setError(error).build());
    } else {
      DoneEvent done = DoneEvent.newBuilder().setReasonValue(reason).setMessage(message).build();
      events.add(ModelEvent.newBuilder().setDone(done).build());
    }
    return events;
  }

  private static void addBlockEvents(
      List<ModelEvent> events, int index, AssistantContent content, int size) {
    switch (content.getBlockCase()) {
      case TEXT -> {
        TextContent text = content.getText();
        events.add(
            event().setTextStart(TextStartEvent.newBuilder().setContentIndex(index)).build());
        for (String delta : chunks(text.getText(), size)) {
          TextDeltaEvent.Builder body =
              TextDeltaEvent.newBuilder().setContentIndex(index).setDelta(delta);
          events.add(event().setTextDelta(body).build());
        }
        TextEndEvent.Builder end = TextEndEvent.newBuilder().setContentIndex(index);
        if (text.hasTextSignature()) {
          end.setTextSignature(text.getTextSignature());
        }
        events.add(event().setTextEnd(end).build());
      }
      case THINKING -> {
        ThinkingContent thinking = content.getThinking();
        ThinkingStartEvent.Builder start = ThinkingStartEvent.newBuilder().setContentIndex(index);
        events.add(event().setThinkingStart(start).build());
        for (String delta : chunks(thinking.getThinking(), size)) {
          ThinkingDeltaEvent.Builder body =
              ThinkingDeltaEvent.newBuilder().setContentIndex(index).setDelta(delta);
          events.add(event().setThinkingDelta(body).build());
        }
        ThinkingEndEvent.Builder end = ThinkingEndEvent.newBuilder().setContentIndex(index);
        if (thinking.hasThinkingSignature()) {
          end.setThinkingSignature(thinking.getThinkingSignature());
        }
        if (thinking.hasRedacted()) {
          end.setRedacted(thinking.getRedacted());
        }
        events.add(event().setThinkingEnd(end).build());
      }
      case TOOL_CALL -> {
        ToolCall call = content.getToolCall();
        ToolCallStartEvent.Builder start =
            ToolCallStartEvent.newBuilder()
                .setContentIndex(index)
                .setId(call.getId())
                .setName(call.getName());
        events.add(event().setToolcallStart(start).build());
        String raw = call.hasRawArguments() ? call.getRawArguments() : call.getArgumentsJson();
        for (String delta : chunks(raw, size)) {
          ToolCallDeltaEvent.Builder body =
              ToolCallDeltaEvent.newBuilder().setContentIndex(index).setDelta(delta);
          events.add(event().setToolcallDelta(body).build());
        }
        ToolCallEndEvent.Builder end =
            ToolCallEndEvent.newBuilder().setContentIndex(index).setToolCall(call);
        events.add(event().setToolcallEnd(end).build());
      }
      default -> throw new IllegalArgumentException("content[" + index + "] has no block set");
    }
  }

  private static ModelEvent.Builder event() {
    return ModelEvent.newBuilder();
  }

  private static List<String> chunks(String text, int size) {
    List<String> chunks = new ArrayList<>();
    int start = 0;
    while (start < text.length()) {
      int end = start;
      for (int taken = 0; taken < size && end < text.length(); taken++) {
        end += Character.charCount(text.codePointAt(end));
      }
      chunks.add(text.substring(start, end));
      start = end;
    }
    return chunks;
  }
}
