package io.github.piproto;

import static io.github.piproto.PiJsonReader.at;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import com.google.gson.JsonPrimitive;
import io.github.piproto.ai.v1.AgentContext;
import io.github.piproto.ai.v1.AgentMessage;
import io.github.piproto.ai.v1.AssistantContent;
import io.github.piproto.ai.v1.AssistantMessage;
import io.github.piproto.ai.v1.ConstrainedSampling;
import io.github.piproto.ai.v1.Cost;
import io.github.piproto.ai.v1.CustomMessage;
import io.github.piproto.ai.v1.DeferredHandle;
import io.github.piproto.ai.v1.Diagnostic;
import io.github.piproto.ai.v1.DiagnosticError;
import io.github.piproto.ai.v1.GrammarSampling;
import io.github.piproto.ai.v1.ImageContent;
import io.github.piproto.ai.v1.JsonSchemaSampling;
import io.github.piproto.ai.v1.NestedToolCall;
import io.github.piproto.ai.v1.NestedToolCalls;
import io.github.piproto.ai.v1.SystemMessage;
import io.github.piproto.ai.v1.SystemSection;
import io.github.piproto.ai.v1.TextContent;
import io.github.piproto.ai.v1.ThinkingContent;
import io.github.piproto.ai.v1.Tool;
import io.github.piproto.ai.v1.ToolCall;
import io.github.piproto.ai.v1.ToolReference;
import io.github.piproto.ai.v1.ToolResultContent;
import io.github.piproto.ai.v1.ToolResultMessage;
import io.github.piproto.ai.v1.Usage;
import io.github.piproto.ai.v1.UserContent;
import io.github.piproto.ai.v1.UserMessage;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;

/**
 * Writes the pi.ai.v1 messages and contexts as pi-JSON objects, their strings still as protobuf
 * holds them ({@link Surrogates} maps them back). What a message's fields say is what is written: a
 * key is written when its field is set, and the extras only add the keys the fields do not write,
 * in the order the object had its keys.
 */
final class PiMessageWriter {
  private PiMessageWriter() {}

  static JsonObject message(AgentMessage message) {
    return switch (message.getRoleCase()) {
      case SYSTEM -> system(message.getSystem());
      case USER -> user(message.getUser());
      case ASSISTANT -> assistant(message.getAssistant());
      case TOOL_RESULT -> toolResult(message.getToolResult());
      case CUSTOM -> custom(message.getCustom());
      case ROLE_NOT_SET -> throw new PiJsonException("AgentMessage", "no role is set");
    };
  }

  static JsonObject assistant(AssistantMessage message) {
    JsonObject out = new JsonObject();
    out.addProperty("role", "assistant");
    JsonArray content = new JsonArray();
    message.getContentList().forEach(block -> content.add(assistantBlock(block)));
    out.add("content", content);
    if (message.hasApi()) {
      out.addProperty("api", message.getApi());
    }
    if (message.hasProvider()) {
      out.addProperty("provider", message.getProvider());
    }
    if (message.hasModel()) {
      out.addProperty("model", message.getModel());
    }
    if (message.hasUsage()) {
      out.add("usage", usage(message.getUsage()));
    }
    PiWords.STOP_REASONS
        .word(message.getStopReason())
        .ifPresent(word -> out.addProperty("stopReason", word));
    if (message.hasDeferred()) {
      out.add("deferred", deferred(message.getDeferred()));
    }
    if (message.hasTimestamp()) {
      out.addProperty("timestamp", message.getTimestamp());
    }
    if (message.hasProviderThinkingLevel()) {
      out.addProperty("providerThinkingLevel", message.getProviderThinkingLevel());
    }
    if (message.hasResponseId()) {
      out.addProperty("responseId", message.getResponseId());
    }
    if (message.hasResponseModel()) {
      out.addProperty("responseModel", message.getResponseModel());
    }
    if (message.hasRawStopReason()) {
      out.addProperty("rawStopReason", message.getRawStopReason());
    }
    if (message.hasEndTurn()) {
      out.addProperty("endTurn", message.getEndTurn());
    }
    if (message.hasErrorMessage()) {
      out.addProperty("errorMessage", message.getErrorMessage()); // set once the call has failed
    }
    if (message.getDiagnosticsCount() > 0) {
      JsonArray diagnostics = new JsonArray();
      message.getDiagnosticsList().forEach(diagnostic -> diagnostics.add(diagnostic(diagnostic)));
      out.add("diagnostics", diagnostics);
    }
    if (message.hasDurationMs()) {
      out.addProperty("durationMs", message.getDurationMs());
    }
    PiWords.THINKING_LEVELS
        .word(message.getThinkingLevel())
        .ifPresent(word -> out.addProperty("thinkingLevel", word));
    return withExtra(out, message.getExtraJson(), "AssistantMessage", PiKeyOrder.ASSISTANT);
  }

