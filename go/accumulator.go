package piproto

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"

	aiv1 "github.com/pi-proto/pi-proto/go/gen/pi/ai/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// StreamProtocolError is an event that does not fit the stream received so far, naming its index
// and the rule it breaks, in the same words as the other runtimes, e.g.
// "event 1 (text_delta) breaks rule 'block-exists': content_index 4 refers to no block (the message has 0)".
type StreamProtocolError struct {
	Message string
}

func (e *StreamProtocolError) Error() string { return e.Message }

// Accumulator applies a stream's events, in order, to the partial message they describe, and
// attaches that message to every event.
//
// It follows the Python runtime rule for rule and message for message, so a partial rebuilt from
// the wire is the partial the sender had (the stream contract in service.proto, rule 4). An event
// that breaks one of the event-sequence rules is refused with a [StreamProtocolError] naming the
// event's index and the rule:
//
//   - event-kind: an event has exactly one kind set.
//   - start-first: a stream opens with start (a call that failed before it started may consist of
//     its terminal event alone); start-once: there is only one start.
//   - next-index: a *_start event opens the next index of the content.
//   - block-exists, block-kind, block-open: a delta or end event refers to a block that exists, of
//     its own kind, and not yet ended; tool-call-id: a tool call ends with the id it started with.
//   - terminal-message: a done or error event carries a message; terminal-reason: done has STOP,
//     LENGTH or TOOL_USE and error has ERROR or ABORTED, equal to the message's stop reason;
//     terminal-agrees: the message has the blocks that were streamed, in number and kind;
//     message-valid: the message passes [CheckAssistant].
//
// The partial is one live message updated in place, as in pi: an event's Partial shows the
// message after that event, until the next event changes it (clone it with proto.Clone to keep
// a snapshot). Deltas are appended without copying the text received so far, so a long answer
// costs linear, not quadratic, time. An Accumulator is not safe for concurrent use.
type Accumulator struct {
	// Partial is the message as rebuilt from the events applied so far.
	Partial *aiv1.AssistantMessage
	// Count is the number of events applied (or refused) so far.
	Count int
	// Limits bound the JSON of the terminal message.
	Limits Limits

	started bool
	blocks  []*openBlock // per block of Partial.Content
}

// openBlock is the state of one block of the partial: whether it is still open, and the text its
// deltas built, which only grows, so the partial's strings can share its bytes.
type openBlock struct {
	open bool
	text strings.Builder
	last string // the string last stored in the block; anything else means the caller replaced it
}

// NewAccumulator returns an Accumulator with [DefaultLimits] and an empty partial.
func NewAccumulator() *Accumulator {
	return NewAccumulatorWithLimits(DefaultLimits)
}

// NewAccumulatorWithLimits returns an Accumulator that checks terminal messages within limits.
func NewAccumulatorWithLimits(limits Limits) *Accumulator {
	return &Accumulator{Partial: &aiv1.AssistantMessage{}, Limits: limits}
}

// Apply applies event to the partial and sets event.Partial; an event that does not fit the
// stream so far changes nothing and returns a *[StreamProtocolError].
func (a *Accumulator) Apply(event *aiv1.ModelEvent) error {
	if err := a.apply(event, true); err != nil {
		return err
	}
	event.Partial = a.Partial
	return nil
}

// Close attaches to a terminal event the message it carries, making it the partial, without the
// rules: for an error event that a receiver builds from its own partial.
func (a *Accumulator) Close(event *aiv1.ModelEvent) {
	if message, err := TerminalMessage(event); err == nil {
		a.Partial = message
	}
	event.Partial = a.Partial
}

// apply applies event to the partial; without check, a terminal event is taken as it is (for
// events that an Accumulator has already accepted).
func (a *Accumulator) apply(event *aiv1.ModelEvent, check bool) error {
	index := a.Count
	a.Count++
	kind := EventKind(event)
	if kind == "" {
		return &StreamProtocolError{fmt.Sprintf("event %d breaks rule 'event-kind': no event kind is set", index)}
	}
	broken := func(rule, format string, args ...any) error {
		detail := fmt.Sprintf(format, args...)
		return &StreamProtocolError{fmt.Sprintf("event %d (%s) breaks rule '%s': %s", index, kind, rule, detail)}
	}
	switch body := event.GetEvent().(type) {
	case *aiv1.ModelEvent_Done:
		return a.finish(broken, kind, body.Done.GetReason(), body.Done.GetMessage(), check)
	case *aiv1.ModelEvent_Error:
		return a.finish(broken, kind, body.Error.GetReason(), body.Error.GetMessage(), check)
	case *aiv1.ModelEvent_Start:
		if a.started || index > 0 {
			rule := "start-first"
			if a.started {
				rule = "start-once"
			}
			return broken(rule, "start must be the first event")
		}
		a.started = true
		header := body.Start.GetHeader()
		if header == nil {
			header = &aiv1.AssistantMessage{}
		}
		a.Partial = shallowCopy(header)
		a.blocks = make([]*openBlock, len(a.Partial.Content))
		for i := range a.blocks {
			a.blocks[i] = &openBlock{}
		}
		return nil
	}
	if !a.started {
		return broken("start-first", "a stream opens with start")
	}
	return a.applyBlock(broken, kind, event)
}

