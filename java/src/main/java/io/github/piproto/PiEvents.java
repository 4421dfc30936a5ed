package io.github.piproto;

import static io.github.piproto.PiJsonReader.at;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import io.github.piproto.ai.v1.AssistantContent;
import io.github.piproto.ai.v1.AssistantMessage;
import io.github.piproto.ai.v1.DoneEvent;
import io.github.piproto.ai.v1.ErrorEvent;
import io.github.piproto.ai.v1.ModelEvent;
import io.github.piproto.ai.v1.StartEvent;
import io.github.piproto.ai.v1.StopReason;
import io.github.piproto.ai.v1.TextDeltaEvent;
import io.github.piproto.ai.v1.TextEndEvent;
import io.github.piproto.ai.v1.TextStartEvent;
import io.github.piproto.ai.v1.ThinkingDeltaEvent;
import io.github.piproto.ai.v1.ThinkingEndEvent;
import io.github.piproto.ai.v1.ThinkingStartEvent;
import io.github.piproto.ai.v1.ToolCall;
import io.github.piproto.ai.v1.ToolCallDeltaEvent;
import io.github.piproto.ai.v1.ToolCallEndEvent;
import io.github.piproto.ai.v1.ToolCallStartEvent;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * pi's AssistantMessageEvent, both ways: with its {@code partial}, which becomes {@link
 * ModelEvent#getPartial}, or in the delta-only form pi 1.6 writes in its json and RPC modes (and
 * pi-messages): no {@code partial}; {@code toolcall_start} names the call ({@code id}, {@code
 * toolName}), and an {@code *_end} event carries the block's text ({@code content}, which a
 * receiver rebuilds anyway) and its signature ({@code contentSignature}). Events are not stored, so
 * a key an event of its type does not have is refused.
 */
final class PiEvents {
  /** The keys of each delta-only event type. */
  private static final Map<String, Set<String>> DELTA_ONLY_KEYS =
      Map.of(
          "start", Set.of("type"),
          "text_start", Set.of("type", "contentIndex"),
          "thinking_start", Set.of("type", "contentIndex"),
          "toolcall_start", Set.of("type", "contentIndex", "id", "toolName"),
          "text_delta", Set.of("type", "contentIndex", "delta"),
          "thinking_delta", Set.of("type", "contentIndex", "delta"),
          "toolcall_delta", Set.of("type", "contentIndex", "delta"),
          "text_end", Set.of("type", "contentIndex", "content", "contentSignature"),
          "thinking_end", Set.of("type", "contentIndex", "content", "contentSignature", "redacted"),
          "toolcall_end", Set.of("type", "contentIndex", "toolCall"));

  /** The largest content index, a uint32. */
  private static final long MAX_INDEX = 0xFFFFFFFFL;

  private PiEvents() {}

  /** A pi event type split at its first underscore: {@code text_end} is text, end. */
  private record Kind(String name, String family, String step) {
    static Kind of(String name) {
      int underscore = name.indexOf('_');
      return underscore < 0
          ? new Kind(name, name, "")
          : new Kind(name, name.substring(0, underscore), name.substring(underscore + 1));
    }

    /** The block kind of a content event's family; empty for a type pi does not define. */
    Optional<AssistantContent.BlockCase> block() {
      if (!step.equals("start") && !step.equals("delta") && !step.equals("end")) {
        return Optional.empty();
      }
      return switch (family) {
        case "text" -> Optional.of(AssistantContent.BlockCase.TEXT);
        case "thinking" -> Optional.of(AssistantContent.BlockCase.THINKING);
        case "toolcall" -> Optional.of(AssistantContent.BlockCase.TOOL_CALL);
        default -> Optional.empty();
      };
    }
  }

  // Reading.

