// The seed's text-projection test, and proof that it catches a projection that leaks tool names.

package piproto_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	aiv1 "github.com/pi-proto/pi-proto/go/gen/pi/ai/v1"
	"github.com/pi-proto/pi-proto/go/piproto"
	"google.golang.org/protobuf/proto"
)

// leakyTextOf is the seed's deliberate failure: tool names leak into the projection.
func leakyTextOf(message *aiv1.AssistantMessage) string {
	var parts []string
	for _, content := range message.Content {
		switch block := content.Block.(type) {
		case *aiv1.AssistantContent_Text:
			parts = append(parts, block.Text.Text)
		case *aiv1.AssistantContent_ToolCall:
			parts = append(parts, block.ToolCall.Name)
		}
	}
	return strings.Join(parts, "\n")
}

// checkTextProjection is the seed's test, returning what fails instead of failing.
func checkTextProjection(project func(*aiv1.AssistantMessage) string) error {
	message := assistantMessage(
		[]*aiv1.AssistantContent{text("先读取"), toolCall("call_1", "read", map[string]any{"path": "README.md"}), text("再回答")},
		stoppedBy(aiv1.StopReason_STOP_REASON_TOOL_USE),
	)
	before, _ := proto.Marshal(message)

	if got := project(message); got != "先读取\n再回答" {
		return fmt.Errorf("projection %q, want %q", got, "先读取\n再回答")
	}
	if !proto.Equal(message.Content[1], toolCall("call_1", "read", map[string]any{"path": "README.md"})) {
		return errors.New("the tool call changed")
	}
	if after, _ := proto.Marshal(message); string(after) != string(before) {
		return errors.New("the message changed")
	}
	return nil
}

func TestTextProjectionKeepsTextOnlyAndLeavesTheContentUntouched(t *testing.T) {
	bound(t)
	if err := checkTextProjection(func(message *aiv1.AssistantMessage) string { return piproto.TextOf(message) }); err != nil {
		t.Fatal(err)
	}
}

func TestTheTextProjectionTestFailsWhenToolNamesLeak(t *testing.T) {
	bound(t)
	err := checkTextProjection(leakyTextOf)
	if err == nil || !strings.Contains(err.Error(), "read") {
		t.Fatalf("the leaky projection passed: %v", err)
	}
}

func TestTextOfAcceptsEveryRoleAndTheWrappersOfAMessage(t *testing.T) {
	bound(t)
	user := &aiv1.UserMessage{Content: []*aiv1.UserContent{
		{Block: &aiv1.UserContent_Text{Text: &aiv1.TextContent{Text: "a"}}},
		{Block: &aiv1.UserContent_Image{Image: &aiv1.ImageContent{Data: []byte{0}, MimeType: "image/png"}}},
		{Block: &aiv1.UserContent_Text{Text: &aiv1.TextContent{Text: "b"}}},
	}}
	result := &aiv1.ToolResultMessage{ToolCallId: "call_1", ToolName: proto.String("read"), Content: []*aiv1.ToolResultContent{
		{Block: &aiv1.ToolResultContent_Text{Text: &aiv1.TextContent{Text: "line 1"}}},
		{Block: &aiv1.ToolResultContent_Text{Text: &aiv1.TextContent{Text: "line 2"}}},
	}}
	system := &aiv1.SystemMessage{
		Content:    []*aiv1.TextContent{{Text: "You are pi."}, {Text: "先读取文件。"}},
		Sections:   []*aiv1.SystemSection{{Name: "skills", Text: proto.String("- read")}},
		ToolsAdded: []*aiv1.Tool{{Name: "read"}},
	}
	for _, case_ := range []struct {
		message proto.Message
		want    string
	}{
		{user, "a\nb"},
		{system, "You are pi.\n先读取文件。"},
		{&aiv1.AgentMessage{Role: &aiv1.AgentMessage_System{System: system}}, "You are pi.\n先读取文件。"},
		{&aiv1.AgentMessage{Role: &aiv1.AgentMessage_System{System: &aiv1.SystemMessage{}}}, ""},
		{&aiv1.AgentMessage{Role: &aiv1.AgentMessage_User{User: user}}, "a\nb"},
		{&aiv1.AgentMessage{Role: &aiv1.AgentMessage_ToolResult{ToolResult: result}}, "line 1\nline 2"},
		{&aiv1.AgentMessage{Role: &aiv1.AgentMessage_Assistant{Assistant: readmeTurn()}}, "我先读取项目说明。"},
		{assistantMessage([]*aiv1.AssistantContent{thinking("hidden", nil, nil)}), ""},
		{&aiv1.AgentMessage{Role: &aiv1.AgentMessage_Custom{Custom: &aiv1.CustomMessage{Role: "bashExecution", FieldsJson: "{}"}}}, ""},
		{&aiv1.AgentMessage{}, ""},
		{&aiv1.TranscriptEntry{Entry: &aiv1.TranscriptEntry_Message{Message: &aiv1.AgentMessage{Role: &aiv1.AgentMessage_User{User: user}}}}, "a\nb"},
		{&aiv1.TranscriptEntry{Entry: &aiv1.TranscriptEntry_SessionEntry{SessionEntry: &aiv1.SessionEntry{Type: "model_change", FieldsJson: "{}"}}}, ""},
		{&aiv1.TranscriptEntry{}, ""},
	} {
		if got := piproto.TextOf(case_.message); got != case_.want {
			t.Errorf("TextOf(%v) = %q, want %q", case_.message, got, case_.want)
		}
	}
	if _, err := piproto.Unwrap(&aiv1.AgentMessage{}); !errors.Is(err, piproto.ErrNoRole) || err.Error() != "AgentMessage has no role set" {
		t.Fatalf("Unwrap: %v", err)
	}
	if _, err := piproto.Unwrap(&aiv1.TranscriptEntry{}); !errors.Is(err, piproto.ErrNoEntry) {
		t.Fatalf("Unwrap of an empty transcript entry: %v", err)
	}
	session := &aiv1.SessionEntry{Type: "model_change", FieldsJson: "{}"}
	if inner, err := piproto.Unwrap(&aiv1.TranscriptEntry{Entry: &aiv1.TranscriptEntry_SessionEntry{SessionEntry: session}}); inner != session || err != nil {
		t.Fatalf("Unwrap of a session entry: %v, %v", inner, err)
	}
	// A line of a session file that is not one JSON entry holds no message: itself, without text.
	unparsed := &aiv1.TranscriptEntry{Entry: &aiv1.TranscriptEntry_UnparsedLine{UnparsedLine: "}{"}}
	if inner, err := piproto.Unwrap(unparsed); inner != unparsed || err != nil || piproto.TextOf(unparsed) != "" {
		t.Fatalf("Unwrap of an unparsed line: %v, %v", inner, err)
	}
}
