package piproto

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	aiv1 "github.com/pi-proto/pi-proto/go/gen/pi/ai/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// StreamProtocolError is an event that does not fit the stream received so far: the event's
// index, the rule it breaks, and why.
type StreamProtocolError struct {
	// EventIndex counts from 0 at the first event of the stream; for "terminal-missing" it is the
	// number of events received.
	EventIndex int
	// Rule is the rule broken (the rules are the comments of StreamRule in event.proto).
	Rule aiv1.StreamRule
	// RuleID is the rule's text id, StreamRuleID(Rule), e.g. "block-exists".
	RuleID string
	// Detail says what is wrong, in words.
	Detail string
	// Violations lists what a terminal event breaks, for "terminal-valid", with paths from the
	// event (e.g. "done.message.content[0].tool_call.id"); empty for every other rule.
	Violations []Violation
}

func (e *StreamProtocolError) Error() string {
	return fmt.Sprintf("event %d breaks rule '%s': %s", e.EventIndex, e.RuleID, e.Detail)
}

// newStreamProtocolError is the error for rule broken at index, with its text id filled in.
func newStreamProtocolError(index int, rule aiv1.StreamRule, detail string) *StreamProtocolError {
	return &StreamProtocolError{EventIndex: index, Rule: rule, RuleID: StreamRuleID(rule), Detail: detail}
}

// StreamRuleID is a stream rule's text id, the id the corpus and error messages use: the value's
// name without "STREAM_RULE_", in lower case, with "-" for "_" (STREAM_RULE_BLOCK_OPEN is
// "block-open").
func StreamRuleID(rule aiv1.StreamRule) string {
	name := strings.TrimPrefix(rule.String(), "STREAM_RULE_")
	return strings.ReplaceAll(strings.ToLower(name), "_", "-")
}

// DefaultMaxMessageBytes is the most UTF-8 a receiver accumulates from block events unless told
// otherwise: 64 MiB.
const DefaultMaxMessageBytes = 64 << 20

// Accumulator applies a stream's events, in order, to the partial message they describe, and
// attaches that message to every event.
//
// Senders and receivers in every runtime rebuild the partial the same way, so a partial rebuilt
// from the wire is the partial the sender had (the stream contract in service.proto, rule 4). An
// event that breaks one of the stream rules is refused with a *[StreamProtocolError] naming the
// event's index and the rule; the rules are those of the StreamRule enum in
// proto/pi/ai/v1/event.proto. A terminal event's content_sha256, when set, must be the
// [ContentSHA256] of the content the block events built (rule "terminal-digest"); rule
// "sequence" is checked before, by whoever reads the wire, with a [Numbering].
//
// While a tool call streams, its raw_arguments hold the argument text so far and its
// arguments_json that text completed into a JSON object (see ToolCallDeltaEvent in event.proto:
// a cut string is closed, a cut number or literal finished, an unfinished member dropped, open
// containers closed; "{}" when the text cannot become an object). The completion is built when
// asked for, by [Accumulator.Partial]: each delta leaves arguments_json unset, because a Go
// string cannot grow in place and building it at every delta would copy the whole text each
// time. The text is read incrementally, so completing a call streamed in many small deltas costs
// linear time however often it is asked. A non-terminal event that carries usage sets the
// partial's usage, after the event is applied.
//
// The partial is one live message updated in place, as in pi: an event's Partial is that
// message, showing it after that event until the next event changes it (clone it with
// proto.Clone to keep a snapshot). Deltas are appended without copying the text received so far,
// so a long answer costs linear, not quadratic, time. An Accumulator is not safe for concurrent
// use.
type Accumulator struct {
	// Count is the number of events applied (or refused) so far.
	Count int
	// MaxMessageBytes is the most UTF-8 the block events may bring (rule size-limit); 0 means
	// DefaultMaxMessageBytes.
	MaxMessageBytes int64

	partial  *aiv1.AssistantMessage
	received int64 // bytes of UTF-8 counted toward the limit so far
	started  bool
	blocks   []*openBlock // per block of partial.Content
}

// openBlock is the state of one block of the partial: whether it is still open, and the text its
// deltas built, which only grows, so the partial's strings can share its bytes.
type openBlock struct {
	open bool
	text strings.Builder
	last string // the string last stored in the block; anything else means the caller replaced it
	// For a tool call: the completion of its argument text into arguments_json, read as it grows.
	arguments *partialJSON
	read      string // the text arguments has read
	counted   int64  // for a tool call: the bytes its start and deltas counted toward the limit
}