  static JsonObject context(AgentContext context) {
    JsonObject out = new JsonObject();
    if (context.hasSystemPrompt()) {
      out.addProperty("systemPrompt", context.getSystemPrompt());
    }
    JsonArray messages = new JsonArray();
    context.getMessagesList().forEach(message -> messages.add(message(message)));
    out.add("messages", messages);
    if (context.getToolsCount() > 0) {
      out.add("tools", tools(context.getToolsList()));
    }
    return withExtra(out, context.getExtraJson(), "AgentContext", PiKeyOrder.CONTEXT);
  }

  private static JsonObject custom(CustomMessage message) {
    JsonObject out = new JsonObject();
    out.addProperty("role", message.getRole());
    JsonObject fields = JsJson.parseObject(message.getFieldsJson(), "CustomMessage.fields_json");
    fields.entrySet().forEach(entry -> out.add(entry.getKey(), entry.getValue()));
    return out;
  }

  static JsonObject system(SystemMessage message) {
    JsonObject out = new JsonObject();
    out.addProperty("role", "system");
    if (message.getStringContent() && message.getContentCount() == 1) {
      out.addProperty("content", message.getContent(0).getText());
    } else {
      JsonArray content = new JsonArray();
      message.getContentList().forEach(block -> content.add(text(block)));
      out.add("content", content);
    }
    if (message.getSectionsCount() > 0) {
      out.add("sections", sections(message.getSectionsList()));
    }
    // The timestamp before the tools, as pi's agent loop writes them.
    if (message.hasTimestamp()) {
      out.addProperty("timestamp", message.getTimestamp());
    }
    if (message.getToolsAddedCount() > 0) {
      out.add("toolsAdded", tools(message.getToolsAddedList()));
    }
    if (message.getToolsRemovedCount() > 0) {
      JsonArray removed = new JsonArray();
      message.getToolsRemovedList().forEach(reference -> removed.add(toolReference(reference)));
      out.add("toolsRemoved", removed);
    }
    return withExtra(out, message.getExtraJson(), "SystemMessage", PiKeyOrder.SYSTEM);
  }

  private static JsonObject user(UserMessage message) {
    JsonObject out = new JsonObject();
    out.addProperty("role", "user");
    if (message.getStringContent()
        && message.getContentCount() == 1
        && message.getContent(0).hasText()) {
      out.addProperty("content", message.getContent(0).getText().getText());
    } else {
      JsonArray content = new JsonArray();
      message.getContentList().forEach(block -> content.add(mediaBlock(block)));
      out.add("content", content);
    }
    if (message.hasTimestamp()) {
      out.addProperty("timestamp", message.getTimestamp());
    }
    return withExtra(out, message.getExtraJson(), "UserMessage", PiKeyOrder.USER);
  }

  private static JsonObject toolResult(ToolResultMessage message) {
    JsonObject out = new JsonObject();
    out.addProperty("role", "toolResult");
    out.addProperty("toolCallId", message.getToolCallId());
    if (message.hasToolName()) {
      out.addProperty("toolName", message.getToolName());
    }
    JsonArray content = new JsonArray();
    for (ToolResultContent block : message.getContentList()) {
      UserContent.Builder media = UserContent.newBuilder();
      switch (block.getBlockCase()) {
        case TEXT -> media.setText(block.getText());
        case IMAGE -> media.setImage(block.getImage());
        case BLOCK_NOT_SET -> throw new PiJsonException("content", "no block is set");
      }
      content.add(mediaBlock(media.build()));
    }
    out.add("content", content);
    if (message.hasDetailsJson()) {
      out.add("details", JsJson.parse(message.getDetailsJson(), "ToolResultMessage.details_json"));
    }
    if (message.hasUsage()) {
      out.add("usage", usage(message.getUsage()));
    }
    if (message.hasNestedCalls()) {
      out.add("nestedCalls", nestedCalls(message.getNestedCalls()));
    }
    if (message.hasIsError()) {
      out.addProperty("isError", message.getIsError());
    }
    if (message.hasDurationMs()) {
      out.addProperty("durationMs", message.getDurationMs());
    }
    if (message.hasTimestamp()) {
      out.addProperty("timestamp", message.getTimestamp());
    }
    return withExtra(out, message.getExtraJson(), "ToolResultMessage", PiKeyOrder.TOOL_RESULT);
  }

