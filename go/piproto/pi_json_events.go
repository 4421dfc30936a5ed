package piproto

import (
	"cmp"
	"math"
	"strings"

	aiv1 "github.com/pi-proto/pi-proto/go/gen/pi/ai/v1"
	"google.golang.org/protobuf/proto"
)

// pi's AssistantMessageEvent: as its providers stream it, each event but done and error with the
// partial message so far; and pi 1.6's delta-only form (its json and RPC modes, pi-messages):
// no `partial`, `toolcall_start` naming the call (`id`, `toolName`), an `*_end` event carrying
// the block's text (`content`) and signature (`contentSignature`).

// EventForm is the form [EventToPi] writes an event in.
type EventForm int

const (
	// WithPartial writes every event but done and error with its `partial`, which it must carry
	// ([Accumulator.Apply] sets it).
	WithPartial EventForm = iota
	// DeltaOnly writes pi 1.6's delta-only form: without `partial` (an `*_end` event's `content`
	// is still taken from it, when the event has one).
	DeltaOnly
)

// EventFromPi reads one pi AssistantMessageEvent; its `partial` becomes ModelEvent.partial. An
// event without one is read in pi 1.6's delta-only form.
func EventFromPi(text []byte) (*aiv1.ModelEvent, error) {
	return readPi(text, eventFromPi)
}

// EventToPi writes an event as pi's AssistantMessageEvent, in the form asked for.
func EventToPi(event *aiv1.ModelEvent, form EventForm) ([]byte, error) {
	return writePi(event, func(event *aiv1.ModelEvent) *jsonObject { return eventToPi(event, form) })
}

// eventKeys is the keys a pi event of this type has. Events are not stored, so others are
// refused (noExtra), and no order is kept.
func eventKeys(kind string) keyOrder {
	switch kind {
	case "done":
		return knownKeys("type", "reason", "message")
	case "error":
		return knownKeys("type", "reason", "error")
	case "start":
		return knownKeys("type", "partial")
	case "toolcall_end":
		return knownKeys("type", "contentIndex", "partial", "toolCall")
	}
	switch _, step, _ := strings.Cut(kind, "_"); step {
	case "delta":
		return knownKeys("type", "contentIndex", "partial", "delta")
	case "end":
		return knownKeys("type", "contentIndex", "partial", "content")
	}
	return knownKeys("type", "contentIndex", "partial")
}

// deltaOnlyKeys is the keys of each type of delta-only event.
func deltaOnlyKeys(kind string) keyOrder {
	switch kind {
	case "text_start", "thinking_start":
		return knownKeys("type", "contentIndex")
	case "toolcall_start":
		return knownKeys("type", "contentIndex", "id", "toolName")
	case "text_delta", "thinking_delta", "toolcall_delta":
		return knownKeys("type", "contentIndex", "delta")
	case "text_end":
		return knownKeys("type", "contentIndex", "content", "contentSignature")
	case "thinking_end":
		return knownKeys("type", "contentIndex", "content", "contentSignature", "redacted")
	case "toolcall_end":
		return knownKeys("type", "contentIndex", "toolCall")
	}
	return knownKeys("type")
}

func knownKeys(keys ...string) keyOrder {
	return keyOrder{known: keysOf(keys...).known}
}

// noExtra refuses a key the event's type does not have.
func noExtra(r *objectReader) {
	for _, key := range r.object.keys {
		if !r.order.known[key] {
			panic(failure(r.where, "unknown field %q", key))
		}
	}
}

