package pi.proto;

import pi.ai.v1.Content.AssistantContent;
import pi.ai.v1.Content.ToolCall;
import pi.ai.v1.Message.AssistantMessage;

/**
 * The message rules the stream needs: what a well-formed finished assistant message is, beyond what
 * the wire format checks. Each failure throws {@link ValidationException} naming the path of the
 * field and the rule, in the same words as the Python runtime's {@code validate} module.
 */
public final class MessageRules {
  private MessageRules() {}

  /** Check a finished assistant message: stop reason set, blocks set, tool calls well formed. */
  public static void checkAssistant(AssistantMessage message, String path, Limits limits) {
    if (message.getStopReasonValue() == 0) {
      throw new ValidationException(path + ".stop_reason: must be set");
    }
    for (int index = 0; index < message.getContentCount(); index++) {
      AssistantContent content = message.getContent(index);
      String where = path + ".content[" + index + "]";
      switch (content.getBlockCase()) {
        case TEXT -> checkExtra(content.getText().getExtraJson(), where + ".text", limits);
        case THINKING ->
            checkExtra(content.getThinking().getExtraJson(), where + ".thinking", limits);
        case TOOL_CALL -> {
          checkToolCall(content.getToolCall(), where + ".tool_call", limits);
          checkExtra(content.getToolCall().getExtraJson(), where + ".tool_call", limits);
        }
        default ->
            throw new ValidationException(
                where + ".block: exactly one of text, thinking, tool_call must be set, found none");
      }
    }
    checkExtra(message.getExtraJson(), path, limits);
  }

  /** {@link #checkAssistant(AssistantMessage, String, Limits)} at path "AssistantMessage". */
  public static void checkAssistant(AssistantMessage message) {
    checkAssistant(message, "AssistantMessage", Limits.DEFAULT);
  }

  /**
   * Check JSON text that must hold an object, within the size and depth limits; {@code what} names
   * the expected value in the message, e.g. "a JSON object".
   */
  public static void checkJsonObject(String text, String path, Limits limits, String what) {
    long size = utf8Length(text);
    if (size > limits.maxJsonBytes()) {
      throw new ValidationException(
          path + ": " + size + " bytes of JSON, above the limit of " + limits.maxJsonBytes());
    }
    JsonShape shape;
    try {
      shape = JsonShape.of(text);
    } catch (JsonShape.InvalidJsonException error) {
      throw new ValidationException(path + ": not valid JSON: " + error.getMessage());
    }
    if (shape.depth() > JsonShape.PARSER_DEPTH_LIMIT) {
      throw nestedTooDeep(path, limits);
    }
    if (!shape.type().equals("object")) {
      throw new ValidationException(path + ": must be " + what + ", got " + shape.type());
    }
    if (shape.depth() > limits.maxJsonDepth()) {
      throw nestedTooDeep(path, limits);
    }
  }

  private static void checkToolCall(ToolCall call, String path, Limits limits) {
    if (call.getId().isEmpty()) {
      throw new ValidationException(path + ".id: must not be empty");
    }
    if (call.getName().isEmpty()) {
      throw new ValidationException(path + ".name: must not be empty");
    }
    checkJsonObject(call.getArgumentsJson(), path + ".arguments_json", limits, "a JSON object");
  }

  private static void checkExtra(String extraJson, String path, Limits limits) {
    if (!extraJson.isEmpty()) {
      checkJsonObject(extraJson, path + ".extra_json", limits, "a JSON object");
    }
  }

  private static ValidationException nestedTooDeep(String path, Limits limits) {
    return new ValidationException(
        path + ": JSON nested deeper than the limit of " + limits.maxJsonDepth());
  }

  /** The length of {@code text} in UTF-8, without encoding it. */
  private static long utf8Length(String text) {
    long bytes = 0;
    for (int at = 0; at < text.length(); at++) {
      char unit = text.charAt(at);
      if (unit < 0x80) {
        bytes += 1;
      } else if (unit < 0x800) {
        bytes += 2;
      } else if (Character.isHighSurrogate(unit)
          && at + 1 < text.length()
          && Character.isLowSurrogate(text.charAt(at + 1))) {
        bytes += 4;
        at += 1;
      } else {
        bytes += 3;
      }
    }
    return bytes;
  }
}