  static JsonObject assistantBlock(AssistantContent content) {
    return switch (content.getBlockCase()) {
      case TEXT -> text(content.getText());
      case THINKING -> thinking(content.getThinking());
      case TOOL_CALL -> toolCall(content.getToolCall());
      case BLOCK_NOT_SET -> throw new PiJsonException("AssistantContent", "no block is set");
    };
  }

  private static JsonObject thinking(ThinkingContent thinking) {
    JsonObject out = new JsonObject();
    out.addProperty("type", "thinking");
    out.addProperty("thinking", thinking.getThinking());
    if (thinking.hasThinkingSignature()) {
      out.addProperty("thinkingSignature", thinking.getThinkingSignature());
    }
    if (thinking.hasRedacted()) {
      out.addProperty("redacted", thinking.getRedacted());
    }
    return withExtra(out, thinking.getExtraJson(), "ThinkingContent", PiKeyOrder.THINKING);
  }

  private static JsonObject toolCall(ToolCall call) {
    JsonObject out = new JsonObject();
    out.addProperty("type", "toolCall");
    out.addProperty("id", call.getId());
    out.addProperty("name", call.getName());
    if (call.hasArgumentsJson()) {
      out.add("arguments", JsJson.parse(call.getArgumentsJson(), "ToolCall.arguments_json"));
    }
    if (call.hasRawArguments()) {
      out.addProperty("rawArguments", call.getRawArguments());
    }
    if (call.hasThoughtSignature()) {
      out.addProperty("thoughtSignature", call.getThoughtSignature());
    }
    if (call.hasNamespace()) {
      out.addProperty("namespace", call.getNamespace());
    }
    if (call.hasArgumentsError()) {
      out.addProperty("argumentsError", call.getArgumentsError());
    }
    return withExtra(out, call.getExtraJson(), "ToolCall", PiKeyOrder.TOOL_CALL);
  }

  /** A text or an image block, as a user message holds it. */
  static JsonObject mediaBlock(UserContent content) {
    return switch (content.getBlockCase()) {
      case TEXT -> text(content.getText());
      case IMAGE -> image(content.getImage());
      case BLOCK_NOT_SET -> throw new PiJsonException("content", "no block is set");
    };
  }

  private static JsonObject image(ImageContent image) {
    JsonObject out = new JsonObject();
    out.addProperty("type", "image");
    out.addProperty("data", Base64.getEncoder().encodeToString(image.getData().toByteArray()));
    out.addProperty("mimeType", image.getMimeType());
    return withExtra(out, image.getExtraJson(), "ImageContent", PiKeyOrder.IMAGE);
  }

  private static JsonObject text(TextContent text) {
    JsonObject out = new JsonObject();
    out.addProperty("type", "text");
    out.addProperty("text", text.getText());
    if (text.hasTextSignature()) {
      out.addProperty("textSignature", text.getTextSignature());
    }
    return withExtra(out, text.getExtraJson(), "TextContent", PiKeyOrder.TEXT);
  }

  static JsonObject usage(Usage usage) {
    JsonObject out = new JsonObject();
    if (usage.hasInput()) {
      out.addProperty("input", usage.getInput());
    }
    if (usage.hasOutput()) {
      out.addProperty("output", usage.getOutput());
    }
    if (usage.hasCacheRead()) {
      out.addProperty("cacheRead", usage.getCacheRead());
    }
    if (usage.hasCacheWrite()) {
      out.addProperty("cacheWrite", usage.getCacheWrite());
    }
    if (usage.hasReasoning()) {
      out.addProperty("reasoning", usage.getReasoning());
    }
    if (usage.hasTotalTokens()) {
      out.addProperty("totalTokens", usage.getTotalTokens());
    }
    if (usage.hasCost()) {
      out.add("cost", cost(usage.getCost()));
    }
    if (usage.hasCacheWrite1H()) {
      out.addProperty("cacheWrite1h", usage.getCacheWrite1H());
    }
    return withExtra(out, usage.getExtraJson(), "Usage", PiKeyOrder.USAGE);
  }