func eventFromPi(value jsonValue, where string) *aiv1.ModelEvent {
	r := newReader(value, where, keyOrder{})
	kind := r.string("type")
	r.order = eventKeys(kind)
	if kind == "done" || kind == "error" {
		reason := choice(r, "reason", stopReasons)
		key := "message"
		if kind == "error" {
			key = "error"
		}
		final := child(r, key, assistantFromPi)
		if final == nil {
			panic(failure(join(where, key), "required"))
		}
		noExtra(r)
		if kind == "done" {
			return &aiv1.ModelEvent{Event: &aiv1.ModelEvent_Done{Done: &aiv1.DoneEvent{Reason: reason, Message: final}}}
		}
		return &aiv1.ModelEvent{Event: &aiv1.ModelEvent_Error{Error: &aiv1.ErrorEvent{Reason: reason, Message: final}}}
	}
	partial := child(r, "partial", assistantFromPi)
	if partial == nil {
		return deltaOnlyEventFromPi(r, kind)
	}
	event := &aiv1.ModelEvent{Partial: partial}
	if kind == "start" {
		noExtra(r)
		event.Event = &aiv1.ModelEvent_Start{Start: &aiv1.StartEvent{Header: proto.CloneOf(partial)}}
		return event
	}
	family, step := eventFamily(r, kind)
	at := r.integer("contentIndex")
	if at < 0 || at >= int64(len(partial.GetContent())) {
		panic(failure(join(where, "contentIndex"), "%d is not a block of the partial message", at))
	}
	index, block := uint32(at), partial.GetContent()[at]
	if memberOf(block) != blockOfFamily[family] {
		panic(failure(join(where, "contentIndex"), "block %d of the partial is not a %s block", at, family))
	}
	switch {
	case kind == "text_start":
		event.Event = &aiv1.ModelEvent_TextStart{TextStart: &aiv1.TextStartEvent{ContentIndex: index}}
	case kind == "thinking_start":
		event.Event = &aiv1.ModelEvent_ThinkingStart{ThinkingStart: &aiv1.ThinkingStartEvent{ContentIndex: index}}
	case kind == "toolcall_start":
		call := block.GetToolCall()
		start := &aiv1.ToolCallStartEvent{ContentIndex: index, Id: call.GetId(), Name: call.GetName()}
		event.Event = &aiv1.ModelEvent_ToolcallStart{ToolcallStart: start}
	case step == "delta":
		setDelta(event, family, index, r.string("delta"))
	case kind == "toolcall_end":
		event.Event = &aiv1.ModelEvent_ToolcallEnd{ToolcallEnd: toolCallEndFromPi(r, index)}
	default: // text_end or thinking_end: the content is the block the partial already holds
		if r.string("content") != blockText(block) {
			panic(failure(join(where, "content"), "differs from block %d of the partial, so it cannot be rebuilt", at))
		}
		if family == "text" {
			end := &aiv1.TextEndEvent{ContentIndex: index, TextSignature: block.GetText().TextSignature}
			event.Event = &aiv1.ModelEvent_TextEnd{TextEnd: end}
		} else {
			thinking := block.GetThinking()
			end := &aiv1.ThinkingEndEvent{ContentIndex: index, ThinkingSignature: thinking.ThinkingSignature, Redacted: thinking.Redacted}
			event.Event = &aiv1.ModelEvent_ThinkingEnd{ThinkingEnd: end}
		}
	}
	noExtra(r)
	return event
}

// deltaOnlyEventFromPi reads an event as pi 1.6 writes it in its json and RPC modes.
func deltaOnlyEventFromPi(r *objectReader, kind string) *aiv1.ModelEvent {
	r.order = deltaOnlyKeys(kind)
	event := &aiv1.ModelEvent{}
	if kind == "start" {
		noExtra(r)
		event.Event = &aiv1.ModelEvent_Start{Start: &aiv1.StartEvent{Header: &aiv1.AssistantMessage{}}}
		return event
	}
	family, step := eventFamily(r, kind)
	at := r.integer("contentIndex")
	if at < 0 || at > math.MaxUint32 {
		panic(failure(join(r.where, "contentIndex"), "%d is not a block index", at))
	}
	index := uint32(at)
	switch {
	case kind == "toolcall_start":
		start := &aiv1.ToolCallStartEvent{ContentIndex: index, Id: r.string("id"), Name: r.string("toolName")}
		event.Event = &aiv1.ModelEvent_ToolcallStart{ToolcallStart: start}
	case kind == "text_start":
		event.Event = &aiv1.ModelEvent_TextStart{TextStart: &aiv1.TextStartEvent{ContentIndex: index}}
	case kind == "thinking_start":
		event.Event = &aiv1.ModelEvent_ThinkingStart{ThinkingStart: &aiv1.ThinkingStartEvent{ContentIndex: index}}
	case step == "delta":
		setDelta(event, family, index, r.string("delta"))
	case kind == "toolcall_end":
		event.Event = &aiv1.ModelEvent_ToolcallEnd{ToolcallEnd: toolCallEndFromPi(r, index)}
	default:
		r.optionalString("content") // the block's text, which the receiver has rebuilt
		signature := r.optionalString("contentSignature")
		if family == "text" {
			event.Event = &aiv1.ModelEvent_TextEnd{TextEnd: &aiv1.TextEndEvent{ContentIndex: index, TextSignature: signature}}
		} else {
			end := &aiv1.ThinkingEndEvent{ContentIndex: index, ThinkingSignature: signature, Redacted: r.optionalBoolean("redacted")}
			event.Event = &aiv1.ModelEvent_ThinkingEnd{ThinkingEnd: end}
		}
	}
	noExtra(r)
	return event
}

// eventFamily splits a block event's type into its family ("text", "thinking", "toolcall") and
// step ("start", "delta", "end"), refusing any other type.
func eventFamily(r *objectReader, kind string) (family, step string) {
	family, step, _ = strings.Cut(kind, "_")
	if _, ok := blockOfFamily[family]; !ok || step != "start" && step != "delta" && step != "end" {
		panic(failure(join(r.where, "type"), "not a pi event type: %q", kind))
	}
	return family, step
}

func setDelta(event *aiv1.ModelEvent, family string, index uint32, delta string) {
	switch family {
	case "text":
		event.Event = &aiv1.ModelEvent_TextDelta{TextDelta: &aiv1.TextDeltaEvent{ContentIndex: index, Delta: delta}}
	case "thinking":
		event.Event = &aiv1.ModelEvent_ThinkingDelta{ThinkingDelta: &aiv1.ThinkingDeltaEvent{ContentIndex: index, Delta: delta}}
	default:
		event.Event = &aiv1.ModelEvent_ToolcallDelta{ToolcallDelta: &aiv1.ToolCallDeltaEvent{ContentIndex: index, Delta: delta}}
	}
}

