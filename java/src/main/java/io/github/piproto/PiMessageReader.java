package io.github.piproto;

import static io.github.piproto.PiJsonReader.at;
import static io.github.piproto.PiJsonReader.isString;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.protobuf.ByteString;
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
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;

/**
 * Reads pi-JSON messages and contexts into the pi.ai.v1 messages, from values whose strings {@link
 * Surrogates} has mapped. Each reader takes the path of its value, for the errors.
 */
final class PiMessageReader {
  /** The largest integer JavaScript holds exactly. */
  private static final double SAFE_INTEGER = 0x1p53;

  private PiMessageReader() {}

  /** One message: system, user, assistant, toolResult, or any other role, kept as it is. */
  static AgentMessage message(JsonElement value, String where) {
    if (!value.isJsonObject()) {
      throw new PiJsonException(where, "expected an object, got " + PiJsonReader.typeName(value));
    }
    JsonObject object = value.getAsJsonObject();
    JsonElement role = object.get("role");
    if (isString(role, "user")) {
      return AgentMessage.newBuilder().setUser(user(value, where)).build();
    }
    if (isString(role, "assistant")) {
      return AgentMessage.newBuilder().setAssistant(assistant(value, where)).build();
    }
    if (isString(role, "toolResult")) {
      return AgentMessage.newBuilder().setToolResult(toolResult(value, where)).build();
    }
    if (isString(role, "system")) {
      return AgentMessage.newBuilder().setSystem(system(value, where)).build();
    }
    if (isString(role) && !role.getAsString().isEmpty()) {
      JsonObject fields = new JsonObject();
      for (Map.Entry<String, JsonElement> entry : object.entrySet()) {
        if (!entry.getKey().equals("role")) {
          fields.add(entry.getKey(), entry.getValue());
        }
      }
      CustomMessage custom =
          CustomMessage.newBuilder()
              .setRole(role.getAsString())
              .setFieldsJson(JsJson.stringify(fields))
              .build();
      return AgentMessage.newBuilder().setCustom(custom).build();
    }
    throw new PiJsonException(
        at(where, "role"),
        "expected a role such as 'system', 'user', 'assistant' or 'toolResult', got "
            + (role == null ? "nothing" : JsJson.stringify(role)));
  }

  static AssistantMessage assistant(JsonElement value, String where) {
    PiJsonReader read = new PiJsonReader(value, where, PiKeyOrder.ASSISTANT);
    read.string("role");
    AssistantMessage.Builder message =
        AssistantMessage.newBuilder()
            .addAllContent(read.items("content", PiMessageReader::assistantBlock));
    read.optionalString("api").ifPresent(message::setApi);
    read.optionalString("provider").ifPresent(message::setProvider);
    read.optionalString("model").ifPresent(message::setModel);
    read.child("usage", PiMessageReader::usage).ifPresent(message::setUsage);
    // Absent only on a partial from an older pi, still streaming; written only when set.
    read.optionalChoice("stopReason", PiWords.STOP_REASONS).ifPresent(message::setStopReason);
    read.child("deferred", PiMessageReader::deferred).ifPresent(message::setDeferred);
    read.optionalInteger("timestamp").ifPresent(message::setTimestamp);
    read.optionalString("providerThinkingLevel").ifPresent(message::setProviderThinkingLevel);
    read.optionalString("responseId").ifPresent(message::setResponseId);
    read.optionalString("responseModel").ifPresent(message::setResponseModel);
    read.optionalString("rawStopReason").ifPresent(message::setRawStopReason);
    read.optionalBool("endTurn").ifPresent(message::setEndTurn);
    read.optionalString("errorMessage").ifPresent(message::setErrorMessage);
    message.addAllDiagnostics(
        read.omittedWhenEmpty("diagnostics", PiMessageReader::diagnostics, false));
    read.optionalInteger("durationMs").ifPresent(message::setDurationMs);
    read.optionalChoice("thinkingLevel", PiWords.THINKING_LEVELS)
        .ifPresent(message::setThinkingLevel);
    return message.setExtraJson(read.extraJson()).build();
  }

