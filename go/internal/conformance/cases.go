package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
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

// One function per case kind, each giving what the runtime did.

func wire(c *conformancev1.WireCase) *conformancev1.CaseResult {
	if !strings.HasPrefix(c.GetType(), "pi.ai.v1.") {
		return failed(fmt.Errorf("no pi.ai.v1 type %s", c.GetType()))
	}
	// Every generated type of pi.ai.v1 is in the global registry once piproto is linked in.
	found, err := protoregistry.GlobalTypes.FindMessageByName(protoreflect.FullName(c.GetType()))
	if err != nil {
		return failed(err)
	}
	decoded := found.New().Interface()
	if err := proto.Unmarshal(c.GetBinary(), decoded); err != nil {
		return failed(fmt.Errorf("cannot decode the bytes: %w", err))
	}
	result := &conformancev1.WireResult{}
	// The corpus's bytes are in field-number order, which MarshalCanonical writes.
	if result.Binary, err = piproto.MarshalCanonical(decoded); err != nil {
		return failed(err)
	}
	printed, err := protojson.Marshal(decoded)
	if err != nil {
		return failed(fmt.Errorf("cannot print ProtoJSON: %w", err))
	}
	result.Json = string(printed)
	text, err := protojson.Marshal(c.GetJson())
	if err != nil {
		return failed(err)
	}
	parsed := found.New().Interface()
	if err := protojson.Unmarshal(text, parsed); err != nil {
		return failed(fmt.Errorf("cannot parse the ProtoJSON: %w", err))
	}
	if result.JsonBinary, err = piproto.MarshalCanonical(parsed); err != nil {
		return failed(err)
	}
	return &conformancev1.CaseResult{Result: &conformancev1.CaseResult_Wire{Wire: result}}
}

func validate(c *conformancev1.ValidateCase) *conformancev1.CaseResult {
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
		return failed(errors.New("the case sets no input"))
	}
	found := &conformancev1.ValidateResult{Violations: violations(piproto.Violations(input))}
	return &conformancev1.CaseResult{Result: &conformancev1.CaseResult_Validate{Validate: found}}
}

// stream pushes the events into a new event stream, taking each one it accepts, up to a
// terminal event or the first broken rule.
func stream(c *conformancev1.StreamCase) *conformancev1.CaseResult {
	events := piproto.NewAssistantMessageEventStreamWithLimit(int64(c.GetMaxMessageBytes()))
	result := &conformancev1.StreamResult{}
	for index, sent := range c.GetEvents() {
		if events.Done() {
			break // nothing is delivered after a terminal event
		}
		if err := events.Push(proto.Clone(sent).(*aiv1.ModelEvent)); err != nil {
			var broken *piproto.StreamProtocolError
			if !errors.As(err, &broken) {
				return failed(fmt.Errorf("event %d: %w", index, err))
			}
			result.Failure = streamFailure(broken)
			break
		}
		if _, ok := events.Next(context.Background()); !ok {
			return failed(fmt.Errorf("event %d was accepted but not delivered", index))
		}
		result.Partials = append(result.Partials, proto.Clone(events.Partial()).(*aiv1.AssistantMessage))
	}
	if result.Failure == nil && events.Done() {
		result.Result = events.Result(context.Background())
	}
	return &conformancev1.CaseResult{Result: &conformancev1.CaseResult_Stream{Stream: result}}
}

// client makes one call of the gRPC client to the reference server, consumed as the case's
// settings say.
func client(c *conformancev1.ClientCase, name, server, protocol string) *conformancev1.CaseResult {
	if protocol != "" && protocol != "grpc" {
		return failed(fmt.Errorf("the Go client speaks gRPC only, not %q", protocol))
	}
	settings, request := c.GetClient(), c.GetRequest()
	var clientOptions []piproto.ClientOption
	if limit := settings.GetMaxMessageBytes(); limit > 0 {
		clientOptions = append(clientOptions, piproto.WithMaxMessageBytes(int64(limit)))
	}
	// The default client calls StreamBatched, which the reference server answers with the case's
	// consecutive events in one batch, so every client case goes through batches.
	caller, err := piproto.NewClient(server, clientOptions...)
	if err != nil {
		return failed(err)
	}
	defer func() { _ = caller.Close() }()
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
	events := caller.Stream(ctx, request.GetContext(), options...)
	if ms := settings.GetCancelAfterMs(); ms > 0 {
		canceller := time.AfterFunc(time.Duration(ms)*time.Millisecond, events.Cancel) // from another goroutine
		defer canceller.Stop()
	}
	outcome := &conformancev1.ClientOutcome{}
	var last *aiv1.ModelEvent
	for event := range events.Events() {
		outcome.Events++
		last = event
		if outcome.Events == settings.GetCancelAfterEvents() {
			events.Cancel()
		}
		if outcome.Events == settings.GetCloseAfterEvents() {
			_ = caller.Close()
		}
	}
	if done := last.GetDone(); done != nil {
		outcome.Reason = done.GetReason()
	} else if failure := last.GetError(); failure != nil {
		outcome.Reason = failure.GetReason()
	}
	outcome.Result = events.Result(ctx)
	if failure := events.Failure(); failure != nil && failure.Rule != nil {
		outcome.Failure = &conformancev1.ClientOutcome_Rule{Rule: streamFailure(failure.Rule)}
	} else if failure != nil {
		outcome.Failure = &conformancev1.ClientOutcome_StatusCode{StatusCode: failure.StatusCode}
	}
	return &conformancev1.CaseResult{Result: &conformancev1.CaseResult_Client{Client: outcome}}
}