// shallowCopy is a new message holding the fields of message (the same values, not copies of
// them) and a content list of its own. proto.Clone is not used: it loses a negative zero.
func shallowCopy(message *aiv1.AssistantMessage) *aiv1.AssistantMessage {
	copied := &aiv1.AssistantMessage{}
	target := copied.ProtoReflect()
	message.ProtoReflect().Range(func(field protoreflect.FieldDescriptor, value protoreflect.Value) bool {
		target.Set(field, value)
		return true
	})
	target.SetUnknown(message.ProtoReflect().GetUnknown())
	copied.Content = slices.Clone(message.Content)
	return copied
}

// blockOfFamily is the block each family of block events refers to.
var blockOfFamily = map[string]string{"text": "text", "thinking": "thinking", "toolcall": "tool_call"}

type brokenRule func(rule, format string, args ...any) error

func (a *Accumulator) applyBlock(broken brokenRule, kind string, event *aiv1.ModelEvent) error {
	family, step, _ := strings.Cut(kind, "_")
	member := blockOfFamily[family]
	content := a.Partial.Content
	var at uint32
	switch body := event.GetEvent().(type) {
	case *aiv1.ModelEvent_TextStart:
		at = body.TextStart.GetContentIndex()
	case *aiv1.ModelEvent_TextDelta:
		at = body.TextDelta.GetContentIndex()
	case *aiv1.ModelEvent_TextEnd:
		at = body.TextEnd.GetContentIndex()
	case *aiv1.ModelEvent_ThinkingStart:
		at = body.ThinkingStart.GetContentIndex()
	case *aiv1.ModelEvent_ThinkingDelta:
		at = body.ThinkingDelta.GetContentIndex()
	case *aiv1.ModelEvent_ThinkingEnd:
		at = body.ThinkingEnd.GetContentIndex()
	case *aiv1.ModelEvent_ToolcallStart:
		at = body.ToolcallStart.GetContentIndex()
	case *aiv1.ModelEvent_ToolcallDelta:
		at = body.ToolcallDelta.GetContentIndex()
	case *aiv1.ModelEvent_ToolcallEnd:
		at = body.ToolcallEnd.GetContentIndex()
	}
	if step == "start" {
		if int64(at) != int64(len(content)) {
			return broken("next-index", "content_index %d must open the next block, %d", at, len(content))
		}
		a.Partial.Content = append(content, newBlock(event))
		a.blocks = append(a.blocks, &openBlock{open: true})
		return nil
	}
	if int64(at) >= int64(len(content)) {
		return broken("block-exists", "content_index %d refers to no block (the message has %d)", at, len(content))
	}
	block := content[at]
	if memberOf(block) != member {
		return broken("block-kind", "block %d is not a %s block", at, strings.ReplaceAll(member, "_", " "))
	}
	state := a.blocks[at]
	if !state.open {
		return broken("block-open", "block %d has already ended", at)
	}
	switch body := event.GetEvent().(type) {
	case *aiv1.ModelEvent_TextDelta:
		text := block.GetText()
		text.Text = state.append(text.Text, body.TextDelta.GetDelta())
		return nil
	case *aiv1.ModelEvent_ThinkingDelta:
		thinking := block.GetThinking()
		thinking.Thinking = state.append(thinking.Thinking, body.ThinkingDelta.GetDelta())
		return nil
	case *aiv1.ModelEvent_ToolcallDelta:
		call := block.GetToolCall()
		raw := state.append(call.GetRawArguments(), body.ToolcallDelta.GetDelta())
		call.RawArguments = &raw
		return nil
	case *aiv1.ModelEvent_TextEnd:
		if signature := body.TextEnd.TextSignature; signature != nil {
			block.GetText().TextSignature = proto.String(*signature)
		}
	case *aiv1.ModelEvent_ThinkingEnd:
		thinking := block.GetThinking()
		if signature := body.ThinkingEnd.ThinkingSignature; signature != nil {
			thinking.ThinkingSignature = proto.String(*signature)
		}
		if redacted := body.ThinkingEnd.Redacted; redacted != nil {
			thinking.Redacted = proto.Bool(*redacted)
		}
	case *aiv1.ModelEvent_ToolcallEnd:
		call := body.ToolcallEnd.GetToolCall()
		if call == nil {
			call = &aiv1.ToolCall{}
		}
		if started := block.GetToolCall().GetId(); call.GetId() != started {
			return broken("tool-call-id", "tool call %d started as %s but ends as %s", at, pythonRepr(started), pythonRepr(call.GetId()))
		}
		content[at] = &aiv1.AssistantContent{Block: &aiv1.AssistantContent_ToolCall{ToolCall: call}}
	}
	state.open = false
	state.text = strings.Builder{}
	state.last = ""
	return nil
}

