package piproto

import (
	"strings"
	"testing"
	"unsafe"

	aiv1 "github.com/pi-proto/pi-proto/go/gen/pi/ai/v1"
)

func argumentDelta(delta string) *aiv1.ModelEvent {
	return &aiv1.ModelEvent{Event: &aiv1.ModelEvent_ToolcallDelta{ToolcallDelta: &aiv1.ToolCallDeltaEvent{Delta: delta}}}
}

func openedToolCall() []*aiv1.ModelEvent {
	return []*aiv1.ModelEvent{
		{Event: &aiv1.ModelEvent_Start{Start: &aiv1.StartEvent{Header: &aiv1.AssistantMessage{}}}},
		{Event: &aiv1.ModelEvent_ToolcallStart{ToolcallStart: &aiv1.ToolCallStartEvent{Id: "call_1", Name: "write"}}},
	}
}

func TestADeltaBuildsNoCompletionOfTheArguments(t *testing.T) {
	// Completing the arguments copies the text so far: at every delta, that is quadratic in their
	// length. A delta leaves them empty; Partial completes them, reading only the new text.
	stream := NewAssistantMessageEventStream()
	for _, event := range openedToolCall() {
		if err := stream.Push(event); err != nil {
			t.Fatal(err)
		}
	}
	for _, delta := range append([]string{`{"a": "`}, strings.Split(strings.Repeat("x", 1000), "")...) {
		if err := stream.Push(argumentDelta(delta)); err != nil {
			t.Fatal(err)
		}
	}
	call := stream.received.partial.GetContent()[0].GetToolCall()
	if stream.received.blocks[0].arguments != nil || call.GetArgumentsJson() != "" {
		t.Fatalf("a delta completed the arguments: %q", call.GetArgumentsJson())
	}
	stream.received.Partial()
	first := stream.received.blocks[0].arguments
	if want := `{"a": "` + strings.Repeat("x", 1000) + `"}`; call.GetArgumentsJson() != want || first.read != len(call.GetRawArguments()) {
		t.Fatalf("completed as %q after reading %d bytes", call.GetArgumentsJson(), first.read)
	}
	if err := stream.Push(argumentDelta("y")); err != nil {
		t.Fatal(err)
	}
	stream.received.Partial()
	if stream.received.blocks[0].arguments != first || !strings.HasSuffix(call.GetArgumentsJson(), `xy"}`) {
		t.Fatalf("the next delta was not read on from where the completion stood: %q", call.GetArgumentsJson())
	}
}

func TestTheArgumentTextGrowsInPlace(t *testing.T) {
	// Each delta appends to a builder whose string the call shares; copying the text so far at
	// every delta would give every delta's raw_arguments a buffer of its own.
	accumulator := NewAccumulator()
	for _, event := range openedToolCall() {
		if err := accumulator.Apply(event); err != nil {
			t.Fatal(err)
		}
	}
	moves, last := 0, (*byte)(nil)
	for range 10_000 {
		if err := accumulator.Apply(argumentDelta(strings.Repeat("x", 20))); err != nil {
			t.Fatal(err)
		}
		if data := unsafe.StringData(accumulator.Partial().GetContent()[0].GetToolCall().GetRawArguments()); data != last {
			moves, last = moves+1, data
		}
	}
	if moves > 40 { // the builder doubles: about log2(200,000) moves
		t.Fatalf("the text moved %d times in 10,000 deltas", moves)
	}
}
