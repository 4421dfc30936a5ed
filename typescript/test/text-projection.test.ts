// The seed's text-projection test, and proof that it catches a projection that leaks tool names.

import assert, { AssertionError } from "node:assert/strict";
import { test } from "node:test";
import { create, toBinary } from "@bufbuild/protobuf";
import {
  AgentMessageSchema,
  type AssistantMessage,
  AssistantMessageSchema,
  StopReason,
  SystemMessageSchema,
  ToolResultMessageSchema,
  textOf,
  UserMessageSchema,
} from "../src/index.js";
import { assistantMessage, TEST_TIMEOUT, text, thinking, toolCall } from "./support/messages.js";

function leakyTextOf(message: AssistantMessage): string {
  // The seed's deliberate failure: tool names leak into the projection.
  return message.content
    .map(({ block }) => (block.case === "text" ? block.value.text : block.case === "toolCall" ? block.value.name : ""))
    .join("\n");
}

function checkTextProjection(project: (message: AssistantMessage) => string): void {
  const message = assistantMessage(
    [text("先读取"), toolCall("call_1", "read", { path: "README.md" }), text("再回答")],
    { stopReason: StopReason.TOOL_USE },
  );
  const before = toBinary(AssistantMessageSchema, message);

  assert.equal(project(message), "先读取\n再回答");
  const block = message.content[1]!.block;
  assert.equal(block.case, "toolCall");
  assert.deepEqual(block.value, toolCall("call_1", "read", { path: "README.md" }).block.value);
  assert.deepEqual(toBinary(AssistantMessageSchema, message), before);
}

test("text projection keeps text only and leaves the content untouched", { timeout: TEST_TIMEOUT }, () => {
  checkTextProjection(textOf);
});

test("the text projection test fails when tool names leak", { timeout: TEST_TIMEOUT }, () => {
  assert.throws(
    () => checkTextProjection(leakyTextOf),
    (error) => error instanceof AssertionError && error.message.includes("read"),
  );
});

test("textOf accepts every role and the transcript wrapper", { timeout: TEST_TIMEOUT }, () => {
  const user = create(UserMessageSchema, {
    content: [
      { block: { case: "text", value: { text: "a" } } },
      { block: { case: "image", value: { data: new Uint8Array([0]), mimeType: "image/png" } } },
      { block: { case: "text", value: { text: "b" } } },
    ],
  });
  const result = create(ToolResultMessageSchema, {
    toolCallId: "call_1",
    toolName: "read",
    content: [
      { block: { case: "text", value: { text: "line 1" } } },
      { block: { case: "text", value: { text: "line 2" } } },
    ],
  });
  assert.equal(textOf(user), "a\nb");
  assert.equal(textOf(create(AgentMessageSchema, { role: { case: "toolResult", value: result } })), "line 1\nline 2");
  // A system message's instructions are its text; its sections and tools are not.
  const system = create(SystemMessageSchema, {
    content: [{ text: "You are pi." }, { text: "Be brief." }],
    sections: [{ name: "rules", text: "<rules/>" }],
    toolsAdded: [{ name: "read", parametersJson: "{}" }],
  });
  assert.equal(textOf(system), "You are pi.\nBe brief.");
  assert.equal(
    textOf(create(AgentMessageSchema, { role: { case: "system", value: system } })),
    "You are pi.\nBe brief.",
  );
  assert.equal(textOf(assistantMessage([thinking("hidden")])), "");
  assert.throws(() => textOf(create(AgentMessageSchema)), /AgentMessage has no role set/);
});
