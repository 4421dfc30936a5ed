// While a tool call streams, the partial shows its arguments so far completed into a JSON object
// (the corpus's partial_json cases pin the completion itself), and usage that changes with an
// event reaches the partial.

package piproto_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	aiv1 "github.com/pi-proto/pi-proto/go/gen/pi/ai/v1"
	"github.com/pi-proto/pi-proto/go/piproto"
	"google.golang.org/protobuf/proto"
)

func toolCallStart(index uint32, id, name string) *aiv1.ModelEvent {
	return &aiv1.ModelEvent{Event: &aiv1.ModelEvent_ToolcallStart{ToolcallStart: &aiv1.ToolCallStartEvent{ContentIndex: index, Id: id, Name: name}}}
}

func toolCallDelta(index uint32, delta string) *aiv1.ModelEvent {
	return &aiv1.ModelEvent{Event: &aiv1.ModelEvent_ToolcallDelta{ToolcallDelta: &aiv1.ToolCallDeltaEvent{ContentIndex: index, Delta: delta}}}
}

// applyAll applies events to a new accumulator, failing the test on a broken rule.
func applyAll(t *testing.T, events ...*aiv1.ModelEvent) *piproto.Accumulator {
	t.Helper()
	accumulator := piproto.NewAccumulator()
	for _, event := range events {
		if err := accumulator.Apply(event); err != nil {
			t.Fatal(err)
		}
	}
	return accumulator
}

func TestAStreamingToolCallShowsItsArgumentsCompletedIntoAnObject(t *testing.T) {
	bound(t)
	accumulator := applyAll(t, start(nil), toolCallStart(0, "call_1", "read"))
	var raw, arguments []string
	for _, delta := range []string{`{"pa`, `th": "RE`, `ADME.md", "lim`, `it": 1`, `0, "all": tr`, `ue}`} {
		if err := accumulator.Apply(toolCallDelta(0, delta)); err != nil {
			t.Fatal(err)
		}
		call := accumulator.Partial().Content[0].GetToolCall()
		raw, arguments = append(raw, call.GetRawArguments()), append(arguments, call.GetArgumentsJson())
	}
	want := []string{
		`{}`,
		`{"path": "RE"}`,
		`{"path": "README.md"}`,
		`{"path": "README.md", "limit": 1}`,
		`{"path": "README.md", "limit": 10, "all": true}`,
		`{"path": "README.md", "limit": 10, "all": true}`,
	}
	if !slices.Equal(arguments, want) {
		t.Fatalf("arguments_json %q", arguments)
	}
	if raw[len(raw)-1] != want[len(want)-1] || raw[1] != `{"path": "RE` {
		t.Fatalf("raw_arguments %q", raw)
	}
}

func TestArgumentsThatCannotBecomeAnObjectShowAnEmptyObject(t *testing.T) {
	bound(t)
	for _, text := range []string{`[1, 2`, `{"a": 1}}`, `{"a": NaN`, `"text`, `{"a": 1e, "b": 2`, `{"a": 01`} {
		accumulator := applyAll(t, start(nil), toolCallStart(0, "call_1", "read"), toolCallDelta(0, text))
		if got := accumulator.Partial().Content[0].GetToolCall().GetArgumentsJson(); got != "{}" {
			t.Errorf("%q completes as %q", text, got)
		}
	}
}

func TestArgumentsTheCallerReplacedAreCompletedFromTheirStart(t *testing.T) {
	bound(t)
	accumulator := applyAll(t, start(nil), toolCallStart(0, "call_1", "read"), toolCallDelta(0, `{"a": "x`))
	call := accumulator.Partial().Content[0].GetToolCall()
	call.RawArguments = proto.String(`{"b": [1`)
	if err := accumulator.Apply(toolCallDelta(0, `, 2`)); err != nil {
		t.Fatal(err)
	}
	accumulator.Partial()
	if call.GetRawArguments() != `{"b": [1, 2` || call.GetArgumentsJson() != `{"b": [1, 2]}` {
		t.Fatalf("raw %q, arguments %q", call.GetRawArguments(), call.GetArgumentsJson())
	}
}

