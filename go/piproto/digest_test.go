// The digest a terminal event carries of the content its stream built (rule "terminal-digest").

package piproto_test

import (
	"encoding/base64"
	"errors"
	"testing"

	aiv1 "github.com/pi-proto/pi-proto/go/gen/pi/ai/v1"
	"github.com/pi-proto/pi-proto/go/piproto"
	"google.golang.org/protobuf/proto"
)

func digestOf(t *testing.T, content ...*aiv1.AssistantContent) []byte {
	t.Helper()
	digest, err := piproto.ContentSHA256(content)
	if err != nil {
		t.Fatal(err)
	}
	return digest
}

func TestTheDigestIsOfTheEncodingOfAMessageHoldingOnlyTheContent(t *testing.T) {
	// The corpus's digest of the text "Hello, world" (tests/conformance/resume.yaml).
	if got := base64.StdEncoding.EncodeToString(digestOf(t, text("Hello, world"))); got != "4neC0P5vvmFOX7GfuEtvAtP92M6zjfvlFWg903GftrA=" {
		t.Fatalf("digest %s", got)
	}
	if len(digestOf(t)) != 32 {
		t.Fatal("a digest is 32 bytes")
	}
}

// withDigest is the terminal event with content_sha256 set.
func withDigest(event *aiv1.ModelEvent, digest []byte) *aiv1.ModelEvent {
	if body := event.GetDone(); body != nil {
		body.ContentSha256 = digest
	} else {
		event.GetError().ContentSha256 = digest
	}
	return event
}

func TestATerminalEventWithTheDigestOfTheContentBuiltEndsTheStream(t *testing.T) {
	message := sample()
	events := eventsOf(message, 4)
	withDigest(events[len(events)-1], digestOf(t, message.GetContent()...))
	accumulator := applyAll(t, events...)
	assertProtoEqual(t, accumulator.Partial(), message)
}

func TestADigestOfOtherContentBreaksRuleTerminalDigestAndKeepsThePartial(t *testing.T) {
	message := assistantMessage([]*aiv1.AssistantContent{text("Hi")})
	events := eventsOf(message, 8)
	terminal := withDigest(events[len(events)-1], digestOf(t, text("Hi!")))
	accumulator := applyAll(t, events[:len(events)-1]...)
	err := accumulator.Apply(terminal)
	var broken *piproto.StreamProtocolError
	if !errors.As(err, &broken) || broken.Rule != aiv1.StreamRule_STREAM_RULE_TERMINAL_DIGEST || broken.RuleID != "terminal-digest" || broken.EventIndex != len(events)-1 {
		t.Fatalf("error %v", err)
	}
	if got := piproto.TextOf(accumulator.Partial()); got != "Hi" || accumulator.Partial().GetStopReason() != aiv1.StopReason_STOP_REASON_UNSPECIFIED {
		t.Fatalf("the partial became %v", accumulator.Partial())
	}
	// The stream's own error event then keeps what was built.
	stream := piproto.NewAssistantMessageEventStream()
	for _, event := range events[:len(events)-1] {
		if err := stream.Push(event); err != nil {
			t.Fatal(err)
		}
	}
	if err := stream.Push(terminal); !errors.As(err, &broken) || broken.RuleID != "terminal-digest" {
		t.Fatalf("push: %v", err)
	}
}

func TestTheDigestOfAToolCallStillStreamingHoldsItsTextAndItsCompletion(t *testing.T) {
	streamed := &aiv1.ToolCall{Id: "call_1", Name: "read", RawArguments: proto.String(`{"path":"REA`), ArgumentsJson: proto.String(`{"path":"REA"}`)}
	content := &aiv1.AssistantContent{Block: &aiv1.AssistantContent_ToolCall{ToolCall: streamed}}
	failed := assistantMessage([]*aiv1.AssistantContent{content}, failedWith(aiv1.StopReason_STOP_REASON_ERROR, "the model failed"))
	events := []*aiv1.ModelEvent{
		start(assistantMessage(nil)),
		toolCallStart(0, "call_1", "read"),
		toolCallDelta(0, `{"path":"REA`),
		withDigest(errorEvent(aiv1.StopReason_STOP_REASON_ERROR, failed), digestOf(t, content)),
	}
	assertProtoEqual(t, applyAll(t, events...).Partial(), failed)
	// Without the completion, the digest is of other content.
	without := proto.Clone(content).(*aiv1.AssistantContent)
	without.GetToolCall().ArgumentsJson = nil
	events[len(events)-1] = withDigest(errorEvent(aiv1.StopReason_STOP_REASON_ERROR, failed), digestOf(t, without))
	accumulator := applyAll(t, events[:3]...)
	if err := accumulator.Apply(events[3]); err == nil {
		t.Fatal("a digest without the completion was accepted")
	}
}