// NewAccumulator returns an Accumulator with an empty partial and the default size limit.
func NewAccumulator() *Accumulator {
	return &Accumulator{partial: &aiv1.AssistantMessage{}}
}

// Partial is the message as rebuilt from the events applied so far, with the arguments_json of
// every tool call still streaming completed from its text.
func (a *Accumulator) Partial() *aiv1.AssistantMessage {
	for at, state := range a.blocks {
		if call := a.partial.GetContent()[at].GetToolCall(); call != nil && state.open {
			call.ArgumentsJson = proto.String(state.complete(call.GetRawArguments()))
		}
	}
	return a.partial
}

// Apply applies event to the partial and sets event.Partial; an event that does not fit the
// stream so far changes nothing and returns a *[StreamProtocolError].
func (a *Accumulator) Apply(event *aiv1.ModelEvent) error {
	if err := a.apply(event, true); err != nil {
		return err
	}
	event.Partial = a.partial
	return nil
}

// Close attaches to a terminal event the message it carries, making it the partial, without the
// rules: for an error event that a receiver builds from its own partial.
func (a *Accumulator) Close(event *aiv1.ModelEvent) {
	if message, err := TerminalMessage(event); err == nil {
		a.end(message)
	}
	event.Partial = a.partial
}

// apply applies event to the partial; without check, the size limit and the terminal rules
// are left out (for events that an Accumulator has already accepted).
func (a *Accumulator) apply(event *aiv1.ModelEvent, check bool) error {
	if err := a.applyEvent(event, check); err != nil {
		return err
	}
	if usage := event.GetUsage(); usage != nil && !IsTerminal(event) {
		a.partial.Usage = usage // the sender's usage changed with this event
	}
	return nil
}

