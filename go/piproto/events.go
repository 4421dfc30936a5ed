package piproto

import (
	"errors"

	aiv1 "github.com/pi-proto/pi-proto/go/gen/pi/ai/v1"
)

var modelEventOneof = (&aiv1.ModelEvent{}).ProtoReflect().Descriptor().Oneofs().ByName("event")

// EventKind is the event's kind: pi's event type name, the proto field name of the oneof member
// set ("start", "text_delta", "toolcall_end", ..., "done", "error"); "" when none is set.
func EventKind(event *aiv1.ModelEvent) string {
	if event == nil {
		return ""
	}
	field := event.ProtoReflect().WhichOneof(modelEventOneof)
	if field == nil {
		return ""
	}
	return string(field.Name())
}

// IsTerminal reports whether an event ends its stream: done or error.
func IsTerminal(event *aiv1.ModelEvent) bool {
	switch event.GetEvent().(type) {
	case *aiv1.ModelEvent_Done, *aiv1.ModelEvent_Error:
		return true
	}
	return false
}

// ErrNotTerminal is what [TerminalMessage] returns for an event that carries no final message.
var ErrNotTerminal = errors.New("only a done or error event carrying a message produces the final message")

// TerminalMessage is the final message a terminal event carries; other events cannot produce a
// result and give [ErrNotTerminal].
func TerminalMessage(event *aiv1.ModelEvent) (*aiv1.AssistantMessage, error) {
	var message *aiv1.AssistantMessage
	switch body := event.GetEvent().(type) {
	case *aiv1.ModelEvent_Done:
		message = body.Done.GetMessage()
	case *aiv1.ModelEvent_Error:
		message = body.Error.GetMessage()
	}
	if message == nil {
		return nil, ErrNotTerminal
	}
	return message, nil
}