// append returns current+delta. While the block holds the string this state built, the delta is
// appended to the builder in place of copying everything received so far.
func (b *openBlock) append(current, delta string) string {
	if current != b.last {
		b.text.Reset()
		b.text.WriteString(current)
	}
	b.text.WriteString(delta)
	b.last = b.text.String()
	return b.last
}

func (a *Accumulator) finish(broken brokenRule, kind string, reason aiv1.StopReason, message *aiv1.AssistantMessage, check bool) error {
	if check {
		if message == nil {
			return broken("terminal-message", "carries no message")
		}
		allowed := []aiv1.StopReason{aiv1.StopReason_STOP_REASON_STOP, aiv1.StopReason_STOP_REASON_LENGTH, aiv1.StopReason_STOP_REASON_TOOL_USE}
		if kind == "error" {
			allowed = []aiv1.StopReason{aiv1.StopReason_STOP_REASON_ERROR, aiv1.StopReason_STOP_REASON_ABORTED}
		}
		names := make([]string, len(allowed))
		permitted := false
		for i, allowedReason := range allowed {
			names[i] = reasonName(allowedReason)
			permitted = permitted || reason == allowedReason
		}
		if !permitted || message.GetStopReason() != reason {
			return broken("terminal-reason", "reason %s with a message stopped by %s; %s takes %s, equal in both",
				reasonName(reason), reasonName(message.GetStopReason()), kind, strings.Join(names, ", "))
		}
		if a.started {
			streamed := members(a.Partial.GetContent())
			final := members(message.GetContent())
			if strings.Join(streamed, ",") != strings.Join(final, ",") {
				return broken("terminal-agrees", "the message has blocks %s, the stream built %s", pythonList(final), pythonList(streamed))
			}
		}
		if err := CheckAssistant(message, "message", a.Limits); err != nil {
			return broken("message-valid", "%s", err.Error())
		}
	}
	if message != nil {
		a.Partial = message
	}
	return nil
}

func newBlock(event *aiv1.ModelEvent) *aiv1.AssistantContent {
	switch body := event.GetEvent().(type) {
	case *aiv1.ModelEvent_TextStart:
		return &aiv1.AssistantContent{Block: &aiv1.AssistantContent_Text{Text: &aiv1.TextContent{}}}
	case *aiv1.ModelEvent_ThinkingStart:
		return &aiv1.AssistantContent{Block: &aiv1.AssistantContent_Thinking{Thinking: &aiv1.ThinkingContent{}}}
	case *aiv1.ModelEvent_ToolcallStart:
		call := &aiv1.ToolCall{
			Id:            body.ToolcallStart.GetId(),
			Name:          body.ToolcallStart.GetName(),
			ArgumentsJson: "{}",
			RawArguments:  proto.String(""),
		}
		return &aiv1.AssistantContent{Block: &aiv1.AssistantContent_ToolCall{ToolCall: call}}
	}
	panic(fmt.Sprintf("%s opens no block", EventKind(event)))
}

// memberOf is the proto name of the block set: "text", "thinking", "tool_call" or "none".
func memberOf(content *aiv1.AssistantContent) string {
	switch content.GetBlock().(type) {
	case *aiv1.AssistantContent_Text:
		return "text"
	case *aiv1.AssistantContent_Thinking:
		return "thinking"
	case *aiv1.AssistantContent_ToolCall:
		return "tool_call"
	}
	return "none"
}

func members(content []*aiv1.AssistantContent) []string {
	names := make([]string, len(content))
	for i, block := range content {
		names[i] = memberOf(block)
	}
	return names
}

// reasonName is a stop reason as the other runtimes name it: STOP, TOOL_USE, ...
func reasonName(reason aiv1.StopReason) string {
	if _, known := aiv1.StopReason_name[int32(reason)]; !known {
		return strconv.Itoa(int(reason))
	}
	return strings.TrimPrefix(reason.String(), "STOP_REASON_")
}

// pythonList is a list of names as Python prints it: ['text', 'tool_call'].
func pythonList(names []string) string {
	quoted := make([]string, len(names))
	for i, name := range names {
		quoted[i] = "'" + name + "'"
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}

// pythonRepr is a string as Python's repr() prints it, so ids in messages read the same in every
// runtime.
func pythonRepr(value string) string {
	quote := '\''
	if strings.ContainsRune(value, '\'') && !strings.ContainsRune(value, '"') {
		quote = '"'
	}
	var out strings.Builder
	out.WriteRune(quote)
	for _, char := range value {
		switch {
		case char == '\\' || char == quote:
			out.WriteRune('\\')
			out.WriteRune(char)
		case char == '\n':
			out.WriteString(`\n`)
		case char == '\r':
			out.WriteString(`\r`)
		case char == '\t':
			out.WriteString(`\t`)
		case char != ' ' && !unicode.IsPrint(char):
			switch {
			case char < 0x100:
				fmt.Fprintf(&out, `\x%02x`, char)
			case char < 0x10000:
				fmt.Fprintf(&out, `\u%04x`, char)
			default:
				fmt.Fprintf(&out, `\U%08x`, char)
			}
		default:
			out.WriteRune(char)
		}
	}
	out.WriteRune(quote)
	return out.String()
}