func cost(c *conformancev1.CostCase) *conformancev1.CaseResult {
	return &conformancev1.CaseResult{Result: &conformancev1.CaseResult_Cost{Cost: piproto.CalculateCost(c.GetRates(), c.GetUsage())}}
}

// piJSON reads the case's text as the value the case expects and writes back what it read (an
// event without its partial in pi 1.6's delta-only form), and writes the case's edited entry; a
// refusal is the path it names.
func piJSON(c *conformancev1.PiJsonCase) *conformancev1.CaseResult {
	result, err := readAndWrite(c)
	if refused := (*piproto.PiJSONError)(nil); errors.As(err, &refused) {
		result = &conformancev1.PiJsonResult{Read: &conformancev1.PiJsonResult_ErrorPath{ErrorPath: refused.Path}}
	} else if err != nil {
		return failed(err)
	}
	return &conformancev1.CaseResult{Result: &conformancev1.CaseResult_PiJson{PiJson: result}}
}

func readAndWrite(c *conformancev1.PiJsonCase) (*conformancev1.PiJsonResult, error) {
	text := []byte(c.GetText())
	result := &conformancev1.PiJsonResult{}
	var written []byte
	switch c.GetExpect().(type) {
	case *conformancev1.PiJsonCase_Session:
		entries, warnings, err := piproto.ReadSession(bytes.NewReader(text))
		if err != nil {
			return nil, err
		}
		session := &conformancev1.PiSession{Entries: entries}
		for _, warning := range warnings {
			session.WarnedLines = append(session.WarnedLines, uint32(warning.Line))
		}
		result.Read = &conformancev1.PiJsonResult_Session{Session: session}
		var out bytes.Buffer
		if err := piproto.WriteSession(&out, entries); err != nil {
			return nil, err
		}
		written = out.Bytes()
	case *conformancev1.PiJsonCase_Event:
		event, err := piproto.EventFromPi(text)
		if err != nil {
			return nil, err
		}
		form := piproto.WithPartial
		if event.GetPartial() == nil {
			form = piproto.DeltaOnly
		}
		result.Read = &conformancev1.PiJsonResult_Event{Event: event}
		written, err = piproto.EventToPi(event, form)
		if err != nil {
			return nil, err
		}
	case *conformancev1.PiJsonCase_Context:
		context, err := piproto.ContextFromPi(text)
		if err != nil {
			return nil, err
		}
		result.Read = &conformancev1.PiJsonResult_Context{Context: context}
		if written, err = piproto.ContextToPi(context); err != nil {
			return nil, err
		}
	default:
		entry, err := piproto.EntryFromPi(text)
		if err != nil {
			return nil, err
		}
		result.Read = &conformancev1.PiJsonResult_Entry{Entry: entry}
		if written, err = piproto.EntryToPi(entry); err != nil {
			return nil, err
		}
		if c.GetEdited() != nil {
			edited, err := piproto.EntryToPi(c.GetEdited())
			if err != nil {
				return nil, err
			}
			result.EditedWritten = string(edited)
		}
	}
	result.Written = string(written)
	return result, nil
}

// partialJSON streams the text into a tool call through the public accumulator, as one delta and
// as one code point per delta, and gives the partial's arguments_json after each.
func partialJSON(c *conformancev1.PartialJsonCase) *conformancev1.CaseResult {
	var characters []string
	for _, char := range c.GetText() {
		characters = append(characters, string(char))
	}
	whole, err := completion([]string{c.GetText()})
	if err != nil {
		return failed(err)
	}
	byCharacter, err := completion(characters)
	if err != nil {
		return failed(err)
	}
	completed := &conformancev1.PartialJsonResult{Whole: whole, ByCharacter: byCharacter}
	return &conformancev1.CaseResult{Result: &conformancev1.CaseResult_PartialJson{PartialJson: completed}}
}

// completion is the arguments_json of a tool call after these deltas.
func completion(deltas []string) (string, error) {
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
			return "", fmt.Errorf("event %d: %w", index, err)
		}
	}
	return accumulator.Partial().GetContent()[0].GetToolCall().GetArgumentsJson(), nil
}

func streamFailure(broken *piproto.StreamProtocolError) *conformancev1.StreamFailure {
	return &conformancev1.StreamFailure{
		EventIndex: uint32(broken.EventIndex),
		RuleId:     piproto.StreamRuleID(broken.Rule),
		Violations: violations(broken.Violations),
	}
}

func violations(found []piproto.Violation) []*conformancev1.Violation {
	out := make([]*conformancev1.Violation, len(found))
	for i, violation := range found {
		out[i] = &conformancev1.Violation{FieldPath: violation.FieldPath, RuleId: violation.RuleID}
	}
	return out
}
