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
// It takes a *SystemMessage, *UserMessage, *AssistantMessage, *ToolResultMessage, or an
// *AgentMessage or *TranscriptEntry wrapping one; a custom message or session entry (kept verbatim, not modelled)
// has no text blocks, and neither has anything else, nor a wrapper with nothing set ([Unwrap]
// tells that one apart with [ErrNoRole] or [ErrNoEntry]).
func TextOf(message proto.Message) string {
	inner, err := Unwrap(message)
	if err != nil {
		return ""
	}
	var texts []string
	switch inner := inner.(type) {
	case *aiv1.SystemMessage:
		// A system message's content holds text blocks only; sections and tools are not text.
		for _, text := range inner.GetContent() {
			texts = append(texts, text.GetText())
		}
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

// ErrNoEntry is what [Unwrap] returns for a TranscriptEntry whose entry oneof is not set.
var ErrNoEntry = errors.New("TranscriptEntry has no entry set")

// Unwrap is the role-specific message inside an *AgentMessage or a *TranscriptEntry (or the
// message itself when it is neither): a *SystemMessage, *UserMessage, *AssistantMessage,
// *ToolResultMessage, *CustomMessage, or, for a transcript entry that holds no message, its
// *SessionEntry, or the *TranscriptEntry itself for an unparsed line (a line of a session file
// that is not one JSON entry: nothing inside it is a message).
func Unwrap(message proto.Message) (proto.Message, error) {
	if record, ok := message.(*aiv1.TranscriptEntry); ok {
		switch entry := record.GetEntry().(type) {
		case *aiv1.TranscriptEntry_Message:
			message = entry.Message
		case *aiv1.TranscriptEntry_SessionEntry:
			return entry.SessionEntry, nil
		case *aiv1.TranscriptEntry_UnparsedLine:
			return record, nil
		default:
			return nil, ErrNoEntry
		}
	}
	entry, ok := message.(*aiv1.AgentMessage)
	if !ok {
		return message, nil
	}
	switch role := entry.GetRole().(type) {
	case *aiv1.AgentMessage_System:
		return role.System, nil
	case *aiv1.AgentMessage_User:
		return role.User, nil
	case *aiv1.AgentMessage_Assistant:
		return role.Assistant, nil
	case *aiv1.AgentMessage_ToolResult:
		return role.ToolResult, nil
	case *aiv1.AgentMessage_Custom:
		return role.Custom, nil
	}
	return nil, ErrNoRole
}
