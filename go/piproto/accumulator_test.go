// The accumulator rebuilds the partial message exactly as the seed's event table describes, and
// refuses events that do not fit the stream with a structured error. Every rule is pinned by the
// conformance corpus (tests/conformance/stream.yaml); these tests show the API.

package piproto_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	aiv1 "github.com/pi-proto/pi-proto/go/gen/pi/ai/v1"
	"github.com/pi-proto/pi-proto/go/piproto"
	"google.golang.org/protobuf/proto"
)

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
		if event.Partial != accumulator.Partial() {
			t.Fatal("the event's partial is not the accumulator's")
		}
		steps[piproto.EventKind(event)] = proto.Clone(event.Partial).(*aiv1.AssistantMessage) // the partial changes in place
	}

	if started := steps["start"]; len(started.Content) != 0 || started.GetProvider() != "scripted" || started.GetModel() != "scripted-v1" {
		t.Fatalf("start: %v", started)
	}
	if got := piproto.TextOf(steps["text_delta"]); got != "我先读取项目说明。" {
		t.Fatalf("text_delta: %q", got)
	}
	streaming := callAt(t, steps["toolcall_delta"], 1)
	if streaming.Id != "call_1" || streaming.Name != "read" || streaming.GetArgumentsJson() != `{"path":"README.md"}` || streaming.GetRawArguments() != `{"path":"README.md"}` {
		t.Fatalf("toolcall_delta: %v", streaming)
	}
	assertJSONEqual(t, callAt(t, steps["toolcall_end"], 1).GetArgumentsJson(), map[string]any{"path": "README.md"})
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
		rebuilt := accumulator.Partial()
		// Content and header are rebuilt; usage and stop reason arrive with the terminal event.
		assertProtoEqual(t, &aiv1.AssistantMessage{Content: rebuilt.Content}, &aiv1.AssistantMessage{Content: message.Content})
		if rebuilt.GetApi() != message.GetApi() || rebuilt.GetProvider() != message.GetProvider() || rebuilt.GetModel() != message.GetModel() || rebuilt.GetTimestamp() != message.GetTimestamp() {
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
	if accumulator.Partial() == header || len(accumulator.Partial().Content) != 1 {
		t.Fatalf("partial %v", accumulator.Partial())
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
	first, second := accumulator.Partial().Content[0].GetText(), accumulator.Partial().Content[1].GetThinking()
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
	block := accumulator.Partial().Content[0].GetText()
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
			earlier = append(earlier, accumulator.Partial().Content[0].GetText().Text)
		}
	}
	var want strings.Builder
	for i := range count {
		want.WriteRune(rune('a' + i%26))
	}
	if got := accumulator.Partial().Content[0].GetText().Text; got != want.String() {
		t.Fatalf("text of %d characters", len(got))
	}
	for n, text := range earlier {
		if text != want.String()[:n*10_000+1] {
			t.Fatalf("the partial text after delta %d changed", n*10_000)
		}
	}
}

func TestABrokenRuleIsAnErrorWithTheEventIndexAndTheRuleID(t *testing.T) {
	bound(t)
	accumulator := piproto.NewAccumulator()
	for _, event := range []*aiv1.ModelEvent{start(assistantMessage(nil)), textStart(0)} {
		if err := accumulator.Apply(event); err != nil {
			t.Fatal(err)
		}
	}
	late := textDelta(3, "x")
	err := accumulator.Apply(late)
	var broken *piproto.StreamProtocolError
	if !errors.As(err, &broken) || broken.EventIndex != 2 || broken.Rule != aiv1.StreamRule_STREAM_RULE_BLOCK_EXISTS ||
		broken.RuleID != "block-exists" || broken.Detail == "" || len(broken.Violations) != 0 {
		t.Fatalf("error %#v", err)
	}
	if late.Partial != nil || len(accumulator.Partial().Content) != 1 {
		t.Fatal("a refused event changed the partial")
	}
}

func TestARuleIDIsTheEnumValueNameInLowerCaseWithHyphens(t *testing.T) {
	bound(t)
	for rule, want := range map[aiv1.StreamRule]string{
		aiv1.StreamRule_STREAM_RULE_EVENT_KIND:       "event-kind",
		aiv1.StreamRule_STREAM_RULE_BLOCK_OPEN:       "block-open",
		aiv1.StreamRule_STREAM_RULE_TOOL_CALL_ID:     "tool-call-id",
		aiv1.StreamRule_STREAM_RULE_TERMINAL_MISSING: "terminal-missing",
		aiv1.StreamRule_STREAM_RULE_EVENT_DECODE:     "event-decode",
	} {
		if got := piproto.StreamRuleID(rule); got != want {
			t.Errorf("%v: %q, want %q", rule, got, want)
		}
	}
	// Every rule has an id of its own, with no trace of the enum's prefix.
	seen := map[string]bool{}
	for number := range aiv1.StreamRule_name {
		id := piproto.StreamRuleID(aiv1.StreamRule(number))
		if seen[id] || strings.ContainsAny(id, "_ABCDEFGHIJKLMNOPQRSTUVWXYZ") || strings.HasPrefix(id, "stream-rule") {
			t.Errorf("rule %d: id %q", number, id)
		}
		seen[id] = true
	}
}