  static ModelEvent read(JsonElement value, String where) {
    PiJsonReader read = new PiJsonReader(value, where);
    Kind kind = Kind.of(read.string("type"));
    read.knowing(eventKeys(kind));
    if (kind.name().equals("done") || kind.name().equals("error")) {
      StopReason reason = read.choice("reason", PiWords.STOP_REASONS);
      String key = kind.name().equals("done") ? "message" : "error";
      AssistantMessage message =
          read.child(key, PiMessageReader::assistant)
              .orElseThrow(() -> new PiJsonException(at(where, key), "required"));
      noExtra(read);
      return kind.name().equals("done")
          ? ModelEvent.newBuilder()
              .setDone(DoneEvent.newBuilder().setReason(reason).setMessage(message))
              .build()
          : ModelEvent.newBuilder()
              .setError(ErrorEvent.newBuilder().setReason(reason).setMessage(message))
              .build();
    }
    Optional<AssistantMessage> given = read.child("partial", PiMessageReader::assistant);
    if (given.isEmpty()) {
      return deltaOnly(read, kind);
    }
    AssistantMessage partial = given.get();
    ModelEvent.Builder event = ModelEvent.newBuilder().setPartial(partial);
    if (kind.name().equals("start")) {
      noExtra(read);
      return event.setStart(StartEvent.newBuilder().setHeader(partial)).build();
    }
    AssistantContent.BlockCase family = kindBlock(read, kind);
    long index = read.integer("contentIndex");
    if (index < 0 || index >= partial.getContentCount()) {
      throw new PiJsonException(
          at(where, "contentIndex"), index + " is not a block of the partial message");
    }
    AssistantContent block = partial.getContent((int) index);
    if (block.getBlockCase() != family) {
      throw new PiJsonException(
          at(where, "contentIndex"),
          "block " + index + " of the partial is not a " + kind.family() + " block");
    }
    int position = (int) index;
    switch (kind.name()) {
      case "text_start" ->
          event.setTextStart(TextStartEvent.newBuilder().setContentIndex(position));
      case "thinking_start" ->
          event.setThinkingStart(ThinkingStartEvent.newBuilder().setContentIndex(position));
      case "toolcall_start" ->
          event.setToolcallStart(
              ToolCallStartEvent.newBuilder()
                  .setContentIndex(position)
                  .setId(block.getToolCall().getId())
                  .setName(block.getToolCall().getName()));
      case "toolcall_end" -> event.setToolcallEnd(toolCallEnd(read, position));
      case "text_end", "thinking_end" -> {
        // The content is the block the partial already holds: only that can be rebuilt.
        String text = read.string("content");
        boolean isText = family == AssistantContent.BlockCase.TEXT;
        String held = isText ? block.getText().getText() : block.getThinking().getThinking();
        if (!text.equals(held)) {
          throw new PiJsonException(
              at(where, "content"),
              "differs from block " + index + " of the partial, so it cannot be rebuilt");
        }
        if (isText) {
          TextEndEvent.Builder end = TextEndEvent.newBuilder().setContentIndex(position);
          if (block.getText().hasTextSignature()) {
            end.setTextSignature(block.getText().getTextSignature());
          }
          event.setTextEnd(end);
        } else {
          ThinkingEndEvent.Builder end = ThinkingEndEvent.newBuilder().setContentIndex(position);
          if (block.getThinking().hasThinkingSignature()) {
            end.setThinkingSignature(block.getThinking().getThinkingSignature());
          }
          if (block.getThinking().hasRedacted()) {
            end.setRedacted(block.getThinking().getRedacted());
          }
          event.setThinkingEnd(end);
        }
      }
      default -> delta(event, family, position, read.string("delta"));
    }
    noExtra(read);
    return event.build();
  }