  /** pi's Context (systemPrompt, messages, tools) or its TranscriptContext (messages only). */
  static AgentContext context(JsonElement value, String where) {
    PiJsonReader read = new PiJsonReader(value, where, PiKeyOrder.CONTEXT);
    AgentContext.Builder context = AgentContext.newBuilder();
    read.optionalString("systemPrompt").ifPresent(context::setSystemPrompt);
    context.addAllMessages(read.items("messages", PiMessageReader::message));
    context.addAllTools(read.omittedWhenEmpty("tools", PiMessageReader::tools, false));
    return context.setExtraJson(read.extraJson()).build();
  }

  static SystemMessage system(JsonElement value, String where) {
    PiJsonReader read = new PiJsonReader(value, where, PiKeyOrder.SYSTEM);
    read.string("role");
    SystemMessage.Builder message = SystemMessage.newBuilder();
    if (isString(read.get("content"))) {
      message.addContent(TextContent.newBuilder().setText(read.string("content")));
      message.setStringContent(true);
    } else {
      message.addAllContent(read.items("content", PiMessageReader::systemBlock));
    }
    message.addAllSections(read.omittedWhenEmpty("sections", PiMessageReader::sections, true));
    message.addAllToolsAdded(read.omittedWhenEmpty("toolsAdded", PiMessageReader::tools, false));
    message.addAllToolsRemoved(
        read.omittedWhenEmpty("toolsRemoved", PiMessageReader::toolReferences, false));
    read.optionalInteger("timestamp").ifPresent(message::setTimestamp);
    return message.setExtraJson(read.extraJson()).build();
  }

  private static UserMessage user(JsonElement value, String where) {
    PiJsonReader read = new PiJsonReader(value, where, PiKeyOrder.USER);
    read.string("role");
    UserMessage.Builder message = UserMessage.newBuilder();
    if (isString(read.get("content"))) {
      TextContent text = TextContent.newBuilder().setText(read.string("content")).build();
      message.addContent(UserContent.newBuilder().setText(text)).setStringContent(true);
    } else {
      message.addAllContent(read.items("content", PiMessageReader::mediaBlock));
    }
    read.optionalInteger("timestamp").ifPresent(message::setTimestamp);
    return message.setExtraJson(read.extraJson()).build();
  }

  private static ToolResultMessage toolResult(JsonElement value, String where) {
    PiJsonReader read = new PiJsonReader(value, where, PiKeyOrder.TOOL_RESULT);
    read.string("role");
    ToolResultMessage.Builder message =
        ToolResultMessage.newBuilder().setToolCallId(read.string("toolCallId"));
    read.optionalString("toolName").ifPresent(message::setToolName);
    for (UserContent block : read.items("content", PiMessageReader::mediaBlock)) {
      ToolResultContent.Builder content = ToolResultContent.newBuilder();
      message.addContent(
          block.hasText() ? content.setText(block.getText()) : content.setImage(block.getImage()));
    }
    read.jsonText("details", false).ifPresent(message::setDetailsJson);
    read.child("usage", PiMessageReader::usage).ifPresent(message::setUsage);
    read.child("nestedCalls", PiMessageReader::nestedCalls).ifPresent(message::setNestedCalls);
    read.optionalBool("isError").ifPresent(message::setIsError);
    read.optionalInteger("durationMs").ifPresent(message::setDurationMs);
    read.optionalInteger("timestamp").ifPresent(message::setTimestamp);
    return message.setExtraJson(read.extraJson()).build();
  }

  private static JsonElement blockType(JsonElement value, String where) {
    if (!value.isJsonObject()) {
      throw new PiJsonException(where, "expected an object, got " + PiJsonReader.typeName(value));
    }
    return value.getAsJsonObject().get("type");
  }

  private static String described(JsonElement kind) {
    return kind == null ? "nothing" : JsJson.stringify(kind);
  }