func TestATerminalEventThatBreaksTheSchemaListsEveryViolation(t *testing.T) {
	bound(t)
	message := assistantMessage([]*aiv1.AssistantContent{rawToolCall("", "read", "{}"), {}}, stoppedBy(aiv1.StopReason_STOP_REASON_LENGTH))
	err := piproto.NewAccumulator().Apply(doneWith(aiv1.StopReason_STOP_REASON_STOP, message))
	var broken *piproto.StreamProtocolError
	if !errors.As(err, &broken) || broken.EventIndex != 0 || broken.RuleID != "terminal-valid" {
		t.Fatalf("error %v", err)
	}
	var found []string
	for _, violation := range broken.Violations {
		found = append(found, violation.FieldPath+" "+violation.RuleID)
	}
	slices.Sort(found)
	want := []string{
		"done done.reason_matches_message",
		"done.message.content[0].tool_call.id string.min_len",
		"done.message.content[1].block required",
	}
	if !slices.Equal(found, want) {
		t.Fatalf("violations %q", found)
	}
}

func TestTheDeltasMayAddUpToTheSizeLimitAndNoMore(t *testing.T) {
	bound(t)
	accumulator := piproto.NewAccumulator()
	accumulator.MaxMessageBytes = 6
	for _, event := range []*aiv1.ModelEvent{start(nil), textStart(0), textDelta(0, "ab"), textDelta(0, "é€")} { // 2+5 bytes
		if err := accumulator.Apply(event); err != nil {
			var broken *piproto.StreamProtocolError
			if !errors.As(err, &broken) || broken.RuleID != "size-limit" || broken.EventIndex != 3 {
				t.Fatalf("error %v", err)
			}
		}
	}
	if accumulator.Count != 4 || piproto.TextOf(accumulator.Partial()) != "ab" {
		t.Fatalf("%d events, text %q", accumulator.Count, piproto.TextOf(accumulator.Partial()))
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

func TestStartKeepsANegativeZeroOfTheHeader(t *testing.T) {
	bound(t)
	// proto.Clone would turn it into +0; the partial shares the header's values instead.
	header := assistantMessage(nil, func(message *aiv1.AssistantMessage) {
		message.Usage = &aiv1.Usage{Cost: &aiv1.Cost{Input: proto.Float64(math.Copysign(0, -1))}}
	})
	accumulator := piproto.NewAccumulator()
	if err := accumulator.Apply(start(header)); err != nil {
		t.Fatal(err)
	}
	if !math.Signbit(accumulator.Partial().GetUsage().GetCost().GetInput()) {
		t.Fatal("the negative zero became a positive one")
	}
	want, _ := piproto.MarshalCanonical(header)
	if got, _ := piproto.MarshalCanonical(accumulator.Partial()); !bytes.Equal(got, want) {
		t.Fatalf("partial %x, header %x", got, want)
	}
}

func TestMarshalCanonicalWritesFieldsInNumberOrder(t *testing.T) {
	bound(t)
	entry := &aiv1.TranscriptEntry{
		Entry: &aiv1.TranscriptEntry_Message{Message: &aiv1.AgentMessage{
			Role: &aiv1.AgentMessage_Custom{Custom: &aiv1.CustomMessage{Role: "bashExecution", FieldsJson: "{}"}},
		}},
		SessionJson: `{"type":"message"}`,
	}
	canonical, err := piproto.MarshalCanonical(entry)
	if err != nil {
		t.Fatal(err)
	}
	if canonical[0] != 0x0a { // field 1 (message), length-delimited
		t.Fatalf("canonical bytes start %x", canonical[:2])
	}
	written, _ := proto.Marshal(entry)
	if written[0] != 0x1a { // proto.Marshal puts session_json (3) before the oneof member
		t.Fatalf("proto.Marshal now writes %x first: update the README and MarshalCanonical's comment", written[:2])
	}
	again := &aiv1.TranscriptEntry{}
	if err := proto.Unmarshal(canonical, again); err != nil || !proto.Equal(again, entry) {
		t.Fatalf("read back %v: %v", again, err)
	}
}

func TestMarshalCanonicalWritesMapEntriesInKeyOrder(t *testing.T) {
	bound(t)
	options := &aiv1.GenerationOptions{Headers: map[string]string{"x-c": "3", "x-a": "1", "x-b": "2"}}
	canonical, err := piproto.MarshalCanonical(options)
	if err != nil {
		t.Fatal(err)
	}
	a, b, c := bytes.Index(canonical, []byte("x-a")), bytes.Index(canonical, []byte("x-b")), bytes.Index(canonical, []byte("x-c"))
	if a < 0 || a > b || b > c {
		t.Fatalf("entries at %d, %d, %d", a, b, c)
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
	if event.Partial != kept || accumulator.Partial() != kept {
		t.Fatal("Close did not attach the event's message")
	}
}

// refusedForSize applies events to a new accumulator with the limit, then last, which must break
// size-limit and change nothing; it returns the index of the refused event.
func refusedForSize(t *testing.T, limit int64, events []*aiv1.ModelEvent, last *aiv1.ModelEvent) int {
	t.Helper()
	accumulator := piproto.NewAccumulator()
	accumulator.MaxMessageBytes = limit
	for _, event := range events {
		if err := accumulator.Apply(event); err != nil {
			t.Fatal(err)
		}
	}
	before := proto.Clone(accumulator.Partial())
	var broken *piproto.StreamProtocolError
	if err := accumulator.Apply(last); !errors.As(err, &broken) || broken.RuleID != "size-limit" {
		t.Fatalf("error %v", err)
	}
	if !proto.Equal(accumulator.Partial(), before) {
		t.Fatal("a refused event changed the partial")
	}
	return broken.EventIndex
}

// fits applies events to a new accumulator with the limit, failing the test on a broken rule.
func fits(t *testing.T, limit int64, events ...*aiv1.ModelEvent) {
	t.Helper()
	accumulator := piproto.NewAccumulator()
	accumulator.MaxMessageBytes = limit
	for _, event := range events {
		if err := accumulator.Apply(event); err != nil {
			t.Fatal(err)
		}
	}
}

func TestAToolCallsIDAndNameAndTheSignaturesOfEndEventsCountTowardTheSizeLimit(t *testing.T) {
	bound(t)
	callStart := toolCallStart(0, "call_é", "write") // 7 + 5 bytes
	fits(t, 12, start(nil), callStart)
	if index := refusedForSize(t, 11, []*aiv1.ModelEvent{start(nil)}, callStart); index != 1 {
		t.Fatalf("refused event %d", index)
	}
	signed := &aiv1.ModelEvent{Event: &aiv1.ModelEvent_TextEnd{TextEnd: &aiv1.TextEndEvent{TextSignature: proto.String("sig-é")}}} // 6
	fits(t, 8, start(nil), textStart(0), textDelta(0, "hi"), signed)
	if index := refusedForSize(t, 7, []*aiv1.ModelEvent{start(nil), textStart(0), textDelta(0, "hi")}, signed); index != 3 {
		t.Fatalf("refused event %d", index)
	}
	thinkingStart := &aiv1.ModelEvent{Event: &aiv1.ModelEvent_ThinkingStart{ThinkingStart: &aiv1.ThinkingStartEvent{}}}
	thinkingEnd := &aiv1.ModelEvent{Event: &aiv1.ModelEvent_ThinkingEnd{ThinkingEnd: &aiv1.ThinkingEndEvent{ThinkingSignature: proto.String("abcdef")}}}
	if index := refusedForSize(t, 5, []*aiv1.ModelEvent{start(nil), thinkingStart}, thinkingEnd); index != 2 {
		t.Fatalf("refused event %d", index)
	}

	// Endless calls with 8 KiB ids and no arguments: each holds 8,195 bytes once ended (its id and
	// name, then the ended call's "{}"), so the eighth start passes 64 KiB.
	long := strings.Repeat("x", 8192)
	events := []*aiv1.ModelEvent{start(nil)}
	for index := range uint32(7) {
		end := &aiv1.ToolCallEndEvent{ContentIndex: index, ToolCall: &aiv1.ToolCall{Id: long, Name: "n", ArgumentsJson: proto.String("{}")}}
		events = append(events, toolCallStart(index, long, "n"), &aiv1.ModelEvent{Event: &aiv1.ModelEvent_ToolcallEnd{ToolcallEnd: end}})
	}
	fits(t, 7*8195, events...)
	if index := refusedForSize(t, 64<<10, events, toolCallStart(7, long, "n")); index != 15 {
		t.Fatalf("refused event %d", index)
	}
}

func TestAnEndedToolCallCountsWhatItHoldsBeyondTheStreamedOne(t *testing.T) {
	bound(t)
	opening := []*aiv1.ModelEvent{start(nil), toolCallStart(0, "c", "n"), toolCallDelta(0, `{"a":1}`)}
	end := func(call *aiv1.ToolCall) *aiv1.ModelEvent {
		return &aiv1.ModelEvent{Event: &aiv1.ModelEvent_ToolcallEnd{ToolcallEnd: &aiv1.ToolCallEndEvent{ToolCall: call}}}
	}
	// The call as it streamed (1 + 1 + 7 bytes) is not counted twice.
	fits(t, 9, append(slices.Clone(opening), end(&aiv1.ToolCall{Id: "c", Name: "n", ArgumentsJson: proto.String(`{"a":1}`)}))...)
	// Beyond it: raw arguments (7), a signature (3), and a field the schema does not know (4 bytes).
	more := &aiv1.ToolCall{Id: "c", Name: "n", ArgumentsJson: proto.String(`{"a":1}`), RawArguments: proto.String(`{"a":1}`), ThoughtSignature: proto.String("sig")}
	more.ProtoReflect().SetUnknown([]byte{0xa2, 0x06, 0x01, 'x'})
	fits(t, 23, append(slices.Clone(opening), end(more))...)
	if index := refusedForSize(t, 22, opening, end(more)); index != 3 {
		t.Fatalf("refused event %d", index)
	}
}