  private static ModelEvent deltaOnly(PiJsonReader read, Kind kind) {
    read.knowing(DELTA_ONLY_KEYS.getOrDefault(kind.name(), Set.of("type")));
    ModelEvent.Builder event = ModelEvent.newBuilder();
    if (kind.name().equals("start")) {
      noExtra(read);
      return event
          .setStart(StartEvent.newBuilder().setHeader(AssistantMessage.getDefaultInstance()))
          .build();
    }
    AssistantContent.BlockCase family = kindBlock(read, kind);
    long index = read.integer("contentIndex");
    if (index < 0 || index > MAX_INDEX) {
      throw new PiJsonException(at(read.where(), "contentIndex"), index + " is not a block index");
    }
    int position = (int) index; // a uint32, which Java holds in an int
    switch (kind.name()) {
      case "toolcall_start" ->
          event.setToolcallStart(
              ToolCallStartEvent.newBuilder()
                  .setContentIndex(position)
                  .setId(read.string("id"))
                  .setName(read.string("toolName")));
      case "text_start" ->
          event.setTextStart(TextStartEvent.newBuilder().setContentIndex(position));
      case "thinking_start" ->
          event.setThinkingStart(ThinkingStartEvent.newBuilder().setContentIndex(position));
      case "toolcall_end" -> event.setToolcallEnd(toolCallEnd(read, position));
      case "text_end" -> {
        read.optionalString("content"); // the block's text, which the receiver has rebuilt
        TextEndEvent.Builder end = TextEndEvent.newBuilder().setContentIndex(position);
        read.optionalString("contentSignature").ifPresent(end::setTextSignature);
        event.setTextEnd(end);
      }
      case "thinking_end" -> {
        read.optionalString("content");
        ThinkingEndEvent.Builder end = ThinkingEndEvent.newBuilder().setContentIndex(position);
        read.optionalString("contentSignature").ifPresent(end::setThinkingSignature);
        read.optionalBool("redacted").ifPresent(end::setRedacted);
        event.setThinkingEnd(end);
      }
      default -> delta(event, family, position, read.string("delta"));
    }
    noExtra(read);
    return event.build();
  }

  /** The block kind of a content event; a type pi does not define is refused. */
  private static AssistantContent.BlockCase kindBlock(PiJsonReader read, Kind kind) {
    return kind.block()
        .orElseThrow(
            () ->
                new PiJsonException(
                    at(read.where(), "type"), "not a pi event type: '" + kind.name() + "'"));
  }

  private static ToolCallEndEvent toolCallEnd(PiJsonReader read, int index) {
    Optional<AssistantContent> call = read.child("toolCall", PiMessageReader::assistantBlock);
    if (call.isEmpty() || !call.get().hasToolCall()) {
      throw new PiJsonException(at(read.where(), "toolCall"), "required, a toolCall block");
    }
    return ToolCallEndEvent.newBuilder()
        .setContentIndex(index)
        .setToolCall(call.get().getToolCall())
        .build();
  }

  private static void delta(
      ModelEvent.Builder event, AssistantContent.BlockCase family, int index, String delta) {
    switch (family) {
      case TEXT ->
          event.setTextDelta(TextDeltaEvent.newBuilder().setContentIndex(index).setDelta(delta));
      case THINKING ->
          event.setThinkingDelta(
              ThinkingDeltaEvent.newBuilder().setContentIndex(index).setDelta(delta));
      default ->
          event.setToolcallDelta(
              ToolCallDeltaEvent.newBuilder().setContentIndex(index).setDelta(delta));
    }
  }

  /** The keys a pi event of this type has, with its partial. */
  private static Set<String> eventKeys(Kind kind) {
    return switch (kind.name()) {
      case "done" -> Set.of("type", "reason", "message");
      case "error" -> Set.of("type", "reason", "error");
      case "start" -> Set.of("type", "partial");
      case "toolcall_end" -> Set.of("type", "contentIndex", "partial", "toolCall");
      default ->
          switch (kind.step()) {
            case "delta" -> Set.of("type", "contentIndex", "partial", "delta");
            case "end" -> Set.of("type", "contentIndex", "partial", "content");
            default -> Set.of("type", "contentIndex", "partial");
          };
    };
  }

  private static void noExtra(PiJsonReader read) {
    String extra = read.extraJson();
    if (!extra.isEmpty()) {
      String key = JsJson.parseObject(extra, read.where()).keySet().iterator().next();
      throw new PiJsonException(read.where(), "unknown field '" + key + "'");
    }
  }

  // Writing.