  private static JsonObject cost(Cost cost) {
    JsonObject out = new JsonObject();
    if (cost.hasInput()) {
      out.addProperty("input", cost.getInput());
    }
    if (cost.hasOutput()) {
      out.addProperty("output", cost.getOutput());
    }
    if (cost.hasCacheRead()) {
      out.addProperty("cacheRead", cost.getCacheRead());
    }
    if (cost.hasCacheWrite()) {
      out.addProperty("cacheWrite", cost.getCacheWrite());
    }
    if (cost.hasTotal()) {
      out.addProperty("total", cost.getTotal());
    }
    if (cost.hasTotalFromProvider()) {
      out.addProperty("totalFromProvider", cost.getTotalFromProvider());
    }
    return withExtra(out, cost.getExtraJson(), "Cost", PiKeyOrder.COST);
  }

  private static JsonArray tools(List<Tool> tools) {
    JsonArray out = new JsonArray();
    tools.forEach(tool -> out.add(tool(tool)));
    return out;
  }

  private static JsonObject tool(Tool tool) {
    JsonObject out = new JsonObject();
    out.addProperty("name", tool.getName());
    if (tool.hasDescription()) {
      out.addProperty("description", tool.getDescription());
    }
    if (tool.hasParametersJson()) {
      out.add("parameters", JsJson.parse(tool.getParametersJson(), "Tool.parameters_json"));
    }
    if (tool.hasConstrainedSampling()) {
      out.add("constrainedSampling", constrainedSampling(tool.getConstrainedSampling()));
    }
    return withExtra(out, tool.getExtraJson(), "Tool", PiKeyOrder.TOOL);
  }

  private static JsonObject toolReference(ToolReference reference) {
    JsonObject out = new JsonObject();
    out.addProperty("name", reference.getName());
    return withExtra(out, reference.getExtraJson(), "ToolReference", PiKeyOrder.TOOL_REFERENCE);
  }

  private static JsonObject sections(List<SystemSection> sections) {
    JsonObject out = new JsonObject();
    for (int index = 0; index < sections.size(); index++) {
      SystemSection section = sections.get(index);
      if (out.has(section.getName())) {
        throw new PiJsonException(
            "SystemMessage.sections[" + index + "].name",
            JsJson.stringify(new JsonPrimitive(section.getName()))
                + " is named twice, and pi's sections are an object");
      }
      out.add(
          section.getName(),
          section.hasText() ? new JsonPrimitive(section.getText()) : JsonNull.INSTANCE);
    }
    return out;
  }

  private static JsonElement constrainedSampling(ConstrainedSampling sampling) {
    switch (sampling.getConfigCase()) {
      case OFF -> {
        return new JsonPrimitive(false);
      }
      case JSON_SCHEMA -> {
        JsonSchemaSampling schema = sampling.getJsonSchema();
        JsonObject out = new JsonObject();
        out.addProperty("type", "json_schema");
        out.addProperty(
            "strict",
            PiWords.STRICTNESS.requiredWord(schema.getStrict(), "JsonSchemaSampling.strict"));
        return withExtra(out, schema.getExtraJson(), "JsonSchemaSampling", PiKeyOrder.JSON_SCHEMA);
      }
      case GRAMMAR -> {
        GrammarSampling grammar = sampling.getGrammar();
        JsonObject variants = new JsonObject();
        if (grammar.hasOpenaiLark()) {
          variants.addProperty("openai_lark", grammar.getOpenaiLark());
        }
        if (grammar.hasOpenaiRegex()) {
          variants.addProperty("openai_regex", grammar.getOpenaiRegex());
        }
        JsonObject out = new JsonObject();
        out.addProperty("type", "grammar");
        out.add(
            "variants",
            withExtra(
                variants,
                grammar.getVariantsExtraJson(),
                "GrammarSampling.variants",
                PiKeyOrder.VARIANTS));
        return withExtra(out, grammar.getExtraJson(), "GrammarSampling", PiKeyOrder.GRAMMAR);
      }
      default -> throw new PiJsonException("ConstrainedSampling", "no choice is set");
    }
  }

  private static JsonObject diagnostic(Diagnostic diagnostic) {
    JsonObject out = new JsonObject();
    out.addProperty("type", diagnostic.getType());
    out.addProperty("timestamp", diagnostic.getTimestamp());
    if (diagnostic.hasError()) {
      out.add("error", diagnosticError(diagnostic.getError()));
    }
    if (diagnostic.hasDetailsJson()) {
      out.add("details", JsJson.parse(diagnostic.getDetailsJson(), "Diagnostic.details_json"));
    }
    return withExtra(out, diagnostic.getExtraJson(), "Diagnostic", PiKeyOrder.DIAGNOSTIC);
  }