func (a *Accumulator) applyEvent(event *aiv1.ModelEvent, check bool) error {
	index := a.Count
	a.Count++
	kind := EventKind(event)
	if kind == "" {
		return newStreamProtocolError(index, aiv1.StreamRule_STREAM_RULE_EVENT_KIND, "no event kind is set")
	}
	broken := func(rule aiv1.StreamRule, format string, args ...any) *StreamProtocolError {
		return newStreamProtocolError(index, rule, kind+": "+fmt.Sprintf(format, args...))
	}
	switch body := event.GetEvent().(type) {
	case *aiv1.ModelEvent_Done:
		return a.finish(broken, event, body.Done.GetMessage(), check)
	case *aiv1.ModelEvent_Error:
		return a.finish(broken, event, body.Error.GetMessage(), check)
	case *aiv1.ModelEvent_Start:
		if a.started {
			return broken(aiv1.StreamRule_STREAM_RULE_START_ONCE, "a stream has one start")
		}
		if index > 0 {
			return broken(aiv1.StreamRule_STREAM_RULE_START_FIRST, "start must be the first event")
		}
		a.started = true
		header := body.Start.GetHeader()
		if header == nil {
			header = &aiv1.AssistantMessage{}
		}
		a.partial = shallowCopy(header)
		a.blocks = make([]*openBlock, len(a.partial.Content))
		for i := range a.blocks {
			a.blocks[i] = &openBlock{}
		}
		return nil
	}
	if !a.started {
		return broken(aiv1.StreamRule_STREAM_RULE_START_FIRST, "a stream opens with start")
	}
	return a.applyBlock(broken, kind, event, check)
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

type brokenRule func(rule aiv1.StreamRule, format string, args ...any) *StreamProtocolError

func (a *Accumulator) applyBlock(broken brokenRule, kind string, event *aiv1.ModelEvent, check bool) error {
	family, step, _ := strings.Cut(kind, "_")
	member := blockOfFamily[family]
	content := a.partial.Content
	at := contentIndex(event)
	if step == "start" {
		if int64(at) != int64(len(content)) {
			return broken(aiv1.StreamRule_STREAM_RULE_NEXT_INDEX, "content_index %d, where the next block is %d", at, len(content))
		}
		var size int64
		if start := event.GetToolcallStart(); start != nil {
			size = int64(len(start.GetId()) + len(start.GetName()))
		}
		if err := a.count(broken, check, size); err != nil {
			return err
		}
		a.partial.Content = append(a.partial.Content, newBlock(event))
		a.blocks = append(a.blocks, &openBlock{open: true, counted: size})
		return nil
	}
	if int64(at) >= int64(len(content)) {
		return broken(aiv1.StreamRule_STREAM_RULE_BLOCK_EXISTS, "content_index %d, but the message has %d blocks", at, len(content))
	}
	block := content[at]
	if memberOf(block) != member {
		return broken(aiv1.StreamRule_STREAM_RULE_BLOCK_KIND, "block %d is a %s block, not a %s block", at, memberOf(block), member)
	}
	state := a.blocks[at]
	if !state.open {
		return broken(aiv1.StreamRule_STREAM_RULE_BLOCK_OPEN, "block %d has ended", at)
	}
	if step == "delta" {
		delta := deltaOf(event)
		if err := a.count(broken, check, int64(len(delta))); err != nil {
			return err
		}
		state.counted += int64(len(delta))
		switch block := block.GetBlock().(type) {
		case *aiv1.AssistantContent_Text:
			block.Text.Text = state.append(block.Text.Text, delta)
		case *aiv1.AssistantContent_Thinking:
			block.Thinking.Thinking = state.append(block.Thinking.Thinking, delta)
		case *aiv1.AssistantContent_ToolCall:
			raw := state.append(block.ToolCall.GetRawArguments(), delta)
			block.ToolCall.RawArguments = &raw
			block.ToolCall.ArgumentsJson = nil // completed when asked for, by Partial
		}
		return nil
	}
	switch body := event.GetEvent().(type) {
	case *aiv1.ModelEvent_TextEnd:
		signature := body.TextEnd.TextSignature
		if err := a.count(broken, check, int64(len(body.TextEnd.GetTextSignature()))); err != nil {
			return err
		}
		if signature != nil {
			block.GetText().TextSignature = proto.String(*signature)
		}
	case *aiv1.ModelEvent_ThinkingEnd:
		thinking := block.GetThinking()
		signature := body.ThinkingEnd.ThinkingSignature
		if err := a.count(broken, check, int64(len(body.ThinkingEnd.GetThinkingSignature()))); err != nil {
			return err
		}
		if signature != nil {
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
			return broken(aiv1.StreamRule_STREAM_RULE_TOOL_CALL_ID, "tool call %d started with id %q and ends with id %q", at, started, call.GetId())
		}
		// The call replaces the streamed one: only what it holds beyond that counts again.
		if err := a.count(broken, check, max(0, callSize(call)-state.counted)); err != nil {
			return err
		}
		content[at] = &aiv1.AssistantContent{Block: &aiv1.AssistantContent_ToolCall{ToolCall: call}}
	}
	state.open = false
	state.text = strings.Builder{}
	state.last = ""
	state.arguments = nil
	state.read = ""
	return nil
}

// count counts size more bytes toward the limit, or refuses the event (rule size-limit) and counts
// nothing; without check, it counts nothing.
func (a *Accumulator) count(broken brokenRule, check bool, size int64) error {
	if !check {
		return nil
	}
	if limit := a.limit(); a.received+size > limit {
		return broken(aiv1.StreamRule_STREAM_RULE_SIZE_LIMIT, "the block events add up to %d bytes, more than the limit of %d", a.received+size, limit)
	}
	a.received += size
	return nil
}

// callSize is the bytes a tool call holds: the UTF-8 of its strings, and any fields the schema
// does not know.
func callSize(call *aiv1.ToolCall) int64 {
	size := len(call.GetId()) + len(call.GetName()) + len(call.GetArgumentsJson()) + len(call.GetRawArguments()) +
		len(call.GetThoughtSignature()) + len(call.GetExtraJson()) + len(call.ProtoReflect().GetUnknown())
	return int64(size)
}

func (a *Accumulator) limit() int64 {
	if a.MaxMessageBytes > 0 {
		return a.MaxMessageBytes
	}
	return DefaultMaxMessageBytes
}

// contentIndex is the content_index of a block event.
func contentIndex(event *aiv1.ModelEvent) uint32 {
	switch body := event.GetEvent().(type) {
	case *aiv1.ModelEvent_TextStart:
		return body.TextStart.GetContentIndex()
	case *aiv1.ModelEvent_TextDelta:
		return body.TextDelta.GetContentIndex()
	case *aiv1.ModelEvent_TextEnd:
		return body.TextEnd.GetContentIndex()
	case *aiv1.ModelEvent_ThinkingStart:
		return body.ThinkingStart.GetContentIndex()
	case *aiv1.ModelEvent_ThinkingDelta:
		return body.ThinkingDelta.GetContentIndex()
	case *aiv1.ModelEvent_ThinkingEnd:
		return body.ThinkingEnd.GetContentIndex()
	case *aiv1.ModelEvent_ToolcallStart:
		return body.ToolcallStart.GetContentIndex()
	case *aiv1.ModelEvent_ToolcallDelta:
		return body.ToolcallDelta.GetContentIndex()
	case *aiv1.ModelEvent_ToolcallEnd:
		return body.ToolcallEnd.GetContentIndex()
	}
	return 0
}

// deltaOf is the text a delta event appends.
func deltaOf(event *aiv1.ModelEvent) string {
	switch body := event.GetEvent().(type) {
	case *aiv1.ModelEvent_TextDelta:
		return body.TextDelta.GetDelta()
	case *aiv1.ModelEvent_ThinkingDelta:
		return body.ThinkingDelta.GetDelta()
	case *aiv1.ModelEvent_ToolcallDelta:
		return body.ToolcallDelta.GetDelta()
	}
	return ""
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

// complete is the completion of a tool call's argument text into arguments_json, reading only
// what was appended since it was last asked for, unless the text is another one.
func (b *openBlock) complete(text string) string {
	// text shares the bytes of what was read while the deltas only grow it, so this compares
	// no more than their lengths.
	if b.arguments == nil || !strings.HasPrefix(text, b.read) {
		b.arguments = &partialJSON{} // read it from its start
	}
	b.read = text
	return b.arguments.update(text)
}

// finish checks a terminal event and makes its message the partial.
func (a *Accumulator) finish(broken brokenRule, event *aiv1.ModelEvent, message *aiv1.AssistantMessage, check bool) error {
	if check {
		// The event as a sender sends it: a partial is never checked.
		if found := Violations(&aiv1.ModelEvent{Event: event.GetEvent()}); len(found) > 0 {
			err := broken(aiv1.StreamRule_STREAM_RULE_TERMINAL_VALID, "%s", (&ValidationError{Violations: found}).Error())
			err.Violations = found
			return err
		}
		if a.started {
			streamed, final := members(a.partial.GetContent()), members(message.GetContent())
			if !slices.Equal(streamed, final) {
				return broken(aiv1.StreamRule_STREAM_RULE_TERMINAL_AGREES, "the message has the blocks %v, the stream built %v", final, streamed)
			}
		}
		if err := a.checkDigest(broken, event); err != nil {
			return err
		}
	}
	if message != nil {
		a.end(message)
	}
	return nil
}

// checkDigest compares a terminal event's content_sha256, when it carries one, with the digest
// of the content the block events built: the partial as it stands, its streaming tool calls
// completed, before the event's message replaces it. A mismatch means an event was lost,
// repeated or changed on the way.
func (a *Accumulator) checkDigest(broken brokenRule, event *aiv1.ModelEvent) error {
	want := event.GetDone().GetContentSha256()
	if event.GetError() != nil {
		want = event.GetError().GetContentSha256()
	}
	if len(want) == 0 {
		return nil
	}
	built, err := ContentSHA256(a.Partial().GetContent())
	if err != nil {
		return broken(aiv1.StreamRule_STREAM_RULE_TERMINAL_DIGEST, "the content the stream's events built cannot be encoded: %v", err)
	}
	if !bytes.Equal(built, want) {
		return broken(aiv1.StreamRule_STREAM_RULE_TERMINAL_DIGEST, "content_sha256 is not the digest of the content the stream's events built")
	}
	return nil
}

// end makes a terminal event's message the partial: its blocks are as it carries them, none
// streaming any more.
func (a *Accumulator) end(message *aiv1.AssistantMessage) {
	a.partial = message
	for _, state := range a.blocks {
		*state = openBlock{}
	}
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
			ArgumentsJson: proto.String("{}"),
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