  static AssistantContent assistantBlock(JsonElement value, String where) {
    JsonElement kind = blockType(value, where);
    if (isString(kind, "text")) {
      return AssistantContent.newBuilder().setText(text(value, where)).build();
    }
    if (isString(kind, "thinking")) {
      PiJsonReader read = new PiJsonReader(value, where, PiKeyOrder.THINKING);
      read.string("type");
      ThinkingContent.Builder thinking =
          ThinkingContent.newBuilder().setThinking(read.string("thinking"));
      read.optionalString("thinkingSignature").ifPresent(thinking::setThinkingSignature);
      read.optionalBool("redacted").ifPresent(thinking::setRedacted);
      thinking.setExtraJson(read.extraJson());
      return AssistantContent.newBuilder().setThinking(thinking).build();
    }
    if (isString(kind, "toolCall")) {
      PiJsonReader read = new PiJsonReader(value, where, PiKeyOrder.TOOL_CALL);
      read.string("type");
      ToolCall.Builder call =
          ToolCall.newBuilder().setId(read.string("id")).setName(read.string("name"));
      read.jsonText("arguments", true).ifPresent(call::setArgumentsJson);
      read.optionalString("rawArguments").ifPresent(call::setRawArguments);
      read.optionalString("thoughtSignature").ifPresent(call::setThoughtSignature);
      read.optionalString("namespace").ifPresent(call::setNamespace);
      read.optionalString("argumentsError").ifPresent(call::setArgumentsError);
      call.setExtraJson(read.extraJson());
      return AssistantContent.newBuilder().setToolCall(call).build();
    }
    throw new PiJsonException(
        at(where, "type"),
        "an assistant block is 'text', 'thinking' or 'toolCall', got " + described(kind));
  }

  private static TextContent systemBlock(JsonElement value, String where) {
    JsonElement kind = blockType(value, where);
    if (!isString(kind, "text")) {
      throw new PiJsonException(
          at(where, "type"), "a system message's block is 'text', got " + described(kind));
    }
    return text(value, where);
  }

  /** A text or an image block, as a user message holds it. */
  static UserContent mediaBlock(JsonElement value, String where) {
    JsonElement kind = blockType(value, where);
    if (isString(kind, "text")) {
      return UserContent.newBuilder().setText(text(value, where)).build();
    }
    if (isString(kind, "image")) {
      PiJsonReader read = new PiJsonReader(value, where, PiKeyOrder.IMAGE);
      read.string("type");
      String encoded = read.string("data");
      byte[] data;
      try {
        data = Base64.getDecoder().decode(encoded);
      } catch (IllegalArgumentException error) {
        throw new PiJsonException(at(where, "data"), "not valid base64: " + error.getMessage());
      }
      if (!Base64.getEncoder().encodeToString(data).equals(encoded)) {
        throw new PiJsonException(
            at(where, "data"),
            "not canonical base64 (padded, standard alphabet), so it would change");
      }
      ImageContent image =
          ImageContent.newBuilder()
              .setData(ByteString.copyFrom(data))
              .setMimeType(read.string("mimeType"))
              .setExtraJson(read.extraJson())
              .build();
      return UserContent.newBuilder().setImage(image).build();
    }
    throw new PiJsonException(
        at(where, "type"), "expected 'text' or 'image', got " + described(kind));
  }

  private static TextContent text(JsonElement value, String where) {
    PiJsonReader read = new PiJsonReader(value, where, PiKeyOrder.TEXT);
    read.string("type");
    TextContent.Builder text = TextContent.newBuilder().setText(read.string("text"));
    read.optionalString("textSignature").ifPresent(text::setTextSignature);
    return text.setExtraJson(read.extraJson()).build();
  }

  static Usage usage(JsonElement value, String where) {
    PiJsonReader read = new PiJsonReader(value, where, PiKeyOrder.USAGE);
    Usage.Builder usage = Usage.newBuilder();
    read.optionalInteger("input").ifPresent(usage::setInput);
    read.optionalInteger("output").ifPresent(usage::setOutput);
    read.optionalInteger("cacheRead").ifPresent(usage::setCacheRead);
    read.optionalInteger("cacheWrite").ifPresent(usage::setCacheWrite);
    // Absent is not 0: the provider did not say.
    read.optionalInteger("reasoning").ifPresent(usage::setReasoning);
    read.optionalInteger("totalTokens").ifPresent(usage::setTotalTokens);
    read.child("cost", PiMessageReader::cost).ifPresent(usage::setCost);
    read.optionalInteger("cacheWrite1h").ifPresent(usage::setCacheWrite1H);
    return usage.setExtraJson(read.extraJson()).build();
  }