func toolCallEndFromPi(r *objectReader, index uint32) *aiv1.ToolCallEndEvent {
	call := child(r, "toolCall", assistantBlock).GetToolCall()
	if call == nil {
		panic(failure(join(r.where, "toolCall"), "required, a toolCall block"))
	}
	return &aiv1.ToolCallEndEvent{ContentIndex: index, ToolCall: call}
}

// blockText is the text of a text block or a thinking block ("" for a tool call).
func blockText(block *aiv1.AssistantContent) string {
	if text := block.GetText(); text != nil {
		return text.GetText()
	}
	return block.GetThinking().GetThinking()
}

func eventToPi(event *aiv1.ModelEvent, form EventForm) *jsonObject {
	kind := EventKind(event)
	if kind == "" {
		panic(failure("ModelEvent", "no event kind is set"))
	}
	out := newObject()
	out.set("type", jsonString(kind))
	switch body := event.GetEvent().(type) {
	case *aiv1.ModelEvent_Done:
		out.set("reason", reasonToPi(body.Done.GetReason(), "DoneEvent.reason"))
		out.set("message", assistantToPi(finalMessage(body.Done.GetMessage(), "DoneEvent.message")))
		return out
	case *aiv1.ModelEvent_Error:
		out.set("reason", reasonToPi(body.Error.GetReason(), "ErrorEvent.reason"))
		out.set("error", assistantToPi(finalMessage(body.Error.GetMessage(), "ErrorEvent.message")))
		return out
	}
	if form == DeltaOnly {
		return deltaOnlyEventToPi(event, kind, out)
	}
	if start := event.GetStart(); start != nil {
		out.set("partial", assistantToPi(cmp.Or(event.GetPartial(), start.GetHeader(), &aiv1.AssistantMessage{})))
		return out
	}
	partial := event.GetPartial()
	if partial == nil {
		panic(failure(kind, "pi-JSON events carry the partial message; apply the event with an Accumulator"))
	}
	index := contentIndex(event)
	out.set("contentIndex", fromInteger(int64(index)))
	switch {
	case strings.HasSuffix(kind, "_delta"):
		out.set("delta", jsonString(deltaOf(event)))
	case kind == "toolcall_end":
		out.set("toolCall", endedCallToPi(event.GetToolcallEnd()))
	case strings.HasSuffix(kind, "_end"):
		if int(index) >= len(partial.GetContent()) {
			panic(failure(kind+".content_index", "%d is not a block of the partial message", index))
		}
		out.set("content", jsonString(blockText(partial.GetContent()[index])))
	}
	out.set("partial", assistantToPi(partial))
	return out
}

func deltaOnlyEventToPi(event *aiv1.ModelEvent, kind string, out *jsonObject) *jsonObject {
	if kind == "start" {
		return out
	}
	index := contentIndex(event)
	out.set("contentIndex", fromInteger(int64(index)))
	partial := event.GetPartial()
	switch body := event.GetEvent().(type) {
	case *aiv1.ModelEvent_ToolcallStart:
		out.set("id", jsonString(body.ToolcallStart.GetId()))
		out.set("toolName", jsonString(body.ToolcallStart.GetName()))
	case *aiv1.ModelEvent_TextDelta, *aiv1.ModelEvent_ThinkingDelta, *aiv1.ModelEvent_ToolcallDelta:
		out.set("delta", jsonString(deltaOf(event)))
	case *aiv1.ModelEvent_ToolcallEnd:
		out.set("toolCall", endedCallToPi(body.ToolcallEnd))
	case *aiv1.ModelEvent_TextEnd:
		if int(index) < len(partial.GetContent()) {
			out.set("content", jsonString(blockText(partial.GetContent()[index])))
		}
		putString(out, "contentSignature", body.TextEnd.TextSignature)
	case *aiv1.ModelEvent_ThinkingEnd:
		if int(index) < len(partial.GetContent()) {
			out.set("content", jsonString(blockText(partial.GetContent()[index])))
		}
		putString(out, "contentSignature", body.ThinkingEnd.ThinkingSignature)
		putBoolean(out, "redacted", body.ThinkingEnd.Redacted)
	}
	return out
}

func endedCallToPi(end *aiv1.ToolCallEndEvent) *jsonObject {
	if end.GetToolCall() == nil {
		panic(failure("ToolCallEndEvent.tool_call", "required"))
	}
	return toolCallToPi(end.GetToolCall())
}

func reasonToPi(reason aiv1.StopReason, where string) jsonString {
	word, ok := stopReasons.word(reason)
	if !ok {
		panic(failure(where, "must be one of %s, got %v", stopReasons, reason))
	}
	return jsonString(word)
}

// finalMessage is the message a terminal event must carry.
func finalMessage(message *aiv1.AssistantMessage, where string) *aiv1.AssistantMessage {
	if message == nil {
		panic(failure(where, "required"))
	}
	return message
}
