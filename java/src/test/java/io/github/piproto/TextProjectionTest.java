package io.github.piproto;

import static io.github.piproto.Fixtures.TEST_TIMEOUT_SECONDS;
import static io.github.piproto.Fixtures.assistantMessage;
import static io.github.piproto.Fixtures.text;
import static io.github.piproto.Fixtures.toolCall;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.github.piproto.ai.v1.AgentMessage;
import io.github.piproto.ai.v1.AssistantContent;
import io.github.piproto.ai.v1.AssistantMessage;
import io.github.piproto.ai.v1.CustomMessage;
import io.github.piproto.ai.v1.ImageContent;
import io.github.piproto.ai.v1.StopReason;
import io.github.piproto.ai.v1.SystemMessage;
import io.github.piproto.ai.v1.SystemSection;
import io.github.piproto.ai.v1.TextContent;
import io.github.piproto.ai.v1.Tool;
import io.github.piproto.ai.v1.UserContent;
import io.github.piproto.ai.v1.UserMessage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

class TextProjectionTest {
  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void textOfJoinsTheTextBlocksAndKeepsTheToolCall() {
    AssistantContent read = toolCall("call_1", "read", "{\"path\":\"README.md\"}");
    AssistantMessage message =
        assistantMessage(StopReason.STOP_REASON_TOOL_USE, text("先读取"), read, text("再回答"));

    assertEquals("先读取\n再回答", Messages.textOf(message));

    assertEquals(3, message.getContentCount());
    assertEquals(read, message.getContent(1));
    assertEquals("call_1", message.getContent(1).getToolCall().getId());
    assertEquals("read", message.getContent(1).getToolCall().getName());
    assertEquals(
        "{\"path\":\"README.md\"}", message.getContent(1).getToolCall().getArgumentsJson());
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void textOfSeesThroughAgentMessagesAndSkipsImages() {
    UserMessage user =
        UserMessage.newBuilder()
            .addContent(UserContent.newBuilder().setText(TextContent.newBuilder().setText("看这张图")))
            .addContent(
                UserContent.newBuilder()
                    .setImage(ImageContent.newBuilder().setMimeType("image/png")))
            .addContent(UserContent.newBuilder().setText(TextContent.newBuilder().setText("")))
            .build();
    assertEquals("看这张图\n", Messages.textOf(AgentMessage.newBuilder().setUser(user).build()));

    CustomMessage custom =
        CustomMessage.newBuilder().setRole("bashExecution").setFieldsJson("{}").build();
    assertEquals("", Messages.textOf(AgentMessage.newBuilder().setCustom(custom).build()));
    assertEquals("", Messages.textOf(assistantMessage(StopReason.STOP_REASON_STOP)));
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void textOfASystemMessageIsItsContentWithoutSectionsOrTools() {
    SystemMessage system =
        SystemMessage.newBuilder()
            .addContent(TextContent.newBuilder().setText("You are pi."))
            .addContent(TextContent.newBuilder().setText("先读取文件。"))
            .addSections(SystemSection.newBuilder().setName("skills").setText("- read"))
            .addToolsAdded(Tool.newBuilder().setName("read"))
            .build();
    assertEquals("You are pi.\n先读取文件。", Messages.textOf(system));
    assertEquals(
        "You are pi.\n先读取文件。",
        Messages.textOf(AgentMessage.newBuilder().setSystem(system).build()));
    assertEquals(
        "",
        Messages.textOf(
            AgentMessage.newBuilder().setSystem(SystemMessage.getDefaultInstance()).build()));
  }
}
