package piproto

import (
	"errors"
	"strings"

	aiv1 "github.com/pi-proto/pi-proto/go/gen/pi/ai/v1"
	"google.golang.org/protobuf/proto"
)

// TextOf is the message's text blocks joined with newlines, in order; other blocks are skipped.
//
// A lossy projection for display, search and summaries: the message itself is left untouched.
// It takes a *UserMessage, *AssistantMessage, *ToolResultMessage or an *AgentMessage wrapping
// one; a custom message or session entry (kept verbatim, not modelled) has no text blocks, and
// neither has anything else, nor an AgentMessage with no role set ([Unwrap] tells that one
// apart with [ErrNoRole]).
func TextOf(message proto.Message) string {
	inner, err := Unwrap(message)
	if err != nil {
		return ""
	}
	var texts []string
	switch inner := inner.(type) {
	case *aiv1.UserMessage:
		for _, content := range inner.GetContent() {
			if text, ok := content.GetBlock().(*aiv1.UserContent_Text); ok {
				texts = append(texts, text.Text.GetText())
			}
		}
	case *aiv1.AssistantMessage:
		for _, content := range inner.GetContent() {
			if text, ok := content.GetBlock().(*aiv1.AssistantContent_Text); ok {
				texts = append(texts, text.Text.GetText())
			}
		}
	case *aiv1.ToolResultMessage:
		for _, content := range inner.GetContent() {
			if text, ok := content.GetBlock().(*aiv1.ToolResultContent_Text); ok {
				texts = append(texts, text.Text.GetText())
			}
		}
	}
	return strings.Join(texts, "\n")
}

// ErrNoRole is what [Unwrap] returns for an AgentMessage whose role oneof is not set.
var ErrNoRole = errors.New("AgentMessage has no role set")

// Unwrap is the role-specific message inside a transcript entry (or the message itself when it
// is not an *AgentMessage): a *UserMessage, *AssistantMessage, *ToolResultMessage,
// *CustomMessage or *SessionEntry.
func Unwrap(message proto.Message) (proto.Message, error) {
	entry, ok := message.(*aiv1.AgentMessage)
	if !ok {
		return message, nil
	}
	switch role := entry.GetRole().(type) {
	case *aiv1.AgentMessage_User:
		return role.User, nil
	case *aiv1.AgentMessage_Assistant:
		return role.Assistant, nil
	case *aiv1.AgentMessage_ToolResult:
		return role.ToolResult, nil
	case *aiv1.AgentMessage_Custom:
		return role.Custom, nil
	case *aiv1.AgentMessage_SessionEntry:
		return role.SessionEntry, nil
	}
	return nil, ErrNoRole
}
