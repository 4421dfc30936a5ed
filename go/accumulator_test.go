// The accumulator rebuilds the partial message exactly as the seed's event table describes, and
// rejects events that do not fit the stream with the same messages as the Python runtime.

package piproto_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	piproto "github.com/pi-proto/pi-proto/go"
	aiv1 "github.com/pi-proto/pi-proto/go/gen/pi/ai/v1"
	"google.golang.org/protobuf/proto"
)

func readmeTurn() *aiv1.AssistantMessage {
	return assistantMessage(
		[]*aiv1.AssistantContent{text("我先读取项目说明。"), toolCall("call_1", "read", map[string]any{"path": "README.md"})},
		stoppedBy(aiv1.StopReason_STOP_REASON_TOOL_USE),
		func(message *aiv1.AssistantMessage) { message.Timestamp = 1010 },
	)
}

func sample() *aiv1.AssistantMessage {
	call := toolCall("call_1", "read", map[string]any{"path": "README.md"})
	call.GetToolCall().RawArguments = proto.String(`{"path": "README.md"}`)
	call.GetToolCall().ThoughtSignature = proto.String("c2ln")
	return assistantMessage(
		[]*aiv1.AssistantContent{
			thinking("让我想想 🤔", proto.String("sig-Ω"), proto.Bool(false)),
			signedText("我先读取项目说明。", `{"id":"msg_1"}`),
			call,
		},
		stoppedBy(aiv1.StopReason_STOP_REASON_TOOL_USE),
	)
}

func callAt(t *testing.T, message *aiv1.AssistantMessage, index int) *aiv1.ToolCall {
	t.Helper()
	if index >= len(message.GetContent()) {
		t.Fatalf("the message has %d blocks, no block %d", len(message.GetContent()), index)
	}
	call := message.Content[index].GetToolCall()
	if call == nil {
		t.Fatalf("block %d is not a tool call: %v", index, message.Content[index])
	}
	return call
}

func assertProtoEqual(t *testing.T, got, want proto.Message) {
	t.Helper()
	if !proto.Equal(got, want) {
		t.Fatalf("got  %v\nwant %v", got, want)
	}
}

func assertJSONEqual(t *testing.T, got string, want any) {
	t.Helper()
	var parsed any
	if err := json.Unmarshal([]byte(got), &parsed); err != nil {
		t.Fatalf("%q: %v", got, err)
	}
	wantJSON, _ := json.Marshal(want)
	var wanted any
	_ = json.Unmarshal(wantJSON, &wanted)
	if !reflect.DeepEqual(parsed, wanted) {
		t.Fatalf("got JSON %s, want %s", got, wantJSON)
	}
}

func TestThePartialAtEachStepOfTheSeedsEventTable(t *testing.T) {
	bound(t)
	accumulator := piproto.NewAccumulator()
	steps := map[string]*aiv1.AssistantMessage{}
	for _, event := range eventsOf(readmeTurn(), 100) {
		if err := accumulator.Apply(event); err != nil {
			t.Fatal(err)
		}
		if event.Partial != accumulator.Partial {
			t.Fatal("the event's partial is not the accumulator's")
		}
		steps[piproto.EventKind(event)] = proto.Clone(event.Partial).(*aiv1.AssistantMessage) // the partial changes in place
	}

	if started := steps["start"]; len(started.Content) != 0 || started.Provider != "scripted" || started.Model != "scripted-v1" {
		t.Fatalf("start: %v", started)
	}
	if got := piproto.TextOf(steps["text_delta"]); got != "我先读取项目说明。" {
		t.Fatalf("text_delta: %q", got)
	}
	streaming := callAt(t, steps["toolcall_delta"], 1)
	if streaming.Id != "call_1" || streaming.Name != "read" || streaming.ArgumentsJson != "{}" || streaming.GetRawArguments() != `{"path":"README.md"}` {
		t.Fatalf("toolcall_delta: %v", streaming)
	}
	assertJSONEqual(t, callAt(t, steps["toolcall_end"], 1).ArgumentsJson, map[string]any{"path": "README.md"})
	assertProtoEqual(t, steps["done"], readmeTurn())
}

