package io.github.piproto;

import static io.github.piproto.Fixtures.TEST_TIMEOUT_SECONDS;
import static io.github.piproto.Fixtures.assistantMessage;
import static io.github.piproto.Fixtures.text;
import static io.github.piproto.Fixtures.toolCall;
import static io.github.piproto.Fixtures.userContext;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.github.piproto.ai.v1.AgentContext;
import io.github.piproto.ai.v1.AgentMessage;
import io.github.piproto.ai.v1.AssistantMessage;
import io.github.piproto.ai.v1.StopReason;
import io.github.piproto.ai.v1.StreamRequest;
import io.github.piproto.ai.v1.ToolResultMessage;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Validation as a caller uses it; the corpus pins every rule, these show the API. */
class ValidationTest {
  private static List<String> found(com.google.protobuf.Message message) {
    return Validation.violations(message).stream()
        .map(violation -> violation.fieldPath() + " " + violation.ruleId())
        .toList();
  }

  private static StreamRequest requestWith(AgentMessage... messages) {
    return StreamRequest.newBuilder()
        .setContext(AgentContext.newBuilder().addAllMessages(List.of(messages)))
        .build();
  }

  private static AgentMessage assistant(AssistantMessage message) {
    return AgentMessage.newBuilder().setAssistant(message).build();
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void aValidRequestHasNoViolations() {
    StreamRequest request = StreamRequest.newBuilder().setContext(userContext("hi")).build();
    assertEquals(List.of(), Validation.violations(request));
    Validation.check(request);
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void everyBrokenSchemaRuleIsReportedWithItsPath() {
    AssistantMessage message =
        assistantMessage(StopReason.STOP_REASON_TOOL_USE, text("x"), toolCall("", "", "[1]"));
    StreamRequest request = requestWith(assistant(message), AgentMessage.getDefaultInstance());
    ValidationException error =
        assertThrows(ValidationException.class, () -> Validation.check(request));
    // The JSON text rules (arguments_json holds no object) wait until these hold.
    assertEquals(
        List.of(
            "context.messages[0].assistant.content[1].tool_call.id string.min_len",
            "context.messages[0].assistant.content[1].tool_call.name string.min_len",
            "context.messages[1].role required"),
        error.violations().stream().map(v -> v.fieldPath() + " " + v.ruleId()).sorted().toList());
    assertEquals(List.of("context required"), found(StreamRequest.getDefaultInstance()));
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void jsonTextFieldsAreFoundWhereverTheySit() {
    AssistantMessage message =
        assistantMessage(StopReason.STOP_REASON_TOOL_USE, toolCall("call_1", "read", "[1]"))
            .toBuilder()
            .setExtraJson("{\"a\":NaN}")
            .build();
    assertEquals(
        List.of(
            "context.messages[0].assistant.content[0].tool_call.arguments_json json.object",
            "context.messages[0].assistant.extra_json json.syntax"),
        found(requestWith(assistant(message))).stream().sorted().toList());
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void anUnsetOptionalJsonFieldIsSkippedButAnEmptyOneIsChecked() {
    ToolResultMessage result = ToolResultMessage.newBuilder().setToolCallId("call_1").build();
    AgentMessage unset = AgentMessage.newBuilder().setToolResult(result).build();
    assertEquals(List.of(), found(unset));
    AgentMessage empty =
        AgentMessage.newBuilder().setToolResult(result.toBuilder().setDetailsJson("")).build();
    assertEquals(List.of("tool_result.details_json json.syntax"), found(empty));
    AgentMessage scalar =
        AgentMessage.newBuilder().setToolResult(result.toBuilder().setDetailsJson("42")).build();
    assertEquals(List.of(), found(scalar)); // any JSON value, not only an object
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void jsonTextIsReadAsJsonParseReadsIt() {
    assertEquals(Optional.empty(), rule("{\"a\":1,\"a\":2}")); // the last key wins
    assertEquals(Optional.empty(), rule("{\"a\":\"\\ud800\"}"));
    assertEquals(Optional.empty(), rule("{\"a\":1e-999}")); // underflows to 0
    assertEquals(Optional.of("json.syntax"), rule("\ufeff{}"));
    assertEquals(Optional.of("json.syntax"), rule("{\"a\":Infinity}"));
    assertEquals(Optional.of("json.syntax"), rule("{\"a\":\"x\ty\"}"));
    assertEquals(Optional.of("json.number"), rule("{\"a\":1e999}"));
    assertEquals(Optional.of("json.number"), rule("{\"a\":" + "9".repeat(400) + "}"));
    // 64 deep is allowed, and the shape is checked after the depth.
    assertEquals(Optional.of("json.object"), rule("[".repeat(64) + "]".repeat(64)));
    assertEquals(
        Optional.of("json.depth"), rule("{\"a\":" + "[".repeat(64) + "]".repeat(64) + "}"));
    // 100,000 deep: refused, without a stack overflow.
    assertEquals(Optional.of("json.depth"), rule("[".repeat(100_000) + "]".repeat(100_000), false));
    assertEquals(Optional.of("json.object"), rule("[1]"));
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void extraJsonMustNotHoldAModelledKey() {
    AssistantMessage base = assistantMessage(StopReason.STOP_REASON_STOP, text("x"));
    List<String> broken = List.of("context.messages[0].assistant.extra_json json.extra");
    assertEquals(broken, extra(base, "{\"other\":1,\"model\":\"m\"}"));
    // The last of duplicate keys counts: here the empty array a repeated field may keep.
    assertEquals(List.of(), extra(base, "{\"content\":1,\"content\":[]}"));
    assertEquals(broken, extra(base, "{\"content\":[],\"content\":[1]}"));
    assertEquals(List.of(), extra(base, "{\"deferred\":{},\"unknown\":{\"model\":1}}"));
    // Only one violation per field, and only once the other JSON rules hold.
    assertEquals(broken, extra(base, "{\"api\":\"a\",\"model\":\"m\"}"));
    assertEquals(
        List.of("context.messages[0].assistant.extra_json json.syntax"),
        extra(base, "{\"model\":NaN}"));
  }

  private static List<String> extra(AssistantMessage message, String extraJson) {
    return found(requestWith(assistant(message.toBuilder().setExtraJson(extraJson).build())));
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  @SuppressWarnings("deprecation")
  void theOldJsonTextClassesStillAnswer() {
    AgentMessage empty =
        AgentMessage.newBuilder()
            .setToolResult(
                ToolResultMessage.newBuilder().setToolCallId("call_1").setDetailsJson(""))
            .build();
    assertEquals(JsonText.violations(empty), JsonTextRules.violations(empty));
    assertEquals(
        Optional.of(new StrictJson.Problem("json.object", "must hold a JSON object, got an array")),
        StrictJson.problem("[1]", true));
    assertEquals(JsonText.MAX_DEPTH, StrictJson.MAX_DEPTH);
  }

  private static Optional<String> rule(String text) {
    return rule(text, true);
  }

  private static Optional<String> rule(String text, boolean objectRequired) {
    return JsonText.problem(text, objectRequired).map(JsonText.Problem::ruleId);
  }
}
