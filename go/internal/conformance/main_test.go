package main

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"testing"

	aiv1 "github.com/pi-proto/pi-proto/go/gen/pi/ai/v1"
	conformancev1 "github.com/pi-proto/pi-proto/go/gen/pi/conformance/v1"
	"google.golang.org/protobuf/encoding/protodelim"
	"google.golang.org/protobuf/proto"
)

// The executor answers every request in order, one delimited result each, and a case it cannot
// run is an error result, not the end of the run.
func TestEveryRequestGetsItsResultInOrder(t *testing.T) {
	requests := []*conformancev1.CaseRequest{
		{Case: &conformancev1.Case{Name: "cost", Kind: &conformancev1.Case_Cost{Cost: &conformancev1.CostCase{
			Rates: &aiv1.ModelCost{Output: 2}, Usage: &aiv1.Usage{Output: proto.Int64(500_000)},
		}}}},
		{Case: &conformancev1.Case{Name: "no kind"}},
		{Case: &conformancev1.Case{Name: "wire", Kind: &conformancev1.Case_Wire{Wire: &conformancev1.WireCase{Type: "pi.conformance.v1.Case"}}}},
		{Case: &conformancev1.Case{Name: "connect", Kind: &conformancev1.Case_Client{Client: &conformancev1.ClientCase{}}}, Protocol: "connect"},
		{Case: &conformancev1.Case{Name: "partial", Kind: &conformancev1.Case_PartialJson{PartialJson: &conformancev1.PartialJsonCase{Text: `{"a": "é`}}}},
		{Case: &conformancev1.Case{Name: "pi line", Kind: &conformancev1.Case_PiJson{PiJson: &conformancev1.PiJsonCase{
			Text:   `{"type":"message","message":{"role":"user","content":"hi"}}`,
			Edited: &aiv1.TranscriptEntry{Entry: &aiv1.TranscriptEntry_Message{Message: userMessage("bye")}},
		}}}},
		{Case: &conformancev1.Case{Name: "pi event", Kind: &conformancev1.Case_PiJson{PiJson: &conformancev1.PiJsonCase{
			Text: `{"type":"text_end","contentIndex":1,"content":"a"}`, Expect: &conformancev1.PiJsonCase_Event{},
		}}}},
	}
	var in, out bytes.Buffer
	for _, request := range requests {
		if _, err := protodelim.MarshalTo(&in, request); err != nil {
			t.Fatal(err)
		}
	}
	if err := serve(&in, &out); err != nil {
		t.Fatal(err)
	}
	reader := bufio.NewReader(&out)
	var results []*conformancev1.CaseResult
	for {
		result := &conformancev1.CaseResult{}
		if err := protodelim.UnmarshalFrom(reader, result); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		results = append(results, result)
	}
	if len(results) != len(requests) {
		t.Fatalf("%d results for %d requests", len(results), len(requests))
	}
	for i, result := range results {
		if result.GetName() != requests[i].GetCase().GetName() {
			t.Fatalf("result %d is %q", i, result.GetName())
		}
	}
	if got := results[0].GetCost(); got.GetOutput() != 1 || got.GetTotal() != 1 {
		t.Errorf("cost %v", got)
	}
	for _, i := range []int{1, 2, 3} {
		if results[i].GetError() == "" {
			t.Errorf("%s: %v, want an error", results[i].GetName(), results[i])
		}
	}
	if got := results[4].GetPartialJson(); got.GetWhole() != `{"a": "é"}` || got.GetByCharacter() != got.GetWhole() {
		t.Errorf("partial JSON %v", got)
	}
	// Read and written back, and the edit written; an event without its partial in pi 1.6's form.
	if got := results[5].GetPiJson(); got.GetWritten() != requests[5].GetCase().GetPiJson().GetText() ||
		got.GetEditedWritten() != `{"role":"user","content":[{"type":"text","text":"bye"}]}` {
		t.Errorf("pi-JSON line %v", got)
	}
	if got := results[6].GetPiJson(); got.GetEvent().GetTextEnd().GetContentIndex() != 1 || got.GetWritten() != `{"type":"text_end","contentIndex":1}` {
		t.Errorf("pi-JSON event %v", got)
	}
}

func userMessage(text string) *aiv1.AgentMessage {
	content := []*aiv1.UserContent{{Block: &aiv1.UserContent_Text{Text: &aiv1.TextContent{Text: text}}}}
	return &aiv1.AgentMessage{Role: &aiv1.AgentMessage_User{User: &aiv1.UserMessage{Content: content}}}
}
