package pi.proto;

import java.util.stream.Collectors;
import java.util.stream.Stream;
import pi.ai.v1.Content.AssistantContent;
import pi.ai.v1.Content.TextContent;
import pi.ai.v1.Content.ToolResultContent;
import pi.ai.v1.Content.UserContent;
import pi.ai.v1.Message.AgentMessage;
import pi.ai.v1.Message.AssistantMessage;
import pi.ai.v1.Message.ToolResultMessage;
import pi.ai.v1.Message.UserMessage;

/**
 * The text projection of messages: their text blocks joined with newlines, in order, other blocks
 * skipped. A lossy view for display, search and summaries; messages are immutable, so the message
 * itself is never changed.
 */
public final class Messages {
  private Messages() {}

  public static String textOf(AssistantMessage message) {
    return join(
        message.getContentList().stream()
            .filter(AssistantContent::hasText)
            .map(AssistantContent::getText));
  }

  public static String textOf(UserMessage message) {
    return join(
        message.getContentList().stream().filter(UserContent::hasText).map(UserContent::getText));
  }

  public static String textOf(ToolResultMessage message) {
    return join(
        message.getContentList().stream()
            .filter(ToolResultContent::hasText)
            .map(ToolResultContent::getText));
  }

  /** The text of the message inside; "" for custom messages and session entries, kept verbatim. */
  public static String textOf(AgentMessage message) {
    return switch (message.getRoleCase()) {
      case USER -> textOf(message.getUser());
      case ASSISTANT -> textOf(message.getAssistant());
      case TOOL_RESULT -> textOf(message.getToolResult());
      default -> "";
    };
  }

  private static String join(Stream<TextContent> texts) {
    return texts.map(TextContent::getText).collect(Collectors.joining("\n"));
  }
}