func TestAnErrorEventTheStreamMakesKeepsTheCompletedArguments(t *testing.T) {
	bound(t)
	stream := piproto.NewAssistantMessageEventStream()
	for _, event := range []*aiv1.ModelEvent{start(assistantMessage(nil)), toolCallStart(0, "call_1", "read"), toolCallDelta(0, `{"path": "REA`)} {
		if err := stream.Push(event); err != nil {
			t.Fatal(err)
		}
	}
	stream.Fail(aiv1.StopReason_STOP_REASON_ERROR, "the model is down")
	call := stream.Result(context.Background()).GetContent()[0].GetToolCall()
	if call.GetArgumentsJson() != `{"path": "REA"}` || call.GetRawArguments() != `{"path": "REA` {
		t.Fatalf("arguments %q, raw %q", call.GetArgumentsJson(), call.GetRawArguments())
	}
}

func TestAnEventCarryingUsageSetsThePartialsUsage(t *testing.T) {
	bound(t)
	header := assistantMessage(nil, func(message *aiv1.AssistantMessage) { message.Usage = &aiv1.Usage{Input: proto.Int64(10)} })
	withUsage := func(event *aiv1.ModelEvent, output int64) *aiv1.ModelEvent {
		event.Usage = &aiv1.Usage{Input: proto.Int64(10), Output: proto.Int64(output)}
		return event
	}
	accumulator := piproto.NewAccumulator()
	var outputs []int64
	final := assistantMessage([]*aiv1.AssistantContent{text("hi")}, func(message *aiv1.AssistantMessage) {
		message.Usage = &aiv1.Usage{Input: proto.Int64(10), Output: proto.Int64(7)}
	})
	for _, event := range []*aiv1.ModelEvent{
		withUsage(start(header), 1), textStart(0), withUsage(textDelta(0, "h"), 2), textDelta(0, "i"), textEnd(0),
		withUsage(done(final), 99), // a terminal event's message carries its own usage
	} {
		if err := accumulator.Apply(event); err != nil {
			t.Fatal(err)
		}
		outputs = append(outputs, accumulator.Partial().GetUsage().GetOutput())
	}
	if !slices.Equal(outputs, []int64{1, 1, 2, 2, 2, 7}) {
		t.Fatalf("output tokens after each event %v", outputs)
	}
	if header.Usage.GetOutput() != 0 {
		t.Fatal("the start event's header changed")
	}
}

// BenchmarkToolCallArgumentsIn20CharacterDeltas streams the arguments of a file to write in
// deltas of 20 characters, and the same bytes as text, at two sizes: both grow linearly, as the
// completion is built once, when the partial is read at the end.
func BenchmarkToolCallArgumentsIn20CharacterDeltas(b *testing.B) {
	for _, size := range []int{1 << 20, 4 << 20} {
		content := strings.Repeat(strings.Repeat("x", 60)+"\n", size/61)
		data, _ := json.Marshal(map[string]string{"path": "notes.txt", "content": content})
		for _, kind := range []string{"arguments", "text"} {
			events := []*aiv1.ModelEvent{start(nil), toolCallStart(0, "call_1", "write")}
			if kind == "text" {
				events[1] = &aiv1.ModelEvent{Event: &aiv1.ModelEvent_TextStart{TextStart: &aiv1.TextStartEvent{}}}
			}
			for at := 0; at < len(data); at += 20 {
				delta := string(data[at:min(at+20, len(data))])
				if kind == "text" {
					events = append(events, &aiv1.ModelEvent{Event: &aiv1.ModelEvent_TextDelta{TextDelta: &aiv1.TextDeltaEvent{Delta: delta}}})
				} else {
					events = append(events, toolCallDelta(0, delta))
				}
			}
			b.Run(fmt.Sprintf("%s/%dMB", kind, size>>20), func(b *testing.B) {
				for b.Loop() {
					accumulator := piproto.NewAccumulator()
					for _, event := range events {
						if err := accumulator.Apply(event); err != nil {
							b.Fatal(err)
						}
					}
					if kind == "arguments" && accumulator.Partial().Content[0].GetToolCall().GetArgumentsJson() != string(data) {
						b.Fatal("the arguments were not completed")
					}
				}
			})
		}
	}
}