  private static Cost cost(JsonElement value, String where) {
    PiJsonReader read = new PiJsonReader(value, where, PiKeyOrder.COST);
    Cost.Builder cost = Cost.newBuilder();
    read.optionalNumber("input").ifPresent(cost::setInput);
    read.optionalNumber("output").ifPresent(cost::setOutput);
    read.optionalNumber("cacheRead").ifPresent(cost::setCacheRead);
    read.optionalNumber("cacheWrite").ifPresent(cost::setCacheWrite);
    read.optionalNumber("total").ifPresent(cost::setTotal);
    read.optionalBool("totalFromProvider").ifPresent(cost::setTotalFromProvider);
    return cost.setExtraJson(read.extraJson()).build();
  }

  private static Tool tool(JsonElement value, String where) {
    PiJsonReader read = new PiJsonReader(value, where, PiKeyOrder.TOOL);
    Tool.Builder tool = Tool.newBuilder().setName(read.string("name"));
    read.optionalString("description").ifPresent(tool::setDescription);
    read.jsonText("parameters", true).ifPresent(tool::setParametersJson);
    read.child("constrainedSampling", PiMessageReader::constrainedSampling)
        .ifPresent(tool::setConstrainedSampling);
    return tool.setExtraJson(read.extraJson()).build();
  }

  private static List<Tool> tools(JsonElement value, String where) {
    return PiJsonReader.list(value, where, PiMessageReader::tool);
  }

  private static List<ToolReference> toolReferences(JsonElement value, String where) {
    return PiJsonReader.list(value, where, PiMessageReader::toolReference);
  }

  private static ToolReference toolReference(JsonElement value, String where) {
    PiJsonReader read = new PiJsonReader(value, where, PiKeyOrder.TOOL_REFERENCE);
    return ToolReference.newBuilder()
        .setName(read.string("name"))
        .setExtraJson(read.extraJson())
        .build();
  }

  /** pi's {@code sections} object, in its order; a section set to null (removed) has no text. */
  private static List<SystemSection> sections(JsonElement value, String where) {
    if (!value.isJsonObject()) {
      throw new PiJsonException(where, "expected an object, got " + PiJsonReader.describe(value));
    }
    List<SystemSection> sections = new ArrayList<>();
    for (Map.Entry<String, JsonElement> entry : value.getAsJsonObject().entrySet()) {
      SystemSection.Builder section = SystemSection.newBuilder().setName(entry.getKey());
      JsonElement text = entry.getValue();
      if (isString(text)) {
        section.setText(text.getAsString());
      } else if (!text.isJsonNull()) {
        throw new PiJsonException(
            at(where, entry.getKey()),
            "expected a string or null, got " + PiJsonReader.describe(text));
      }
      sections.add(section.build());
    }
    return sections;
  }

  /** pi's {@code false | {type: "json_schema", strict} | {type: "grammar", variants}}. */
  private static ConstrainedSampling constrainedSampling(JsonElement value, String where) {
    if (value.isJsonPrimitive()
        && value.getAsJsonPrimitive().isBoolean()
        && !value.getAsBoolean()) {
      return ConstrainedSampling.newBuilder().setOff(true).build();
    }
    if (!value.isJsonObject()) {
      throw new PiJsonException(
          where, "expected false or an object, got " + PiJsonReader.describe(value));
    }
    JsonElement kind = value.getAsJsonObject().get("type");
    if (isString(kind, "json_schema")) {
      PiJsonReader read = new PiJsonReader(value, where, PiKeyOrder.JSON_SCHEMA);
      JsonSchemaSampling.Builder schema =
          JsonSchemaSampling.newBuilder().setStrict(read.choice("strict", PiWords.STRICTNESS));
      return ConstrainedSampling.newBuilder()
          .setJsonSchema(schema.setExtraJson(read.extraJson()))
          .build();
    }
    if (isString(kind, "grammar")) {
      PiJsonReader read = new PiJsonReader(value, where, PiKeyOrder.GRAMMAR);
      JsonElement variantsValue = read.get("variants");
      if (variantsValue == null) {
        throw new PiJsonException(
            at(where, "variants"), "required, an object of grammars by format");
      }
      PiJsonReader variants =
          new PiJsonReader(variantsValue, at(where, "variants"), PiKeyOrder.VARIANTS);
      GrammarSampling.Builder grammar = GrammarSampling.newBuilder();
      variants.optionalString("openai_lark").ifPresent(grammar::setOpenaiLark);
      variants.optionalString("openai_regex").ifPresent(grammar::setOpenaiRegex);
      grammar.setVariantsExtraJson(variants.extraJson()).setExtraJson(read.extraJson());
      return ConstrainedSampling.newBuilder().setGrammar(grammar).build();
    }
    throw new PiJsonException(
        at(where, "type"), "expected 'json_schema' or 'grammar', got " + described(kind));
  }