func TestRebuildingAMessageFromItsEventsGivesItsContentBack(t *testing.T) {
	bound(t)
	message := sample()
	for _, size := range []int{1, 3, 1000} {
		accumulator := piproto.NewAccumulator()
		for _, event := range eventsOf(message, size) {
			if piproto.IsTerminal(event) {
				continue
			}
			if err := accumulator.Apply(event); err != nil {
				t.Fatal(err)
			}
		}
		rebuilt := accumulator.Partial
		// Content and header are rebuilt; usage and stop reason arrive with the terminal event.
		assertProtoEqual(t, &aiv1.AssistantMessage{Content: rebuilt.Content}, &aiv1.AssistantMessage{Content: message.Content})
		if rebuilt.Api != message.Api || rebuilt.Provider != message.Provider || rebuilt.Model != message.Model || rebuilt.Timestamp != message.Timestamp {
			t.Fatalf("size %d: header %v", size, rebuilt)
		}
	}
}

func TestStartCopiesTheHeaderAndLeavesItUntouched(t *testing.T) {
	bound(t)
	header := assistantMessage(nil)
	before, _ := proto.Marshal(header)
	accumulator := piproto.NewAccumulator()
	for _, event := range []*aiv1.ModelEvent{start(header), textStart(0)} {
		if err := accumulator.Apply(event); err != nil {
			t.Fatal(err)
		}
	}
	if accumulator.Partial == header || len(accumulator.Partial.Content) != 1 {
		t.Fatalf("partial %v", accumulator.Partial)
	}
	after, _ := proto.Marshal(header)
	if string(before) != string(after) {
		t.Fatal("start changed the header")
	}
}

func TestEndEventsKeepSignaturesOnlyWhenTheyCarryOne(t *testing.T) {
	bound(t)
	accumulator := piproto.NewAccumulator()
	for _, event := range []*aiv1.ModelEvent{
		start(nil),
		textStart(0),
		textEnd(0),
		{Event: &aiv1.ModelEvent_ThinkingStart{ThinkingStart: &aiv1.ThinkingStartEvent{ContentIndex: 1}}},
		{Event: &aiv1.ModelEvent_ThinkingEnd{ThinkingEnd: &aiv1.ThinkingEndEvent{
			ContentIndex: 1, ThinkingSignature: proto.String("sig"), Redacted: proto.Bool(true),
		}}},
	} {
		if err := accumulator.Apply(event); err != nil {
			t.Fatal(err)
		}
	}
	first, second := accumulator.Partial.Content[0].GetText(), accumulator.Partial.Content[1].GetThinking()
	if first.TextSignature != nil {
		t.Fatalf("text signature %q", *first.TextSignature)
	}
	if second.GetThinkingSignature() != "sig" || !second.GetRedacted() {
		t.Fatalf("thinking %v", second)
	}
}

func TestDeltasAppendToWhatTheCallerLeftInTheBlock(t *testing.T) {
	bound(t)
	accumulator := piproto.NewAccumulator()
	for _, event := range []*aiv1.ModelEvent{start(nil), textStart(0), textDelta(0, "ab")} {
		if err := accumulator.Apply(event); err != nil {
			t.Fatal(err)
		}
	}
	block := accumulator.Partial.Content[0].GetText()
	snapshot := block.Text
	block.Text = "replaced "
	if err := accumulator.Apply(textDelta(0, "cd")); err != nil {
		t.Fatal(err)
	}
	if block.Text != "replaced cd" || snapshot != "ab" {
		t.Fatalf("text %q, earlier %q", block.Text, snapshot)
	}
}

