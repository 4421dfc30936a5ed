package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"time"

	aiv1 "github.com/pi-proto/pi-proto/go/gen/pi/ai/v1"
	conformancev1 "github.com/pi-proto/pi-proto/go/gen/pi/conformance/v1"
	"github.com/pi-proto/pi-proto/go/piproto"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// One function per case kind; each returns how the runtime's outcome differs from the case's
// expected one, or "" when they agree.

func runWire(c *conformancev1.WireCase) string {
	if !strings.HasPrefix(c.GetType(), "pi.ai.v1.") {
		return fmt.Sprintf("no pi.ai.v1 type %s", c.GetType())
	}
	// Every generated type of pi.ai.v1 (StreamBatchedResponse among them) is in the global registry.
	found, err := protoregistry.GlobalTypes.FindMessageByName(protoreflect.FullName(c.GetType()))
	if err != nil {
		return err.Error()
	}
	message := found.New().Interface()
	if err := proto.Unmarshal(c.GetBinary(), message); err != nil {
		return fmt.Sprintf("cannot decode the bytes: %v", err)
	}
	if encoded, err := piproto.MarshalCanonical(message); err != nil || !bytes.Equal(encoded, c.GetBinary()) {
		return fmt.Sprintf("re-encoding gives other bytes (%v)", err)
	}
	printed, err := protojson.Marshal(message)
	if err != nil {
		return fmt.Sprintf("cannot print ProtoJSON: %v", err)
	}
	expected, err := protojson.Marshal(c.GetJson())
	if err != nil {
		return err.Error()
	}
	if !sameJSON(printed, expected) {
		return fmt.Sprintf("ProtoJSON differs: %s", printed)
	}
	parsed := found.New().Interface()
	if err := protojson.Unmarshal(expected, parsed); err != nil {
		return fmt.Sprintf("cannot parse the ProtoJSON: %v", err)
	}
	want := c.GetJsonBinary()
	if len(want) == 0 {
		want = c.GetBinary()
	}
	if encoded, err := piproto.MarshalCanonical(parsed); err != nil || !bytes.Equal(encoded, want) {
		return fmt.Sprintf("parsing the ProtoJSON gives other bytes (%v)", err)
	}
	return ""
}

func runValidate(c *conformancev1.ValidateCase) string {
	var input proto.Message
	switch member := c.GetInput().(type) {
	case *conformancev1.ValidateCase_Request:
		input = member.Request
	case *conformancev1.ValidateCase_Context:
		input = member.Context
	case *conformancev1.ValidateCase_Message:
		input = member.Message
	case *conformancev1.ValidateCase_Event:
		input = member.Event
	case *conformancev1.ValidateCase_Entry:
		input = member.Entry
	case *conformancev1.ValidateCase_Model:
		input = member.Model
	default:
		return "the case sets no input"
	}
	return sameViolations(piproto.Violations(input), c.GetViolations())
}

func runStream(c *conformancev1.StreamCase) string {
	stream := piproto.NewAssistantMessageEventStreamWithLimit(int64(c.GetMaxMessageBytes()))
	var partials []*aiv1.AssistantMessage
	for index, sent := range c.GetEvents() {
		if stream.Done() {
			break // events after a terminal event are not delivered
		}
		if err := stream.Push(proto.Clone(sent).(*aiv1.ModelEvent)); err != nil {
			var broken *piproto.StreamProtocolError
			if !errors.As(err, &broken) {
				return fmt.Sprintf("event %d: %v", index, err)
			}
			if c.GetFailure() == nil {
				return fmt.Sprintf("event %d broke rule %q: %s", index, broken.RuleID, broken.Detail)
			}
			return sameFailure(broken, c.GetFailure())
		}
		_, ok := stream.Next(context.Background())
		if !ok {
			return fmt.Sprintf("event %d was not delivered", index)
		}
		partials = append(partials, proto.Clone(stream.Partial()).(*aiv1.AssistantMessage))
	}
	if c.GetFailure() != nil {
		return fmt.Sprintf("expected rule %q at event %d; every event fit", c.GetFailure().GetRuleId(), c.GetFailure().GetEventIndex())
	}
	expected := c.GetSuccess().GetPartials()
	for index := range min(len(partials), len(expected)) {
		if !proto.Equal(partials[index], expected[index]) {
			return fmt.Sprintf("the partial after event %d differs: %v", index, partials[index])
		}
	}
	if len(partials) != len(expected) {
		return fmt.Sprintf("%d events delivered, the case expects %d", len(partials), len(expected))
	}
	want := c.GetSuccess().GetResult()
	switch {
	case want == nil && stream.Done():
		return "the stream has a result; the case expects none"
	case want == nil:
		return ""
	case !stream.Done():
		return "the stream has no result"
	case !proto.Equal(stream.Result(context.Background()), want):
		return fmt.Sprintf("the result differs: %v", stream.Result(context.Background()))
	}
	return ""
}