  private static JsonObject diagnosticError(DiagnosticError error) {
    JsonObject out = new JsonObject();
    if (error.hasName()) {
      out.addProperty("name", error.getName());
    }
    out.addProperty("message", error.getMessage());
    if (error.hasStack()) {
      out.addProperty("stack", error.getStack());
    }
    switch (error.getCodeCase()) {
      case CODE_TEXT -> out.addProperty("code", error.getCodeText());
      case CODE_NUMBER -> out.addProperty("code", error.getCodeNumber());
      case CODE_NOT_SET -> {}
    }
    return withExtra(out, error.getExtraJson(), "DiagnosticError", PiKeyOrder.DIAGNOSTIC_ERROR);
  }

  private static JsonObject deferred(DeferredHandle handle) {
    JsonObject out = new JsonObject();
    out.addProperty("provider", handle.getProvider());
    out.addProperty("modelId", handle.getModelId());
    out.addProperty("api", handle.getApi());
    out.addProperty("id", handle.getId());
    if (handle.hasExpiresAt()) {
      out.addProperty("expiresAt", handle.getExpiresAt());
    }
    if (handle.hasPollAfterMs()) {
      out.addProperty("pollAfterMs", handle.getPollAfterMs());
    }
    if (handle.hasDataJson()) {
      out.add("data", JsJson.parse(handle.getDataJson(), "DeferredHandle.data_json"));
    }
    return withExtra(out, handle.getExtraJson(), "DeferredHandle", PiKeyOrder.DEFERRED);
  }

  private static JsonObject nestedCalls(NestedToolCalls nested) {
    JsonObject out = new JsonObject();
    JsonArray calls = new JsonArray();
    nested.getCallsList().forEach(call -> calls.add(nestedCall(call)));
    out.add("calls", calls);
    out.addProperty("complete", nested.getComplete());
    return withExtra(out, nested.getExtraJson(), "NestedToolCalls", PiKeyOrder.NESTED_CALLS);
  }

  private static JsonObject nestedCall(NestedToolCall call) {
    JsonObject out = new JsonObject();
    out.addProperty("id", call.getId());
    out.addProperty("name", call.getName());
    if (call.hasArgumentsJson()) {
      out.add("arguments", JsJson.parse(call.getArgumentsJson(), "NestedToolCall.arguments_json"));
    }
    if (call.hasArgumentsBytes()) {
      out.addProperty("argumentsBytes", call.getArgumentsBytes());
    }
    out.addProperty(
        "status",
        PiWords.NESTED_CALL_STATUSES.requiredWord(call.getStatus(), "NestedToolCall.status"));
    if (call.hasDurationMs()) {
      out.addProperty("durationMs", call.getDurationMs());
    }
    if (call.hasError()) {
      out.addProperty("error", call.getError());
    }
    return withExtra(out, call.getExtraJson(), "NestedToolCall", PiKeyOrder.NESTED_CALL);
  }

  /**
   * {@code out} with the object's extras, in the order it had its keys ({@code order}'s, the
   * writer's, when it had them in that). A key the fields wrote wins over the same key in the
   * extras, which only an empty list or object may be ({@link PiJsonReader#omittedWhenEmpty}).
   */
  static JsonObject withExtra(JsonObject out, String extraJson, String where, PiKeyOrder order) {
    return withKept(out, extraJson, at(where, "extra_json"), order);
  }

  /** {@link #withExtra} from the kept keys of the field {@code field} names. */
  static JsonObject withKept(JsonObject out, String extraJson, String field, PiKeyOrder order) {
    if (extraJson.isEmpty()) {
      return out;
    }
    JsonObject extra = JsJson.parseObject(extraJson, field);
    JsonElement given = extra.remove(PiKeyOrder.ORDER_KEY);
    List<String> keys = given == null ? order.keys() : keyList(given, field);
    for (Map.Entry<String, JsonElement> entry : extra.entrySet()) {
      if (!out.has(entry.getKey())) {
        out.add(entry.getKey(), entry.getValue());
      }
    }
    return PiKeyOrder.inOrder(out, keys);
  }

  private static List<String> keyList(JsonElement value, String field) {
    PiJsonException wrong = new PiJsonException(field, PiKeyOrder.ORDER_KEY + " is a list of keys");
    if (!value.isJsonArray()) {
      throw wrong;
    }
    List<String> keys = new ArrayList<>();
    for (JsonElement key : value.getAsJsonArray()) {
      if (!PiJsonReader.isString(key)) {
        throw wrong;
      }
      keys.add(key.getAsString());
    }
    return keys;
  }
}