func TestManyDeltasBuildTheTextAndLeaveEarlierPartialsAsTheyWere(t *testing.T) {
	bound(t)
	// The block's text shares the bytes of a builder that only grows: every string handed out
	// before must keep its value.
	accumulator := piproto.NewAccumulator()
	for _, event := range []*aiv1.ModelEvent{start(nil), textStart(0)} {
		if err := accumulator.Apply(event); err != nil {
			t.Fatal(err)
		}
	}
	const count = 100_000
	var earlier []string
	for i := range count {
		if err := accumulator.Apply(textDelta(0, string(rune('a'+i%26)))); err != nil {
			t.Fatal(err)
		}
		if i%10_000 == 0 {
			earlier = append(earlier, accumulator.Partial.Content[0].GetText().Text)
		}
	}
	var want strings.Builder
	for i := range count {
		want.WriteRune(rune('a' + i%26))
	}
	if got := accumulator.Partial.Content[0].GetText().Text; got != want.String() {
		t.Fatalf("text of %d characters", len(got))
	}
	for n, text := range earlier {
		if text != want.String()[:n*10_000+1] {
			t.Fatalf("the partial text after delta %d changed", n*10_000)
		}
	}
}

var (
	startEvent = start(assistantMessage(nil))
	callStart  = &aiv1.ModelEvent{Event: &aiv1.ModelEvent_ToolcallStart{ToolcallStart: &aiv1.ToolCallStartEvent{ContentIndex: 0, Id: "call_1", Name: "read"}}}
)

func callEnd(id string) *aiv1.ModelEvent {
	return &aiv1.ModelEvent{Event: &aiv1.ModelEvent_ToolcallEnd{ToolcallEnd: &aiv1.ToolCallEndEvent{ToolCall: &aiv1.ToolCall{Id: id, Name: "read"}}}}
}

func oneCall(id, name, argumentsJSON string) *aiv1.AssistantMessage {
	return assistantMessage([]*aiv1.AssistantContent{rawToolCall(id, name, argumentsJSON)})
}