func runClient(c *conformancev1.ClientCase, name, server string) string {
	settings, expect := c.GetClient(), c.GetExpect()
	request := c.GetRequest()
	if request == nil { // the one-message context a case without a request expects
		request = &aiv1.StreamRequest{Context: &aiv1.AgentContext{Messages: []*aiv1.AgentMessage{{
			Role: &aiv1.AgentMessage_User{User: &aiv1.UserMessage{Content: []*aiv1.UserContent{{
				Block: &aiv1.UserContent_Text{Text: &aiv1.TextContent{Text: "hi"}},
			}}}},
		}}}}
	}
	var clientOptions []piproto.ClientOption
	if limit := settings.GetMaxMessageBytes(); limit > 0 {
		clientOptions = append(clientOptions, piproto.WithMaxMessageBytes(int64(limit)))
	}
	// The default client: StreamBatched, which the reference server answers with the case's
	// consecutive events and frames in one batch, so every client case exercises batching.
	client, err := piproto.NewClient(server, clientOptions...)
	if err != nil {
		return err.Error()
	}
	defer func() { _ = client.Close() }()
	options := []piproto.StreamOption{
		piproto.WithProvider(request.GetProvider()),
		piproto.WithModel(request.GetModel()),
		piproto.WithCoalesceDeltas(request.GetCoalesceDeltas()),
		piproto.WithMetadata("pi-conformance-case", name),
	}
	if request.GetOptions() != nil {
		options = append(options, piproto.WithGeneration(request.GetOptions()))
	}
	if ms := settings.GetDeadlineMs(); ms > 0 {
		options = append(options, piproto.WithTimeout(time.Duration(ms)*time.Millisecond))
	}
	ctx := context.Background()
	events := client.Stream(ctx, request.GetContext(), options...)
	if ms := settings.GetCancelAfterMs(); ms > 0 {
		canceller := time.AfterFunc(time.Duration(ms)*time.Millisecond, events.Cancel) // another goroutine
		defer canceller.Stop()
	}
	count, last := 0, (*aiv1.ModelEvent)(nil)
	for event := range events.Events() {
		count, last = count+1, event
		if count == int(settings.GetCancelAfterEvents()) {
			events.Cancel()
		}
		if count == int(settings.GetCloseAfterEvents()) {
			_ = client.Close()
		}
	}
	result := events.Result(ctx)

	reason := aiv1.StopReason_STOP_REASON_UNSPECIFIED
	if last.GetDone() != nil {
		reason = last.GetDone().GetReason()
	} else if last.GetError() != nil {
		reason = last.GetError().GetReason()
	}
	if reason == aiv1.StopReason_STOP_REASON_UNSPECIFIED || reason != expect.GetReason() {
		return fmt.Sprintf("ended with %s %v, expected %v", piproto.EventKind(last), reason, expect.GetReason())
	}
	if count != int(expect.GetEvents()) {
		return fmt.Sprintf("%d events, expected %d", count, expect.GetEvents())
	}
	failure := events.Failure()
	switch want := expect.GetFailure().(type) {
	case nil:
		if failure != nil {
			return fmt.Sprintf("the client failed the stream itself: %s", failure.Detail)
		}
	case *conformancev1.ClientOutcome_StatusCode:
		if failure == nil || failure.StatusCode != want.StatusCode {
			return fmt.Sprintf("expected status %s, got %v", want.StatusCode, failure)
		}
	case *conformancev1.ClientOutcome_Rule:
		if failure == nil || failure.Rule == nil {
			return fmt.Sprintf("expected rule %q, got %v", want.Rule.GetRuleId(), failure)
		}
		if problem := sameFailure(failure.Rule, want.Rule); problem != "" {
			return problem
		}
	}
	if want := expect.GetResult(); want != nil {
		return sameResult(result, want)
	}
	return ""
}