  private static List<Diagnostic> diagnostics(JsonElement value, String where) {
    return PiJsonReader.list(value, where, PiMessageReader::diagnostic);
  }

  private static Diagnostic diagnostic(JsonElement value, String where) {
    PiJsonReader read = new PiJsonReader(value, where, PiKeyOrder.DIAGNOSTIC);
    Diagnostic.Builder diagnostic =
        Diagnostic.newBuilder()
            .setType(read.string("type"))
            .setTimestamp(read.integer("timestamp"));
    read.child("error", PiMessageReader::diagnosticError).ifPresent(diagnostic::setError);
    read.jsonText("details", true).ifPresent(diagnostic::setDetailsJson);
    return diagnostic.setExtraJson(read.extraJson()).build();
  }

  private static DiagnosticError diagnosticError(JsonElement value, String where) {
    PiJsonReader read = new PiJsonReader(value, where, PiKeyOrder.DIAGNOSTIC_ERROR);
    DiagnosticError.Builder error = DiagnosticError.newBuilder();
    read.optionalString("name").ifPresent(error::setName);
    error.setMessage(read.string("message"));
    read.optionalString("stack").ifPresent(error::setStack);
    JsonElement code = read.get("code");
    if (isString(code)) {
      error.setCodeText(code.getAsString());
    } else if (PiJsonReader.isNumber(code) && exactInJavaScript(code.getAsString())) {
      error.setCodeNumber(code.getAsDouble());
    } else if (code != null) {
      throw read.fail("code", "a string or a number (a safe integer when integral)", code);
    }
    return error.setExtraJson(read.extraJson()).build();
  }

  /** Whether JavaScript reads this JSON number exactly: finite, and a safe integer if integral. */
  private static boolean exactInJavaScript(String number) {
    if (PiJsonReader.isIntegerText(number)) {
      return new BigInteger(number).abs().compareTo(BigInteger.TWO.pow(53)) < 0;
    }
    double value = Double.parseDouble(number);
    return Double.isFinite(value)
        && !(value == Math.rint(value) && Math.abs(value) >= SAFE_INTEGER);
  }

  private static DeferredHandle deferred(JsonElement value, String where) {
    PiJsonReader read = new PiJsonReader(value, where, PiKeyOrder.DEFERRED);
    DeferredHandle.Builder handle =
        DeferredHandle.newBuilder()
            .setProvider(read.string("provider"))
            .setModelId(read.string("modelId"))
            .setApi(read.string("api"))
            .setId(read.string("id"));
    read.optionalInteger("expiresAt").ifPresent(handle::setExpiresAt);
    read.optionalInteger("pollAfterMs").ifPresent(handle::setPollAfterMs);
    read.jsonText("data", false).ifPresent(handle::setDataJson);
    return handle.setExtraJson(read.extraJson()).build();
  }

  private static NestedToolCalls nestedCalls(JsonElement value, String where) {
    PiJsonReader read = new PiJsonReader(value, where, PiKeyOrder.NESTED_CALLS);
    return NestedToolCalls.newBuilder()
        .addAllCalls(read.items("calls", PiMessageReader::nestedCall))
        .setComplete(read.bool("complete"))
        .setExtraJson(read.extraJson())
        .build();
  }

  private static NestedToolCall nestedCall(JsonElement value, String where) {
    PiJsonReader read = new PiJsonReader(value, where, PiKeyOrder.NESTED_CALL);
    NestedToolCall.Builder call =
        NestedToolCall.newBuilder().setId(read.string("id")).setName(read.string("name"));
    read.jsonText("arguments", true).ifPresent(call::setArgumentsJson);
    read.optionalInteger("argumentsBytes").ifPresent(call::setArgumentsBytes);
    call.setStatus(read.choice("status", PiWords.NESTED_CALL_STATUSES));
    read.optionalInteger("durationMs").ifPresent(call::setDurationMs);
    read.optionalString("error").ifPresent(call::setError);
    return call.setExtraJson(read.extraJson()).build();
  }
}