// The same cases and messages as the Python and TypeScript runtimes' accumulator tests.
var brokenRules = []struct {
	rule    string
	events  []*aiv1.ModelEvent
	message string
}{
	{"event-kind", []*aiv1.ModelEvent{{}}, "event 0 breaks rule 'event-kind': no event kind is set"},
	{"start-first", []*aiv1.ModelEvent{textStart(0)}, "event 0 (text_start) breaks rule 'start-first': a stream opens with start"},
	{"start-once", []*aiv1.ModelEvent{startEvent, startEvent}, "event 1 (start) breaks rule 'start-once': start must be the first event"},
	{"next-index", []*aiv1.ModelEvent{startEvent, textStart(1)}, "event 1 (text_start) breaks rule 'next-index': content_index 1 must open the next block, 0"},
	{"block-exists", []*aiv1.ModelEvent{startEvent, textDelta(0, "x")}, "event 1 (text_delta) breaks rule 'block-exists': content_index 0 refers to no block (the message has 0)"},
	{
		"block-kind",
		[]*aiv1.ModelEvent{startEvent, textStart(0), {Event: &aiv1.ModelEvent_ToolcallDelta{ToolcallDelta: &aiv1.ToolCallDeltaEvent{Delta: "{"}}}},
		"event 2 (toolcall_delta) breaks rule 'block-kind': block 0 is not a tool call block",
	},
	{
		"block-kind",
		[]*aiv1.ModelEvent{startEvent, callStart, {Event: &aiv1.ModelEvent_ThinkingEnd{ThinkingEnd: &aiv1.ThinkingEndEvent{}}}},
		"event 2 (thinking_end) breaks rule 'block-kind': block 0 is not a thinking block",
	},
	{"block-open", []*aiv1.ModelEvent{startEvent, textStart(0), textEnd(0), textDelta(0, "late")}, "event 3 (text_delta) breaks rule 'block-open': block 0 has already ended"},
	{"tool-call-id", []*aiv1.ModelEvent{startEvent, callStart, callEnd("call_2")}, "event 2 (toolcall_end) breaks rule 'tool-call-id': tool call 0 started as 'call_1' but ends as 'call_2'"},
	{"tool-call-id", []*aiv1.ModelEvent{startEvent, callStart, callEnd("it's\n")}, `event 2 (toolcall_end) breaks rule 'tool-call-id': tool call 0 started as 'call_1' but ends as "it's\n"`},
	{"tool-call-id", []*aiv1.ModelEvent{startEvent, callStart, callEnd("a\u00a0b\u200bc\U000e0001")}, `event 2 (toolcall_end) breaks rule 'tool-call-id': tool call 0 started as 'call_1' but ends as 'a\xa0b\u200bc\U000e0001'`},
	{"terminal-message", []*aiv1.ModelEvent{startEvent, doneWith(aiv1.StopReason_STOP_REASON_STOP, nil)}, "event 1 (done) breaks rule 'terminal-message': carries no message"},
	{
		"terminal-reason",
		[]*aiv1.ModelEvent{startEvent, doneWith(aiv1.StopReason_STOP_REASON_ERROR, assistantMessage(nil, stoppedBy(aiv1.StopReason_STOP_REASON_ERROR)))},
		"event 1 (done) breaks rule 'terminal-reason': reason ERROR with a message stopped by ERROR; done takes STOP, LENGTH, TOOL_USE, equal in both",
	},
	{
		"terminal-reason",
		[]*aiv1.ModelEvent{startEvent, doneWith(aiv1.StopReason_STOP_REASON_LENGTH, assistantMessage(nil))},
		"event 1 (done) breaks rule 'terminal-reason': reason LENGTH with a message stopped by STOP; done takes STOP, LENGTH, TOOL_USE, equal in both",
	},
	{
		"terminal-reason",
		[]*aiv1.ModelEvent{errorEvent(aiv1.StopReason_STOP_REASON_STOP, assistantMessage(nil))},
		"event 0 (error) breaks rule 'terminal-reason': reason STOP with a message stopped by STOP; error takes ERROR, ABORTED, equal in both",
	},
	{
		"terminal-reason",
		[]*aiv1.ModelEvent{errorEvent(aiv1.StopReason(9), assistantMessage(nil, stoppedBy(9)))},
		"event 0 (error) breaks rule 'terminal-reason': reason 9 with a message stopped by 9; error takes ERROR, ABORTED, equal in both",
	},
	{
		"terminal-agrees",
		[]*aiv1.ModelEvent{startEvent, textStart(0), done(oneCall("c", "read", "{}"))},
		"event 2 (done) breaks rule 'terminal-agrees': the message has blocks ['tool_call'], the stream built ['text']",
	},
	{
		"message-valid",
		[]*aiv1.ModelEvent{done(oneCall("c", "read", "[1]"))},
		"event 0 (done) breaks rule 'message-valid': message.content[0].tool_call.arguments_json: must be a JSON object, got list",
	},
	{
		"message-valid",
		[]*aiv1.ModelEvent{done(oneCall("", "read", "{}"))},
		"event 0 (done) breaks rule 'message-valid': message.content[0].tool_call.id: must not be empty",
	},
	{
		"message-valid",
		[]*aiv1.ModelEvent{done(oneCall("c", "read", `{"a":`+strings.Repeat("[", 64)+strings.Repeat("]", 64)+"}"))},
		"event 0 (done) breaks rule 'message-valid': message.content[0].tool_call.arguments_json: JSON nested deeper than the limit of 64",
	},
	{
		"message-valid",
		[]*aiv1.ModelEvent{done(assistantMessage([]*aiv1.AssistantContent{{Block: &aiv1.AssistantContent_Text{Text: &aiv1.TextContent{ExtraJson: "7"}}}}))},
		"event 0 (done) breaks rule 'message-valid': message.content[0].text.extra_json: must be a JSON object, got number",
	},
	{
		"message-valid",
		[]*aiv1.ModelEvent{done(assistantMessage([]*aiv1.AssistantContent{{}}))},
		"event 0 (done) breaks rule 'message-valid': message.content[0].block: exactly one of text, thinking, tool_call must be set, found none",
	},
}

func TestBrokenRules(t *testing.T) {
	bound(t)
	for _, case_ := range brokenRules {
		t.Run(case_.rule, func(t *testing.T) {
			accumulator := piproto.NewAccumulator()
			last := len(case_.events) - 1
			for _, fine := range case_.events[:last] {
				if err := accumulator.Apply(fine); err != nil {
					t.Fatal(err)
				}
			}
			err := accumulator.Apply(case_.events[last])
			var broken *piproto.StreamProtocolError
			if !errors.As(err, &broken) || broken.Error() != case_.message {
				t.Fatalf("got  %v\nwant %s", err, case_.message)
			}
		})
	}
}