  /**
   * An event as pi writes it: a non-terminal one needs its partial; {@code deltaOnly}, in pi 1.6's
   * delta-only form, where an {@code *_end} event's {@code content} is still taken from the partial
   * when the event has one.
   */
  static JsonObject write(ModelEvent event, boolean deltaOnly) {
    ModelEvent.EventCase kind = event.getEventCase();
    String name = kind.name().toLowerCase(Locale.ROOT);
    JsonObject out = new JsonObject();
    switch (kind) {
      case EVENT_NOT_SET -> throw new PiJsonException("ModelEvent", "no event kind is set");
      case DONE -> {
        out.addProperty("type", "done");
        out.addProperty("reason", reasonWord(event.getDone().getReason(), "DoneEvent.reason"));
        out.add("message", PiMessageWriter.assistant(event.getDone().getMessage()));
        return out;
      }
      case ERROR -> {
        out.addProperty("type", "error");
        out.addProperty("reason", reasonWord(event.getError().getReason(), "ErrorEvent.reason"));
        out.add("error", PiMessageWriter.assistant(event.getError().getMessage()));
        return out;
      }
      case START -> {
        out.addProperty("type", "start");
        if (!deltaOnly) {
          AssistantMessage header =
              event.hasPartial() ? event.getPartial() : event.getStart().getHeader();
          out.add("partial", PiMessageWriter.assistant(header));
        }
        return out;
      }
      default -> {}
    }
    if (!deltaOnly && !event.hasPartial()) {
      throw new PiJsonException(
          name, "pi-JSON events carry the partial message; apply the event with an Accumulator");
    }
    int index = contentIndex(event);
    out.addProperty("type", name);
    out.addProperty("contentIndex", Integer.toUnsignedLong(index));
    switch (kind) {
      case TOOLCALL_START -> {
        if (deltaOnly) {
          out.addProperty("id", event.getToolcallStart().getId());
          out.addProperty("toolName", event.getToolcallStart().getName());
        }
      }
      case TEXT_DELTA -> out.addProperty("delta", event.getTextDelta().getDelta());
      case THINKING_DELTA -> out.addProperty("delta", event.getThinkingDelta().getDelta());
      case TOOLCALL_DELTA -> out.addProperty("delta", event.getToolcallDelta().getDelta());
      case TOOLCALL_END -> out.add("toolCall", toolCall(event.getToolcallEnd().getToolCall()));
      case TEXT_END, THINKING_END -> endOf(event, name, index, deltaOnly, out);
      default -> {}
    }
    if (!deltaOnly) {
      out.add("partial", PiMessageWriter.assistant(event.getPartial()));
    }
    return out;
  }

  /** An end event's content, from the partial, and in the delta-only form its signature. */
  private static void endOf(
      ModelEvent event, String name, int index, boolean deltaOnly, JsonObject out) {
    AssistantMessage partial = event.getPartial();
    if (index < partial.getContentCount()) {
      AssistantContent block = partial.getContent(index);
      out.addProperty(
          "content",
          block.hasText() ? block.getText().getText() : block.getThinking().getThinking());
    } else if (!deltaOnly) {
      throw new PiJsonException(name, "block " + index + " is not in the partial message");
    }
    if (!deltaOnly) {
      return;
    }
    if (event.hasTextEnd()) {
      if (event.getTextEnd().hasTextSignature()) {
        out.addProperty("contentSignature", event.getTextEnd().getTextSignature());
      }
    } else {
      ThinkingEndEvent end = event.getThinkingEnd();
      if (end.hasThinkingSignature()) {
        out.addProperty("contentSignature", end.getThinkingSignature());
      }
      if (end.hasRedacted()) {
        out.addProperty("redacted", end.getRedacted());
      }
    }
  }

  private static String reasonWord(StopReason reason, String where) {
    return PiWords.STOP_REASONS.requiredWord(reason, where);
  }

  private static JsonObject toolCall(ToolCall call) {
    return PiMessageWriter.assistantBlock(AssistantContent.newBuilder().setToolCall(call).build());
  }

  private static int contentIndex(ModelEvent event) {
    return switch (event.getEventCase()) {
      case TEXT_START -> event.getTextStart().getContentIndex();
      case TEXT_DELTA -> event.getTextDelta().getContentIndex();
      case TEXT_END -> event.getTextEnd().getContentIndex();
      case THINKING_START -> event.getThinkingStart().getContentIndex();
      case THINKING_DELTA -> event.getThinkingDelta().getContentIndex();
      case THINKING_END -> event.getThinkingEnd().getContentIndex();
      case TOOLCALL_START -> event.getToolcallStart().getContentIndex();
      case TOOLCALL_DELTA -> event.getToolcallDelta().getContentIndex();
      case TOOLCALL_END -> event.getToolcallEnd().getContentIndex();
      default -> throw new IllegalArgumentException("not a content event: " + event.getEventCase());
    };
  }
}
