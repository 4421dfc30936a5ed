package io.github.piproto;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.protobuf.Descriptors.Descriptor;
import io.github.piproto.ai.v1.AgentContext;
import io.github.piproto.ai.v1.AssistantMessage;
import io.github.piproto.ai.v1.BranchSummary;
import io.github.piproto.ai.v1.Compaction;
import io.github.piproto.ai.v1.ContextEdit;
import io.github.piproto.ai.v1.ContextReplacement;
import io.github.piproto.ai.v1.Cost;
import io.github.piproto.ai.v1.CustomEntry;
import io.github.piproto.ai.v1.CustomMessageEntry;
import io.github.piproto.ai.v1.DeferredHandle;
import io.github.piproto.ai.v1.Diagnostic;
import io.github.piproto.ai.v1.DiagnosticError;
import io.github.piproto.ai.v1.GrammarSampling;
import io.github.piproto.ai.v1.ImageContent;
import io.github.piproto.ai.v1.Json;
import io.github.piproto.ai.v1.JsonSchemaSampling;
import io.github.piproto.ai.v1.Label;
import io.github.piproto.ai.v1.ModelChange;
import io.github.piproto.ai.v1.NestedToolCall;
import io.github.piproto.ai.v1.NestedToolCalls;
import io.github.piproto.ai.v1.SessionHeader;
import io.github.piproto.ai.v1.SessionInfo;
import io.github.piproto.ai.v1.SystemMessage;
import io.github.piproto.ai.v1.TextContent;
import io.github.piproto.ai.v1.ThinkingContent;
import io.github.piproto.ai.v1.ThinkingLevelChange;
import io.github.piproto.ai.v1.Tool;
import io.github.piproto.ai.v1.ToolCall;
import io.github.piproto.ai.v1.ToolReference;
import io.github.piproto.ai.v1.ToolResultMessage;
import io.github.piproto.ai.v1.TranscriptEntry;
import io.github.piproto.ai.v1.Usage;
import io.github.piproto.ai.v1.UsageRecord;
import io.github.piproto.ai.v1.UserMessage;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The keys of each pi-JSON object, in the order the writer writes them: the order pi builds the
 * object in, with the keys it adds later as a response goes on after the ones it starts with. The
 * schema states them, as the {@code modelled_keys} of the message's {@code extra_json}. An object
 * whose keys came in another order (pi's providers add some in orders of their own) lists them
 * under {@link #ORDER_KEY} in its {@code extra_json}, and is written in that order.
 */
enum PiKeyOrder {
  ASSISTANT(AssistantMessage.getDescriptor()),
  SYSTEM(SystemMessage.getDescriptor()),
  USER(UserMessage.getDescriptor()),
  TOOL_RESULT(ToolResultMessage.getDescriptor()),
  TEXT(TextContent.getDescriptor()),
  THINKING(ThinkingContent.getDescriptor()),
  TOOL_CALL(ToolCall.getDescriptor()),
  IMAGE(ImageContent.getDescriptor()),
  USAGE(Usage.getDescriptor()),
  COST(Cost.getDescriptor()),
  CONTEXT(AgentContext.getDescriptor()),
  TOOL(Tool.getDescriptor()),
  TOOL_REFERENCE(ToolReference.getDescriptor()),
  JSON_SCHEMA(JsonSchemaSampling.getDescriptor()),
  GRAMMAR(GrammarSampling.getDescriptor()),
  VARIANTS(GrammarSampling.getDescriptor(), "variants_extra_json"),
  DIAGNOSTIC(Diagnostic.getDescriptor()),
  DIAGNOSTIC_ERROR(DiagnosticError.getDescriptor()),
  DEFERRED(DeferredHandle.getDescriptor()),
  NESTED_CALLS(NestedToolCalls.getDescriptor()),
  NESTED_CALL(NestedToolCall.getDescriptor()),
  // The lines of a session file: a message entry (its unmodelled keys are its session_json), an
  // entry of a type without a body (the keys a message entry has but its message), each body.
  MESSAGE_ENTRY(TranscriptEntry.getDescriptor(), "session_json"),
  UNTYPED_ENTRY(TranscriptEntry.getDescriptor(), "session_json", "message"),
  SESSION_HEADER(SessionHeader.getDescriptor()),
  THINKING_LEVEL_CHANGE(ThinkingLevelChange.getDescriptor()),
  MODEL_CHANGE(ModelChange.getDescriptor()),
  USAGE_RECORD(UsageRecord.getDescriptor()),
  COMPACTION(Compaction.getDescriptor()),
  BRANCH_SUMMARY(BranchSummary.getDescriptor()),
  CUSTOM_ENTRY(CustomEntry.getDescriptor()),
  CUSTOM_MESSAGE_ENTRY(CustomMessageEntry.getDescriptor()),
  LABEL(Label.getDescriptor()),
  SESSION_INFO(SessionInfo.getDescriptor()),
  CONTEXT_EDIT(ContextEdit.getDescriptor()),
  CONTEXT_REPLACEMENT(ContextReplacement.getDescriptor());

  /** The key of {@code extra_json} that lists the keys of an object in an order of its own. */
  static final String ORDER_KEY = "$order";

  private final List<String> keys;
  private final Set<String> known;

  PiKeyOrder(Descriptor message) {
    this(message, "extra_json");
  }

  /** The {@code modelled_keys} of the message's {@code field}, but {@code left}'s. */
  PiKeyOrder(Descriptor message, String field, String... left) {
    List<String> listed =
        message.findFieldByName(field).getOptions().getExtension(Json.json).getModelledKeysList();
    List<String> without = List.of(left);
    keys = listed.stream().filter(key -> !without.contains(key)).toList();
    if (keys.isEmpty()) {
      throw new IllegalStateException(message.getName() + "." + field + " lists no modelled_keys");
    }
    known = Set.copyOf(keys);
  }

  /** The keys the message models, in the writer's order. */
  List<String> keys() {
    return keys;
  }

  /** Whether the message models {@code key}. */
  boolean models(String key) {
    return known.contains(key);
  }

  /** The keys the message models, to look up. */
  Set<String> known() {
    return known;
  }

  /**
   * {@code out} with the keys of {@code order} first, in that order, then the others as they are.
   */
  static JsonObject inOrder(JsonObject out, List<String> order) {
    JsonObject placed = new JsonObject();
    for (String key : order) {
      JsonElement value = out.get(key);
      if (value != null) {
        placed.add(key, value);
      }
    }
    if (placed.size() < out.size()) {
      for (Map.Entry<String, JsonElement> entry : out.entrySet()) {
        if (!placed.has(entry.getKey())) {
          placed.add(entry.getKey(), entry.getValue());
        }
      }
    }
    return placed;
  }
}
