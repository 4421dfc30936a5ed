// The gRPC client against an in-process fake server: the README round trip, the partials,
// cancellation from the consuming loop and from another goroutine, deadlines, tokens and TLS.

package piproto_test

import (
	"cmp"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"net"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	aiv1 "github.com/pi-proto/pi-proto/go/gen/pi/ai/v1"
	"github.com/pi-proto/pi-proto/go/piproto"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

var readmeKinds = []string{
	"start",
	"text_start",
	"text_delta",
	"text_delta",
	"text_end",
	"toolcall_start",
	"toolcall_delta",
	"toolcall_delta",
	"toolcall_delta",
	"toolcall_end",
	"done",
}

// testContext is a context for one test, ended by its deadline.
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func newClient(t *testing.T, target string, options ...piproto.ClientOption) *piproto.Client {
	t.Helper()
	client, err := piproto.NewClient(target, options...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	return client
}

func drain(events *piproto.AssistantMessageEventStream) ([]*aiv1.ModelEvent, *aiv1.AssistantMessage) {
	var seen []*aiv1.ModelEvent
	for event := range events.Events() {
		seen = append(seen, event)
	}
	return seen, events.Result(context.Background())
}

func TestTheREADMEExample(t *testing.T) {
	bound(t)
	ctx := testContext(t)
	target := readmeServer(t, 0).target
	// README example: begin
	client, err := piproto.NewClient(target) // host:port, where `pi-proto serve` listens
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()

	events := client.Stream(ctx, &aiv1.AgentContext{Messages: []*aiv1.AgentMessage{{
		Role: &aiv1.AgentMessage_User{User: &aiv1.UserMessage{Content: []*aiv1.UserContent{{
			Block: &aiv1.UserContent_Text{Text: &aiv1.TextContent{Text: "请读取 README"}},
		}}}},
	}}})
	var kinds []string
	for event := range events.Events() { // never fails: a failure arrives as an "error" event
		kinds = append(kinds, piproto.EventKind(event)) // "start", "text_start", "text_delta", ..., "done"
	}
	message := events.Result(ctx) // the AssistantMessage the terminal event carries
	// README example: end
	if !slices.Equal(kinds, readmeKinds) {
		t.Fatalf("kinds %v", kinds)
	}
	if got := piproto.TextOf(message); got != "我先读取项目说明。" {
		t.Fatalf("text %q", got)
	}
	if events.Failure() != nil {
		t.Fatalf("failure %v", events.Failure())
	}
}

func TestTheREADMEShowsTheExampleAsTested(t *testing.T) {
	bound(t)
	source, err := os.ReadFile("client_test.go")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	region := regexp.MustCompile(`\n(\t*)// README example: begin\n((?s:.*?))\n\t*// README example: end\n`).FindSubmatch(source)
	if region == nil {
		t.Fatal("client_test.go marks no README example")
	}
	indent := string(region[1])
	lines := strings.Split(string(region[2]), "\n")
	for i, line := range lines {
		lines[i] = strings.TrimPrefix(line, indent)
	}
	example := strings.Join(lines, "\n")
	example = strings.Replace(example, "if err != nil {\n\tt.Fatal(err)\n}", "if err != nil {\n\treturn err\n}", 1)
	if !strings.Contains(string(readme), "\n"+example+"\n") {
		t.Fatalf("README.md must show:\n%s", example)
	}
}

func TestTheClientSendsTheRequestItIsGiven(t *testing.T) {
	bound(t)
	received := make(chan *aiv1.StreamRequest, 1)
	headers := make(chan metadata.MD, 1)
	fake := startFake(t, func(request *aiv1.StreamRequest, stream grpc.ServerStream) error {
		received <- request
		headers <- metadataOf(stream)
		return sendFrames(stream, 0, wire(t, eventsOf(readmeTurn(), 100)...)...)
	})
	options := &aiv1.GenerationOptions{
		Temperature: proto.Float64(0.5),
		MaxTokens:   proto.Int64(100),
		Reasoning:   aiv1.ThinkingLevel_THINKING_LEVEL_HIGH,
		ToolChoice:  &aiv1.ToolChoice{Mode: aiv1.ToolChoiceMode_TOOL_CHOICE_MODE_TOOL, Tool: "read"},
		Headers:     map[string]string{"x-b": "2", "x-a": "1"},
	}
	newClient(t, fake.target).Stream(testContext(t), userContext("hi"),
		piproto.WithProvider("anthropic"), piproto.WithModel("m1"), piproto.WithGeneration(options),
		piproto.WithCoalesceDeltas(true), piproto.WithMetadata("x-case", "one")).Result(testContext(t))
	want := &aiv1.StreamRequest{Provider: "anthropic", Model: "m1", Context: userContext("hi"), Options: options, CoalesceDeltas: true, Resumable: true}
	assertProtoEqual(t, <-received, want)
	if got := (<-headers).Get("x-case"); !slices.Equal(got, []string{"one"}) {
		t.Fatalf("x-case %v", got)
	}
}

func TestAModelOfTheCatalogIsNamedByItsProviderAndID(t *testing.T) {
	bound(t)
	received := make(chan *aiv1.StreamRequest, 1)
	fake := startFake(t, func(request *aiv1.StreamRequest, stream grpc.ServerStream) error {
		received <- request
		return sendFrames(stream, 0, wire(t, eventsOf(readmeTurn(), 100)...)...)
	})
	model := &aiv1.Model{Id: "claude-opus-4-5", Provider: "anthropic", Name: "Claude Opus 4.5"}
	newClient(t, fake.target).Stream(testContext(t), userContext("hi"), piproto.WithModelOf(model)).Result(testContext(t))
	if request := <-received; request.Provider != "anthropic" || request.Model != "claude-opus-4-5" {
		t.Fatalf("provider %q, model %q", request.Provider, request.Model)
	}
}

// catalog is what the catalog fake serves: one id served by two providers, and another.
func catalog() []*aiv1.Model {
	return []*aiv1.Model{
		{Id: "opus", Provider: "anthropic", Name: "Opus", Cost: &aiv1.ModelCost{Input: 5, Output: 25}},
		{Id: "opus", Provider: "bedrock", Name: "Opus on Bedrock"},
		{Id: "gpt", Provider: "openai", Input: []aiv1.InputKind{aiv1.InputKind_INPUT_KIND_TEXT, aiv1.InputKind_INPUT_KIND_IMAGE}},
	}
}

func TestListModelsListsTheCatalogOrOneProvidersPart(t *testing.T) {
	bound(t)
	ctx := testContext(t)
	client := newClient(t, startCatalog(t, catalog()...).target)
	every, err := client.ListModels(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	assertProtoEqual(t, &aiv1.ListModelsResponse{Models: every}, &aiv1.ListModelsResponse{Models: catalog()})
	bedrock, err := client.ListModels(ctx, "bedrock")
	if err != nil || len(bedrock) != 1 || bedrock[0].Name != "Opus on Bedrock" {
		t.Fatalf("bedrock's: %v, %v", bedrock, err)
	}
}

func TestGetModelFindsAModelByIDAndProvider(t *testing.T) {
	bound(t)
	ctx := testContext(t)
	client := newClient(t, startCatalog(t, catalog()...).target)
	model, err := client.GetModel(ctx, "opus", "bedrock")
	if err != nil || model.Name != "Opus on Bedrock" {
		t.Fatalf("bedrock's opus: %v, %v", model, err)
	}
	if model, err = client.GetModel(ctx, "gpt", ""); err != nil || model.Provider != "openai" {
		t.Fatalf("gpt: %v, %v", model, err)
	}
}

func TestACatalogCallThatFailsIsACallErrorWithItsStatusCode(t *testing.T) {
	bound(t)
	ctx := testContext(t)
	_, err := newClient(t, startCatalog(t, catalog()...).target).GetModel(ctx, "opus", "openai")
	var failed *piproto.CallError
	if !errors.As(err, &failed) || failed.StatusCode != "NOT_FOUND" || failed.Method != "GetModel" ||
		!strings.Contains(failed.Detail, "anthropic/opus") || status.Code(err) != codes.NotFound {
		t.Fatalf("error %v", err)
	}
	// A server without the catalog methods, and no server at all.
	_, err = newClient(t, readmeServer(t, 0).target).ListModels(ctx, "")
	if !errors.As(err, &failed) || failed.StatusCode != "UNIMPLEMENTED" || failed.Method != "ListModels" {
		t.Fatalf("error %v", err)
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := listener.Addr().String()
	_ = listener.Close()
	if _, err = newClient(t, gone).ListModels(ctx, ""); !errors.As(err, &failed) || failed.StatusCode != "UNAVAILABLE" {
		t.Fatalf("error %v", err)
	}
}

func TestCatalogCallsSendTheToken(t *testing.T) {
	bound(t)
	fake := startCatalog(t, catalog()...)
	if _, err := newClient(t, fake.target, piproto.WithToken("s3cret")).ListModels(testContext(t), ""); err != nil {
		t.Fatal(err)
	}
	if got := fake.headersSeen().Get("authorization"); !slices.Equal(got, []string{"Bearer s3cret"}) {
		t.Fatalf("authorization %v", got)
	}
}

func metadataOf(stream grpc.ServerStream) metadata.MD {
	md, _ := metadata.FromIncomingContext(stream.Context())
	return md
}

func TestThePartialIsRebuiltAtEveryStep(t *testing.T) {
	bound(t)
	ctx := testContext(t)
	var steps []*aiv1.AssistantMessage
	var seenKinds []string
	stream := newClient(t, readmeServer(t, 5*time.Millisecond).target).Stream(ctx, userContext("hi"))
	for event := range stream.Events() {
		seenKinds = append(seenKinds, piproto.EventKind(event))
		steps = append(steps, proto.Clone(stream.Partial()).(*aiv1.AssistantMessage))
	}
	if !slices.Equal(seenKinds, readmeKinds) {
		t.Fatalf("kinds %v", seenKinds)
	}
	if len(steps[0].Content) != 0 || steps[0].GetModel() != "scripted-v1" {
		t.Fatalf("start: %v", steps[0])
	}
	if piproto.TextOf(steps[2]) != "我先读取项目说明" || piproto.TextOf(steps[3]) != "我先读取项目说明。" {
		t.Fatalf("texts %q, %q", piproto.TextOf(steps[2]), piproto.TextOf(steps[3]))
	}
	var raw, arguments []string
	for _, index := range []int{6, 7, 8} {
		call := callAt(t, steps[index], 1)
		if call.Id != "call_1" || call.Name != "read" {
			t.Fatalf("step %d: %v", index, call)
		}
		raw, arguments = append(raw, call.GetRawArguments()), append(arguments, call.GetArgumentsJson())
	}
	if want := []string{`{"path":`, `{"path":"README.`, `{"path":"README.md"}`}; !slices.Equal(raw, want) {
		t.Fatalf("raw arguments %q", raw)
	}
	if want := []string{`{}`, `{"path":"README."}`, `{"path":"README.md"}`}; !slices.Equal(arguments, want) {
		t.Fatalf("arguments %q", arguments)
	}
	assertProtoEqual(t, steps[10], readmeTurn())
}

// blockedServer sends a start event, then waits for the client to go away.
func blockedServer(t *testing.T) *fakeServer {
	return startFake(t, func(_ *aiv1.StreamRequest, stream grpc.ServerStream) error {
		if err := sendFrames(stream, 0, wire(t, start(assistantMessage(nil)))...); err != nil {
			return err
		}
		<-stream.Context().Done()
		return stream.Context().Err()
	})
}

func TestCancelInTheConsumingLoopEndsTheStreamWithAbortedAndNoFailure(t *testing.T) {
	bound(t)
	ctx := testContext(t)
	events := newClient(t, readmeServer(t, 0).target).Stream(ctx, userContext("hi"))
	var seen []*aiv1.ModelEvent
	for event := range events.Events() {
		seen = append(seen, event)
		if len(seen) == 3 {
			events.Cancel() // the call is read as it is consumed: nothing more was read ahead
		}
	}
	assertKinds(t, seen, "start", "text_start", "text_delta", "error")
	message := events.Result(ctx)
	assertStopped(t, message, aiv1.StopReason_STOP_REASON_ABORTED, "cancelled")
	if piproto.TextOf(message) != "我先读取项目说明" || message.GetModel() != "scripted-v1" || events.Failure() != nil {
		t.Fatalf("message %v, failure %v", message, events.Failure())
	}
}

func TestCancelFromAnotherGoroutineReachesConsumersThatWait(t *testing.T) {
	bound(t)
	ctx := testContext(t)
	events := newClient(t, blockedServer(t).target).Stream(ctx, userContext("hi"))
	var mu sync.Mutex
	var seen []string
	var consumers sync.WaitGroup
	for range 3 {
		consumers.Go(func() {
			for event := range events.Events() {
				mu.Lock()
				seen = append(seen, piproto.EventKind(event))
				mu.Unlock()
			}
		})
	}
	results := make(chan *aiv1.AssistantMessage, 1)
	go func() { results <- events.Result(ctx) }()
	// Every consumer waits for the event after start: one for the event, two for their turn.
	waitFor(t, "the consumers to wait after start", func() bool {
		mu.Lock()
		started := slices.Equal(seen, []string{"start"})
		mu.Unlock()
		return started && parked(t, "take") == 1 && parked(t, "takeTurn") == 2 && parked(t, "Result") == 1
	})
	events.Cancel()
	consumers.Wait()
	slices.Sort(seen)
	if !slices.Equal(seen, []string{"error", "start"}) {
		t.Fatalf("seen %v", seen)
	}
	assertStopped(t, <-results, aiv1.StopReason_STOP_REASON_ABORTED, "cancelled")
	if events.Failure() != nil {
		t.Fatalf("failure %v", events.Failure())
	}
}

func TestCancellingTheContextEndsTheStreamWithAborted(t *testing.T) {
	bound(t)
	ctx, cancel := context.WithCancel(testContext(t))
	events := newClient(t, blockedServer(t).target).Stream(ctx, userContext("hi"))
	if first, ok := events.Next(ctx); !ok || piproto.EventKind(first) != "start" {
		t.Fatal("no start event")
	}
	cancel()
	var rest []*aiv1.ModelEvent
	for event, ok := events.Next(ctx); ok; event, ok = events.Next(ctx) {
		rest = append(rest, event)
	}
	assertKinds(t, rest, "error")
	assertStopped(t, events.Result(ctx), aiv1.StopReason_STOP_REASON_ABORTED, "cancelled")
}

func TestADeadlineThatPassesEndsTheStreamWithDeadlineExceeded(t *testing.T) {
	bound(t)
	// The context's deadline passes when the test says, once the start event has arrived: the
	// error event keeps the header.
	ctx := newDeadlineContext()
	events := newClient(t, blockedServer(t).target).Stream(ctx, userContext("hi"))
	if first, ok := events.Next(testContext(t)); !ok || piproto.EventKind(first) != "start" {
		t.Fatal("no start event")
	}
	ctx.pass()
	rest, message := drain(events)
	assertKinds(t, rest, "error")
	if message.StopReason != aiv1.StopReason_STOP_REASON_ERROR || message.GetErrorMessage() == "" || message.GetModel() != "scripted-v1" {
		t.Fatalf("the context's: message %v", message)
	}
	if failure := events.Failure(); failure == nil || failure.StatusCode != "DEADLINE_EXCEEDED" {
		t.Fatalf("the context's: failure %v", failure)
	}

	// The timeouts the options set pass against a server that never answers (so whenever they
	// pass, nothing came before); the caller's context has no deadline, so only the option's can
	// end the call.
	silent := startFake(t, func(_ *aiv1.StreamRequest, stream grpc.ServerStream) error {
		<-stream.Context().Done()
		return stream.Context().Err()
	}).target
	for name, call := range map[string]func() *piproto.AssistantMessageEventStream{
		"the call's": func() *piproto.AssistantMessageEventStream {
			return newClient(t, silent).Stream(context.Background(), userContext("hi"), piproto.WithTimeout(100*time.Millisecond))
		},
		"the client's default": func() *piproto.AssistantMessageEventStream {
			return newClient(t, silent, piproto.WithDefaultTimeout(100*time.Millisecond)).Stream(context.Background(), userContext("hi"))
		},
	} {
		events := call()
		seen, message := drain(events)
		assertKinds(t, seen, "error")
		if message.StopReason != aiv1.StopReason_STOP_REASON_ERROR || message.GetErrorMessage() == "" {
			t.Fatalf("%s: message %v", name, message)
		}
		if failure := events.Failure(); failure == nil || failure.StatusCode != "DEADLINE_EXCEEDED" {
			t.Fatalf("%s: failure %v", name, failure)
		}
	}
}

func TestAStatusBecomesAnErrorEventWithItsMessageAndItsCodeAsTheFailure(t *testing.T) {
	bound(t)
	for _, case_ := range []struct {
		code          codes.Code
		message, name string
	}{
		{codes.Unavailable, "the model is down", "UNAVAILABLE"},
		{codes.ResourceExhausted, "", "RESOURCE_EXHAUSTED"}, // without a message: its code's name
	} {
		fake := startFake(t, playing(wire(t, start(assistantMessage(nil))), 0, case_.code, case_.message))
		events := newClient(t, fake.target).Stream(testContext(t), userContext("hi"))
		seen, final := drain(events)
		assertKinds(t, seen, "start", "error")
		assertStopped(t, final, aiv1.StopReason_STOP_REASON_ERROR, cmp.Or(case_.message, case_.name))
		if failure := events.Failure(); failure == nil || failure.StatusCode != case_.name || failure.Rule != nil {
			t.Fatalf("failure %v", failure)
		}
	}
}

func TestBrokenRulesAreTheFailureOfTheStream(t *testing.T) {
	bound(t)
	undecodable := append(wire(t, start(assistantMessage(nil))), []byte{0x0a, 0x05, 0x61, 0x62})
	for _, case_ := range []struct {
		name   string
		frames [][]byte
		limit  int64
		index  int
		rule   string
	}{
		{"no terminal event", wire(t, eventsOf(readmeTurn(), 8)[:3]...), 0, 3, "terminal-missing"},
		{"bytes that are no event", undecodable, 0, 1, "event-decode"},
		{"an event out of place", wire(t, start(assistantMessage(nil)), textDelta(4, "x")), 0, 1, "block-exists"},
		{"more deltas than the limit", wire(t, eventsOf(readmeTurn(), 8)...), 10, 2, "size-limit"}, // 8 characters, 24 bytes
	} {
		t.Run(case_.name, func(t *testing.T) {
			fake := startFake(t, playing(case_.frames, 0, codes.OK, ""))
			events := newClient(t, fake.target, piproto.WithMaxMessageBytes(case_.limit)).Stream(testContext(t), userContext("hi"))
			seen, message := drain(events)
			if len(seen) != case_.index+1 || message.StopReason != aiv1.StopReason_STOP_REASON_ERROR || message.GetErrorMessage() == "" {
				t.Fatalf("kinds %v, message %v", kinds(seen), message)
			}
			failure := events.Failure()
			if failure == nil || failure.StatusCode != "" || failure.Rule == nil || failure.Rule.RuleID != case_.rule || piproto.StreamRuleID(failure.Rule.Rule) != case_.rule || failure.Rule.EventIndex != case_.index {
				t.Fatalf("failure %+v", failure)
			}
		})
	}
}

func TestEventsAfterTheTerminalEventAreIgnored(t *testing.T) {
	bound(t)
	events := eventsOf(assistantMessage([]*aiv1.AssistantContent{text("ok")}), 8)
	late := wire(t, textDelta(0, "late"))[0]
	fake := startFake(t, playing(append(wire(t, events...), late, []byte{0xff}), 0, codes.Internal, "late"))
	stream := newClient(t, fake.target).Stream(testContext(t), userContext("hi"))
	seen, message := drain(stream)
	assertKinds(t, seen, kinds(events)...)
	if message.StopReason != aiv1.StopReason_STOP_REASON_STOP || piproto.TextOf(message) != "ok" || stream.Failure() != nil {
		t.Fatalf("message %v, failure %v", message, stream.Failure())
	}
}

func TestCallsOfOneClientShareOneConnection(t *testing.T) {
	bound(t)
	fake := readmeServer(t, 0)
	client := newClient(t, fake.target)
	ctx := testContext(t)
	for range 3 {
		if got := piproto.TextOf(client.Stream(ctx, userContext("hi")).Result(ctx)); got != "我先读取项目说明。" {
			t.Fatalf("text %q", got)
		}
	}
	if n := fake.connections.Load(); n != 1 {
		t.Fatalf("%d connections", n)
	}
}

func TestTheCallIsReadOnlyAsFastAsItIsConsumed(t *testing.T) {
	bound(t)
	const deltas = 1000
	message := assistantMessage([]*aiv1.AssistantContent{text(strings.Repeat("x", deltas))})
	sent := make(chan struct{})
	fake := startFake(t, func(request *aiv1.StreamRequest, stream grpc.ServerStream) error {
		defer close(sent)
		return playing(wire(t, eventsOf(message, 1)...), 0, codes.OK, "")(request, stream)
	})
	ctx := testContext(t)
	events := newClient(t, fake.target).Stream(ctx, userContext("hi"))
	<-sent // every event is on its way to the client (they fit in its flow-control window); nobody reads
	most, count := 0, 0
	for range events.Events() {
		most = max(most, events.Queued())
		count++
	}
	if count != deltas+4 || most > 1 {
		t.Fatalf("%d events, at most %d queued", count, most)
	}
	if piproto.TextOf(events.Result(ctx)) != strings.Repeat("x", deltas) {
		t.Fatal("the text was not rebuilt")
	}
}

func TestNoServerIsAnErrorEventNotAFailureToCall(t *testing.T) {
	bound(t)
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := listener.Addr().String()
	_ = listener.Close()
	events := newClient(t, gone).Stream(testContext(t), userContext("hi"))
	seen, message := drain(events)
	assertKinds(t, seen, "error")
	if message.StopReason != aiv1.StopReason_STOP_REASON_ERROR || message.GetErrorMessage() == "" || events.Failure().StatusCode != "UNAVAILABLE" {
		t.Fatalf("message %v, failure %v", message, events.Failure())
	}
}

func TestAServerStoppedMidStreamGivesAnErrorEvent(t *testing.T) {
	bound(t)
	ctx := testContext(t)
	fake := blockedServer(t)
	events := newClient(t, fake.target).Stream(ctx, userContext("hi"))
	if first, ok := events.Next(ctx); !ok || piproto.EventKind(first) != "start" {
		t.Fatal("no start event")
	}
	fake.server.Stop()
	rest, message := drain(events)
	assertKinds(t, rest, "error")
	if message.StopReason != aiv1.StopReason_STOP_REASON_ERROR || message.GetErrorMessage() == "" || events.Failure().StatusCode != "UNAVAILABLE" {
		t.Fatalf("message %v, failure %v", message, events.Failure())
	}
}

func TestClosingTheClientEndsItsStreamsWithAbortedAndNoFailure(t *testing.T) {
	bound(t)
	ctx := testContext(t)
	fake := blockedServer(t)
	client, err := piproto.NewClient(fake.target)
	if err != nil {
		t.Fatal(err)
	}
	waiting := client.Stream(ctx, userContext("hi")) // its consumer waits for the event after start
	if first, ok := waiting.Next(ctx); !ok || piproto.EventKind(first) != "start" {
		t.Fatal("no start event")
	}
	unread := client.Stream(ctx, userContext("hi")) // nothing read yet
	rests := make(chan []*aiv1.ModelEvent, 1)
	go func() {
		rest, _ := drain(waiting)
		rests <- rest
	}()
	waitFor(t, "the consumer to wait", func() bool { return parked(t, "take") == 1 })
	if err := client.Close(); err != nil {
		t.Fatal(err)
	}
	assertKinds(t, <-rests, "error")
	late := client.Stream(ctx, userContext("hi")) // started after Close: ends at once
	for name, events := range map[string]*piproto.AssistantMessageEventStream{"waiting": waiting, "unread": unread, "late": late} {
		_, message := drain(events)
		assertStopped(t, message, aiv1.StopReason_STOP_REASON_ABORTED, "the client was closed")
		if events.Failure() != nil {
			t.Fatalf("%s: failure %v", name, events.Failure())
		}
	}
	_, err = client.ListModels(ctx, "")
	var callError *piproto.CallError
	if !errors.As(err, &callError) || callError.StatusCode != "CANCELED" || callError.Detail != "the client was closed" {
		t.Fatalf("ListModels after Close: %v", err)
	}
}

func TestNewClientRefusesATargetOrOptionsItCannotUse(t *testing.T) {
	for name, call := range map[string]func() (*piproto.Client, error){
		"an empty target":        func() (*piproto.Client, error) { return piproto.NewClient(" ") },
		"a token with a newline": func() (*piproto.Client, error) { return piproto.NewClient("127.0.0.1:1", piproto.WithToken("a\nb")) },
		"a token beyond ASCII":   func() (*piproto.Client, error) { return piproto.NewClient("127.0.0.1:1", piproto.WithToken("tökén")) },
		"a negative default timeout": func() (*piproto.Client, error) {
			return piproto.NewClient("127.0.0.1:1", piproto.WithDefaultTimeout(-time.Second))
		},
		"a receive limit of 0": func() (*piproto.Client, error) {
			return piproto.NewClient("127.0.0.1:1", piproto.WithMaxReceiveBytes(0))
		},
		"a negative message limit": func() (*piproto.Client, error) {
			return piproto.NewClient("127.0.0.1:1", piproto.WithMaxMessageBytes(-1))
		},
	} {
		if client, err := call(); err == nil || !strings.HasPrefix(err.Error(), "piproto: ") {
			if client != nil {
				_ = client.Close()
			}
			t.Errorf("%s: accepted (%v)", name, err)
		}
	}
}

func TestANegativeTimeoutHasPassedAlready(t *testing.T) {
	bound(t)
	fake := readmeServer(t, 0)
	events := newClient(t, fake.target).Stream(testContext(t), userContext("hi"), piproto.WithTimeout(-time.Second))
	seen, message := drain(events)
	assertKinds(t, seen, "error")
	if message.StopReason != aiv1.StopReason_STOP_REASON_ERROR || events.Failure() == nil || events.Failure().StatusCode != "DEADLINE_EXCEEDED" {
		t.Fatalf("message %v, failure %v", message, events.Failure())
	}
}

func TestAnOddNumberOfMetadataStringsIsAnInvalidRequestNotAPanic(t *testing.T) {
	bound(t)
	fake := readmeServer(t, 0)
	events := newClient(t, fake.target).Stream(testContext(t), userContext("hi"), piproto.WithMetadata("x-trace"))
	seen, message := drain(events)
	assertKinds(t, seen, "error")
	if message.StopReason != aiv1.StopReason_STOP_REASON_ERROR || events.Failure() == nil || events.Failure().StatusCode != "INVALID_ARGUMENT" {
		t.Fatalf("message %v, failure %v", message, events.Failure())
	}
	if calls := fake.methodsSeen(); len(calls) != 0 {
		t.Fatalf("sent: %v", calls)
	}
}

func TestATokenIsSentAsABearerToken(t *testing.T) {
	bound(t)
	fake := startFake(t, func(request *aiv1.StreamRequest, stream grpc.ServerStream) error {
		if got := metadataOf(stream).Get("authorization"); !slices.Equal(got, []string{"Bearer s3cret"}) {
			return status.Error(codes.Unauthenticated, "missing or invalid bearer token")
		}
		return sendFrames(stream, 0, wire(t, eventsOf(readmeTurn(), 100)...)...)
	})
	ctx := testContext(t)
	message := newClient(t, fake.target, piproto.WithToken("s3cret")).Stream(ctx, userContext("hi")).Result(ctx)
	if message.StopReason != aiv1.StopReason_STOP_REASON_TOOL_USE {
		t.Fatalf("with the token: %v", message)
	}
	events := newClient(t, fake.target, piproto.WithToken("wrong")).Stream(ctx, userContext("hi"))
	assertStopped(t, events.Result(ctx), aiv1.StopReason_STOP_REASON_ERROR, "missing or invalid bearer token")
	if events.Failure().StatusCode != "UNAUTHENTICATED" {
		t.Fatalf("failure %v", events.Failure())
	}
}

func TestTLSWithTheServersCertificate(t *testing.T) {
	bound(t)
	ctx := testContext(t)
	certificatePEM, certificate := selfSigned(t)
	fake := startFake(t, playing(wire(t, eventsOf(readmeTurn(), 100)...), 0, codes.OK, ""),
		grpc.Creds(credentials.NewServerTLSFromCert(&certificate)))
	message := newClient(t, fake.target, piproto.WithRootCertificates(certificatePEM)).Stream(ctx, userContext("hi")).Result(ctx)
	if message.StopReason != aiv1.StopReason_STOP_REASON_TOOL_USE {
		t.Fatalf("over TLS: %v", message)
	}
	// Plaintext to a TLS server, and TLS without trusting its certificate, fail in-band.
	for _, client := range []*piproto.Client{newClient(t, fake.target), newClient(t, fake.target, piproto.WithTLS(&tls.Config{MinVersion: tls.VersionTLS12}))} {
		seen, message := drain(client.Stream(ctx, userContext("hi")))
		assertKinds(t, seen, "error")
		if message.StopReason != aiv1.StopReason_STOP_REASON_ERROR || message.GetErrorMessage() == "" {
			t.Fatalf("untrusted: %v", message)
		}
	}
	if _, err := piproto.NewClient(fake.target, piproto.WithRootCertificates([]byte("not PEM"))); err == nil {
		t.Fatal("a bundle without certificates was accepted")
	}
}

// selfSigned is a certificate for 127.0.0.1 and localhost, as PEM and as a key pair.
func selfSigned(t *testing.T) ([]byte, tls.Certificate) {
	t.Helper()
	private, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	template := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "pi-proto test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:                  true,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &private.PublicKey, private)
	if err != nil {
		t.Fatal(err)
	}
	certificate := tls.Certificate{Certificate: [][]byte{der}, PrivateKey: private}
	return pemOf("CERTIFICATE", der), certificate
}