func TestATerminalEventAloneIsAValidStream(t *testing.T) {
	bound(t)
	failed := assistantMessage(nil, failedWith(aiv1.StopReason_STOP_REASON_ERROR, "socket reset"))
	event := errorEvent(aiv1.StopReason_STOP_REASON_ERROR, failed)
	if err := piproto.NewAccumulator().Apply(event); err != nil {
		t.Fatal(err)
	}
	if event.Partial != failed {
		t.Fatal("the partial is not the message the event carries")
	}
}

func TestTheJSONLimitsAreTheAccumulatorsToSet(t *testing.T) {
	bound(t)
	big := oneCall("c", "read", `{"path":"`+strings.Repeat("x", 100)+`"}`)
	err := piproto.NewAccumulatorWithLimits(piproto.Limits{MaxJSONBytes: 64, MaxJSONDepth: 64}).Apply(done(big))
	want := "event 0 (done) breaks rule 'message-valid': message.content[0].tool_call.arguments_json: 111 bytes of JSON, above the limit of 64"
	if err == nil || err.Error() != want {
		t.Fatalf("got  %v\nwant %s", err, want)
	}
	event := done(big)
	if err := piproto.NewAccumulator().Apply(event); err != nil || event.Partial != big {
		t.Fatalf("default limits: %v", err)
	}
}

func TestStartKeepsANegativeZeroOfTheHeader(t *testing.T) {
	bound(t)
	// proto.Clone would turn it into +0; the partial shares the header's values instead.
	header := assistantMessage(nil, func(message *aiv1.AssistantMessage) {
		message.Usage = &aiv1.Usage{Cost: &aiv1.Cost{Input: math.Copysign(0, -1)}}
	})
	accumulator := piproto.NewAccumulator()
	if err := accumulator.Apply(start(header)); err != nil {
		t.Fatal(err)
	}
	if !math.Signbit(accumulator.Partial.GetUsage().GetCost().GetInput()) {
		t.Fatal("the negative zero became a positive one")
	}
	want, _ := piproto.MarshalCanonical(header)
	if got, _ := piproto.MarshalCanonical(accumulator.Partial); !bytes.Equal(got, want) {
		t.Fatalf("partial %x, header %x", got, want)
	}
}

func TestMarshalCanonicalWritesFieldsInNumberOrder(t *testing.T) {
	bound(t)
	entry := &aiv1.AgentMessage{
		Role:        &aiv1.AgentMessage_Custom{Custom: &aiv1.CustomMessage{Role: "bashExecution", FieldsJson: "{}"}},
		SessionJson: `{"type":"message"}`,
	}
	canonical, err := piproto.MarshalCanonical(entry)
	if err != nil {
		t.Fatal(err)
	}
	if canonical[0] != 0x22 { // field 4 (custom), length-delimited
		t.Fatalf("canonical bytes start %x", canonical[:2])
	}
	written, _ := proto.Marshal(entry)
	if written[0] != 0x32 { // proto.Marshal puts session_json (6) before the oneof member
		t.Fatalf("proto.Marshal now writes %x first: update the README and MarshalCanonical's comment", written[:2])
	}
	again := &aiv1.AgentMessage{}
	if err := proto.Unmarshal(canonical, again); err != nil || !proto.Equal(again, entry) {
		t.Fatalf("read back %v: %v", again, err)
	}
}

func TestCloseMakesATerminalEventsMessageThePartialWithoutTheRules(t *testing.T) {
	bound(t)
	accumulator := piproto.NewAccumulator()
	if err := accumulator.Apply(start(assistantMessage(nil))); err != nil {
		t.Fatal(err)
	}
	// A message no sender may send: stopped by nothing, with an empty tool call.
	kept := assistantMessage([]*aiv1.AssistantContent{rawToolCall("", "", "")}, stoppedBy(aiv1.StopReason_STOP_REASON_UNSPECIFIED))
	event := errorEvent(aiv1.StopReason_STOP_REASON_ERROR, kept)
	accumulator.Close(event)
	if event.Partial != kept || accumulator.Partial != kept {
		t.Fatal("Close did not attach the event's message")
	}
}