func runCost(c *conformancev1.CostCase) string {
	got, want := piproto.CalculateCost(c.GetRates(), c.GetUsage()), c.GetCost()
	parts := func(cost *aiv1.Cost) []uint64 {
		return []uint64{
			math.Float64bits(cost.GetInput()), math.Float64bits(cost.GetOutput()), math.Float64bits(cost.GetCacheRead()),
			math.Float64bits(cost.GetCacheWrite()), math.Float64bits(cost.GetTotal()),
		}
	}
	// Its presence too: pi sets it false on every cost it computes.
	sameFlag := (got.TotalFromProvider == nil) == (want.TotalFromProvider == nil) && got.GetTotalFromProvider() == want.GetTotalFromProvider()
	if !slices.Equal(parts(got), parts(want)) || !sameFlag {
		return fmt.Sprintf("costs %v", got)
	}
	return ""
}

// runPartialJSON streams the text into a tool call through the public accumulator, as one delta
// and then one character at a time, and compares the partial's arguments_json both times.
func runPartialJSON(c *conformancev1.PartialJsonCase) string {
	whole := []string{c.GetText()}
	var characters []string
	for _, char := range c.GetText() {
		characters = append(characters, string(char))
	}
	for _, deltas := range [][]string{whole, characters} {
		accumulator := piproto.NewAccumulator()
		events := []*aiv1.ModelEvent{
			{Event: &aiv1.ModelEvent_Start{Start: &aiv1.StartEvent{Header: &aiv1.AssistantMessage{}}}},
			{Event: &aiv1.ModelEvent_ToolcallStart{ToolcallStart: &aiv1.ToolCallStartEvent{Id: "c", Name: "n"}}},
		}
		for _, delta := range deltas {
			events = append(events, &aiv1.ModelEvent{Event: &aiv1.ModelEvent_ToolcallDelta{ToolcallDelta: &aiv1.ToolCallDeltaEvent{Delta: delta}}})
		}
		for index, event := range events {
			if err := accumulator.Apply(event); err != nil {
				return fmt.Sprintf("event %d: %v", index, err)
			}
		}
		if got := accumulator.Partial().GetContent()[0].GetToolCall().GetArgumentsJson(); got != c.GetCompleted() {
			return fmt.Sprintf("completes as %q from %d deltas", got, len(deltas))
		}
	}
	return ""
}

// Comparisons of structured outcomes.

func sameViolations(found []piproto.Violation, expected []*conformancev1.Violation) string {
	got := make([]string, len(found))
	for i, violation := range found {
		got[i] = violation.FieldPath + " " + violation.RuleID
	}
	want := make([]string, len(expected))
	for i, violation := range expected {
		want[i] = violation.GetFieldPath() + " " + violation.GetRuleId()
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		return fmt.Sprintf("violations %q, expected %q", got, want)
	}
	return ""
}

func sameFailure(broken *piproto.StreamProtocolError, expected *conformancev1.StreamFailure) string {
	if broken.EventIndex != int(expected.GetEventIndex()) || broken.RuleID != expected.GetRuleId() {
		return fmt.Sprintf("rule %q at event %d, expected %q at %d (%s)",
			broken.RuleID, broken.EventIndex, expected.GetRuleId(), expected.GetEventIndex(), broken.Detail)
	}
	return sameViolations(broken.Violations, expected.GetViolations())
}

// sameResult compares the final message without its error_message, which each runtime words
// its own way but must set on a failed message.
func sameResult(result, expected *aiv1.AssistantMessage) string {
	if result == nil {
		return "no final message"
	}
	got := proto.Clone(result).(*aiv1.AssistantMessage)
	failed := got.GetStopReason() == aiv1.StopReason_STOP_REASON_ERROR || got.GetStopReason() == aiv1.StopReason_STOP_REASON_ABORTED
	if failed && got.GetErrorMessage() == "" {
		return "a failed message without an error_message"
	}
	want := proto.Clone(expected).(*aiv1.AssistantMessage)
	got.ErrorMessage, want.ErrorMessage = nil, nil
	if !proto.Equal(got, want) {
		return fmt.Sprintf("the result differs: %v", got)
	}
	return ""
}

// sameJSON compares two JSON texts as values: objects without order, numbers as doubles.
func sameJSON(a, b []byte) bool {
	var left, right any
	if json.Unmarshal(a, &left) != nil || json.Unmarshal(b, &right) != nil {
		return false
	}
	return reflect.DeepEqual(left, right)
}
