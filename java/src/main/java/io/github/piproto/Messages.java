package io.github.piproto;

import io.github.piproto.ai.v1.AgentMessage;
import io.github.piproto.ai.v1.AssistantContent;
import io.github.piproto.ai.v1.AssistantMessage;
import io.github.piproto.ai.v1.SystemMessage;
import io.github.piproto.ai.v1.TextContent;
import io.github.piproto.ai.v1.ToolResultContent;
import io.github.piproto.ai.v1.ToolResultMessage;
import io.github.piproto.ai.v1.UserContent;
import io.github.piproto.ai.v1.UserMessage;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The text projection of messages: their text blocks joined with newlines, in order, other blocks
 * skipped. A lossy view for display, search and summaries; messages are immutable, so the message
 * itself is never changed.
 */
public final class Messages {
  private Messages() {}

  /** The content's text blocks; sections and tools are not text of the message. */
  public static String textOf(SystemMessage message) {
    return join(message.getContentList().stream());
  }

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

  /** The text of the message inside; "" for a custom message, which is kept verbatim. */
  public static String textOf(AgentMessage message) {
    return switch (message.getRoleCase()) {
      case SYSTEM -> textOf(message.getSystem());
      case USER -> textOf(message.getUser());
      case ASSISTANT -> textOf(message.getAssistant());
      case TOOL_RESULT -> textOf(message.getToolResult());
      case CUSTOM, ROLE_NOT_SET -> "";
    };
  }

  private static String join(Stream<TextContent> texts) {
    return texts.map(TextContent::getText).collect(Collectors.joining("\n"));
  }
}
