package piproto_test

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	aiv1 "github.com/pi-proto/pi-proto/go/gen/pi/ai/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// testBound is how long any one test may run.
const testBound = time.Minute

// bound ends the whole run, naming the test, if the test is still running after testBound: a
// test that hangs fails instead of waiting for go test's overall timeout.
func bound(t *testing.T) {
	timer := time.AfterFunc(testBound, func() { panic(fmt.Sprintf("%s ran for more than %v", t.Name(), testBound)) })
	t.Cleanup(func() { timer.Stop() })
}

// hangGuard is how long a test waits for something that must happen before it gives up: long
// enough that only a hang, never a busy machine, reaches it.
const hangGuard = 30 * time.Second

// waitFor waits until ready holds, looking every millisecond, and fails the test, naming what it
// waited for, after hangGuard. Tests wait for what must happen, not for a time to pass.
func waitFor(t *testing.T, what string, ready func() bool) {
	t.Helper()
	limit := time.Now().Add(hangGuard)
	for !ready() {
		if time.Now().After(limit) {
			t.Fatalf("waited %v for %s", hangGuard, what)
		}
		time.Sleep(time.Millisecond)
	}
}

// parked counts the goroutines of the running test (its function is in their stack) that are
// blocked, in a select or on a channel, inside the function or method named method: "takeTurn"
// (a consumer waiting for its turn), "take" (the consumer whose turn it is, waiting for an
// event), "waitForRoom" (a producer in Send), "Result" (of an EventStream). It tells a consumer
// that waits from one that has yet to get there, which no sleep can.
func parked(t *testing.T, method string) int {
	test, _, _ := strings.Cut(t.Name(), "/")
	ours := "piproto_test." + test // the test's function, or one of its closures
	frame := ")." + method + "("
	stacks := make([]byte, 1<<16)
	for {
		n := runtime.Stack(stacks, true)
		if n < len(stacks) {
			stacks = stacks[:n]
			break
		}
		stacks = make([]byte, 2*len(stacks))
	}
	count := 0
	for _, goroutine := range strings.Split(string(stacks), "\n\n") {
		header, body, _ := strings.Cut(goroutine, "\n")
		blocked := strings.Contains(header, "[select") || strings.Contains(header, "[chan ")
		if blocked && strings.Contains(body, frame) && (strings.Contains(body, ours+"(") || strings.Contains(body, ours+".")) {
			count++
		}
	}
	return count
}

// deadlineContext is a context whose deadline passes when the test says so (pass), not at a time
// a busy machine may reach before the test is ready for it.
type deadlineContext struct {
	context.Context
	done   chan struct{}
	passed sync.Once
}

func newDeadlineContext() *deadlineContext {
	return &deadlineContext{Context: context.Background(), done: make(chan struct{})}
}

func (c *deadlineContext) Done() <-chan struct{} { return c.done }

func (c *deadlineContext) Err() error {
	select {
	case <-c.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

// pass makes the deadline pass.
func (c *deadlineContext) pass() { c.passed.Do(func() { close(c.done) }) }

// Builders for test messages and the events that stream them.

func text(value string) *aiv1.AssistantContent {
	return &aiv1.AssistantContent{Block: &aiv1.AssistantContent_Text{Text: &aiv1.TextContent{Text: value}}}
}

func signedText(value, signature string) *aiv1.AssistantContent {
	block := text(value)
	block.GetText().TextSignature = proto.String(signature)
	return block
}

func thinking(value string, signature *string, redacted *bool) *aiv1.AssistantContent {
	return &aiv1.AssistantContent{Block: &aiv1.AssistantContent_Thinking{Thinking: &aiv1.ThinkingContent{
		Thinking: value, ThinkingSignature: signature, Redacted: redacted,
	}}}
}

func toolCall(id, name string, args map[string]any) *aiv1.AssistantContent {
	data, err := json.Marshal(args)
	if err != nil {
		panic(err)
	}
	return &aiv1.AssistantContent{Block: &aiv1.AssistantContent_ToolCall{ToolCall: &aiv1.ToolCall{
		Id: id, Name: name, ArgumentsJson: proto.String(string(data)),
	}}}
}

func rawToolCall(id, name, argumentsJSON string) *aiv1.AssistantContent {
	return &aiv1.AssistantContent{Block: &aiv1.AssistantContent_ToolCall{ToolCall: &aiv1.ToolCall{
		Id: id, Name: name, ArgumentsJson: proto.String(argumentsJSON),
	}}}
}

// assistantMessage is a finished message of the scripted model, stopped by STOP unless edit
// changes it.
func assistantMessage(content []*aiv1.AssistantContent, edits ...func(*aiv1.AssistantMessage)) *aiv1.AssistantMessage {
	message := &aiv1.AssistantMessage{
		Api:      proto.String("scripted"),
		Provider: proto.String("scripted"),
		Model:    proto.String("scripted-v1"),
		// All five counts, as pi's Usage requires of a model call.
		Usage: &aiv1.Usage{
			Input: proto.Int64(0), Output: proto.Int64(0), CacheRead: proto.Int64(0),
			CacheWrite: proto.Int64(0), TotalTokens: proto.Int64(0),
		},
		StopReason: aiv1.StopReason_STOP_REASON_STOP,
		Timestamp:  proto.Int64(1),
		Content:    content,
	}
	for _, edit := range edits {
		edit(message)
	}
	return message
}

func stoppedBy(reason aiv1.StopReason) func(*aiv1.AssistantMessage) {
	return func(message *aiv1.AssistantMessage) { message.StopReason = reason }
}

func failedWith(reason aiv1.StopReason, errorMessage string) func(*aiv1.AssistantMessage) {
	return func(message *aiv1.AssistantMessage) {
		message.StopReason = reason
		message.ErrorMessage = proto.String(errorMessage)
	}
}

// userMessage is a transcript entry holding one user text.
func userMessage(value string) *aiv1.AgentMessage {
	return &aiv1.AgentMessage{Role: &aiv1.AgentMessage_User{User: &aiv1.UserMessage{
		Content:   []*aiv1.UserContent{{Block: &aiv1.UserContent_Text{Text: &aiv1.TextContent{Text: value}}}},
		Timestamp: proto.Int64(1),
	}}}
}

// userContext is a context holding one user message: what `pi-proto stream` sends.
func userContext(value string) *aiv1.AgentContext {
	return &aiv1.AgentContext{Messages: []*aiv1.AgentMessage{userMessage(value)}}
}

func start(header *aiv1.AssistantMessage) *aiv1.ModelEvent {
	return &aiv1.ModelEvent{Event: &aiv1.ModelEvent_Start{Start: &aiv1.StartEvent{Header: header}}}
}

func textStart(index uint32) *aiv1.ModelEvent {
	return &aiv1.ModelEvent{Event: &aiv1.ModelEvent_TextStart{TextStart: &aiv1.TextStartEvent{ContentIndex: index}}}
}

func textDelta(index uint32, delta string) *aiv1.ModelEvent {
	return &aiv1.ModelEvent{Event: &aiv1.ModelEvent_TextDelta{TextDelta: &aiv1.TextDeltaEvent{ContentIndex: index, Delta: delta}}}
}

func textEnd(index uint32) *aiv1.ModelEvent {
	return &aiv1.ModelEvent{Event: &aiv1.ModelEvent_TextEnd{TextEnd: &aiv1.TextEndEvent{ContentIndex: index}}}
}

func done(message *aiv1.AssistantMessage) *aiv1.ModelEvent {
	return doneWith(message.GetStopReason(), message)
}

func doneWith(reason aiv1.StopReason, message *aiv1.AssistantMessage) *aiv1.ModelEvent {
	return &aiv1.ModelEvent{Event: &aiv1.ModelEvent_Done{Done: &aiv1.DoneEvent{Reason: reason, Message: message}}}
}

func errorEvent(reason aiv1.StopReason, message *aiv1.AssistantMessage) *aiv1.ModelEvent {
	return &aiv1.ModelEvent{Event: &aiv1.ModelEvent_Error{Error: &aiv1.ErrorEvent{Reason: reason, Message: message}}}
}

// eventsOf is the events that stream message: start, each block's start/deltas/end, then the
// terminal event carrying message itself. Deltas hold size characters (code points).
func eventsOf(message *aiv1.AssistantMessage, size int) []*aiv1.ModelEvent {
	header := &aiv1.AssistantMessage{
		Api: message.Api, Provider: message.Provider, Model: message.Model, Timestamp: message.Timestamp, Usage: &aiv1.Usage{},
	}
	events := []*aiv1.ModelEvent{start(header)}
	for i, content := range message.Content {
		index := uint32(i)
		switch block := content.Block.(type) {
		case *aiv1.AssistantContent_Text:
			events = append(events, textStart(index))
			for _, delta := range chunks(block.Text.Text, size) {
				events = append(events, textDelta(index, delta))
			}
			events = append(events, &aiv1.ModelEvent{Event: &aiv1.ModelEvent_TextEnd{TextEnd: &aiv1.TextEndEvent{
				ContentIndex: index, TextSignature: block.Text.TextSignature,
			}}})
		case *aiv1.AssistantContent_Thinking:
			events = append(events, &aiv1.ModelEvent{Event: &aiv1.ModelEvent_ThinkingStart{ThinkingStart: &aiv1.ThinkingStartEvent{ContentIndex: index}}})
			for _, delta := range chunks(block.Thinking.Thinking, size) {
				events = append(events, &aiv1.ModelEvent{Event: &aiv1.ModelEvent_ThinkingDelta{ThinkingDelta: &aiv1.ThinkingDeltaEvent{ContentIndex: index, Delta: delta}}})
			}
			events = append(events, &aiv1.ModelEvent{Event: &aiv1.ModelEvent_ThinkingEnd{ThinkingEnd: &aiv1.ThinkingEndEvent{
				ContentIndex: index, ThinkingSignature: block.Thinking.ThinkingSignature, Redacted: block.Thinking.Redacted,
			}}})
		case *aiv1.AssistantContent_ToolCall:
			call := block.ToolCall
			events = append(events, &aiv1.ModelEvent{Event: &aiv1.ModelEvent_ToolcallStart{ToolcallStart: &aiv1.ToolCallStartEvent{
				ContentIndex: index, Id: call.Id, Name: call.Name,
			}}})
			raw := call.GetArgumentsJson()
			if call.RawArguments != nil {
				raw = *call.RawArguments
			}
			for _, delta := range chunks(raw, size) {
				events = append(events, &aiv1.ModelEvent{Event: &aiv1.ModelEvent_ToolcallDelta{ToolcallDelta: &aiv1.ToolCallDeltaEvent{ContentIndex: index, Delta: delta}}})
			}
			events = append(events, &aiv1.ModelEvent{Event: &aiv1.ModelEvent_ToolcallEnd{ToolcallEnd: &aiv1.ToolCallEndEvent{
				ContentIndex: index, ToolCall: proto.Clone(call).(*aiv1.ToolCall),
			}}})
		default:
			panic(fmt.Sprintf("content[%d] has no block set", i))
		}
	}
	switch message.StopReason {
	case aiv1.StopReason_STOP_REASON_ERROR, aiv1.StopReason_STOP_REASON_ABORTED:
		events = append(events, errorEvent(message.StopReason, message))
	default:
		events = append(events, done(message))
	}
	return events
}

func chunks(value string, size int) []string {
	points := []rune(value)
	var out []string
	for start := 0; start < len(points); start += size {
		out = append(out, string(points[start:min(start+size, len(points))]))
	}
	return out
}

// The fake ModelService the client tests talk to: an in-process grpc-go server that receives the
// request as bytes and plays whatever its test scripts, well-behaved or not.

// script plays one call: it gets the decoded request and sends frames on stream; the status it
// returns ends the call.
type script func(request *aiv1.StreamRequest, stream grpc.ServerStream) error

// fakeServer serves its scripts on a free port of 127.0.0.1 until the test ends.
type fakeServer struct {
	target      string
	server      *grpc.Server
	connections atomic.Int32
	headers     atomic.Pointer[metadata.MD] // of the call received last

	mu      sync.Mutex
	methods []string // of every call received, in order
	resumes []*aiv1.ResumeRequest
	cancels chan cancelSeen // every Cancel call received
}

// cancelSeen is a Cancel call the fake server received: its request and its metadata.
type cancelSeen struct {
	request *aiv1.CancelRequest
	headers metadata.MD
}

// resumesSeen is the request of every Resume call so far, in order.
func (f *fakeServer) resumesSeen() []*aiv1.ResumeRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.resumes)
}

// headersSeen is the metadata of the call the server received last.
func (f *fakeServer) headersSeen() metadata.MD {
	if seen := f.headers.Load(); seen != nil {
		return *seen
	}
	return nil
}

// serveCatalog answers a ListModels or GetModel request from models, as the reference server
// does; it returns neither reply nor error for another method.
func serveCatalog(models []*aiv1.Model, method string, data []byte) ([]byte, error) {
	switch method {
	case aiv1.ModelService_ListModels_FullMethodName:
		request := &aiv1.ListModelsRequest{}
		if err := proto.Unmarshal(data, request); err != nil {
			return nil, status.Error(codes.InvalidArgument, err.Error())
		}
		reply := &aiv1.ListModelsResponse{}
		for _, model := range models {
			if request.Provider == "" || request.Provider == model.Provider {
				reply.Models = append(reply.Models, model)
			}
		}
		return proto.Marshal(reply)
	case aiv1.ModelService_GetModel_FullMethodName:
		request := &aiv1.GetModelRequest{}
		if err := proto.Unmarshal(data, request); err != nil {
			return nil, status.Error(codes.InvalidArgument, err.Error())
		}
		var served []string
		for _, model := range models {
			if model.Id == request.Id && (request.Provider == "" || request.Provider == model.Provider) {
				return proto.Marshal(&aiv1.GetModelResponse{Model: model})
			}
			served = append(served, model.Provider+"/"+model.Id)
		}
		return nil, status.Errorf(codes.NotFound, "no model %s/%s; served: %s", request.Provider, request.Id, strings.Join(served, ", "))
	}
	return nil, nil
}

// startFake starts a fake server whose Stream plays play, and whose StreamBatched plays it too,
// each frame in a batch of its own; options may add TLS credentials.
func startFake(t testing.TB, play script, options ...grpc.ServerOption) *fakeServer {
	t.Helper()
	return startServices(t, services{stream: play}, options...)
}

// startCatalog starts a fake server whose ListModels and GetModel serve models, and whose Stream
// plays readmeTurn.
func startCatalog(t testing.TB, models ...*aiv1.Model) *fakeServer {
	t.Helper()
	return startServices(t, services{stream: playing(wire(t, eventsOf(readmeTurn(), 8)...), 0, codes.OK, ""), models: models})
}

// resumeScript plays one Resume call: it gets the decoded request and sends frames on stream;
// the status it returns ends the call.
type resumeScript func(request *aiv1.ResumeRequest, stream grpc.ServerStream) error

// services are what a fake server serves.
type services struct {
	stream  script        // plays Stream (UNIMPLEMENTED when nil)
	resume  resumeScript  // plays Resume (UNIMPLEMENTED when nil); Cancel is always answered
	batched script        // plays StreamBatched, sending batches; nil: stream's frames, a batch each
	old     bool          // StreamBatched is UNIMPLEMENTED, as on a server that predates it
	models  []*aiv1.Model // ListModels and GetModel serve them, when not nil
}

func startServices(t testing.TB, served services, options ...grpc.ServerOption) *fakeServer {
	t.Helper()
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fake := &fakeServer{target: listener.Addr().String(), cancels: make(chan cancelSeen, 16)}
	fake.server = grpc.NewServer(append([]grpc.ServerOption{
		grpc.ForceServerCodecV2(bytesCodec{}),
		grpc.UnknownServiceHandler(func(_ any, stream grpc.ServerStream) error {
			method, _ := grpc.MethodFromServerStream(stream)
			fake.record(method, stream)
			var data []byte
			if err := stream.RecvMsg(&data); err != nil {
				return err
			}
			if served.models != nil {
				if reply, err := serveCatalog(served.models, method, data); reply != nil || err != nil {
					if err == nil {
						err = stream.SendMsg(reply)
					}
					return err
				}
			}
			switch method {
			case aiv1.ModelService_Cancel_FullMethodName:
				request := &aiv1.CancelRequest{}
				if err := proto.Unmarshal(data, request); err != nil {
					return status.Error(codes.InvalidArgument, err.Error())
				}
				fake.cancels <- cancelSeen{request, metadataOf(stream)}
				reply, err := proto.Marshal(&aiv1.CancelResponse{Cancelled: true})
				if err == nil {
					err = stream.SendMsg(reply)
				}
				return err
			case aiv1.ModelService_Resume_FullMethodName:
				if served.resume == nil {
					return status.Errorf(codes.Unimplemented, "no method %s", method)
				}
				request := &aiv1.ResumeRequest{}
				if err := proto.Unmarshal(data, request); err != nil {
					return status.Error(codes.InvalidArgument, err.Error())
				}
				fake.mu.Lock()
				fake.resumes = append(fake.resumes, request)
				fake.mu.Unlock()
				return served.resume(request, stream)
			}
			play := served.stream
			switch {
			case method == aiv1.ModelService_StreamBatched_FullMethodName && served.old:
				play = nil
			case method == aiv1.ModelService_StreamBatched_FullMethodName && served.batched != nil:
				play = served.batched
			case method == aiv1.ModelService_StreamBatched_FullMethodName && play != nil:
				play = func(request *aiv1.StreamRequest, stream grpc.ServerStream) error {
					return served.stream(request, batchEach{stream})
				}
			case method != aiv1.ModelService_Stream_FullMethodName:
				play = nil
			}
			if play == nil {
				return status.Errorf(codes.Unimplemented, "no method %s", method)
			}
			request := &aiv1.StreamRequest{}
			if err := proto.Unmarshal(data, request); err != nil {
				return status.Error(codes.InvalidArgument, err.Error())
			}
			return play(request, stream)
		}),
	}, options...)...)
	go func() { _ = fake.server.Serve(countingListener{listener, fake}) }()
	t.Cleanup(fake.server.Stop)
	return fake
}

// record notes a call: its method and its headers.
func (f *fakeServer) record(method string, stream grpc.ServerStream) {
	headers := metadataOf(stream)
	f.headers.Store(&headers)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.methods = append(f.methods, strings.TrimPrefix(method, "/pi.ai.v1.ModelService/"))
}

// methodsSeen is the methods called so far, by name ("StreamBatched", "Stream"), in order.
func (f *fakeServer) methodsSeen() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.methods)
}

// batchEach sends each frame given to SendMsg as a StreamBatchedResponse of its own.
type batchEach struct{ grpc.ServerStream }

func (s batchEach) SendMsg(m any) error { return s.ServerStream.SendMsg(batchOf(m.([]byte))) }

// batchOf is the bytes of a StreamBatchedResponse holding frames as its events.
func batchOf(frames ...[]byte) []byte {
	batch, err := proto.Marshal(&aiv1.StreamBatchedView{Events: frames})
	if err != nil {
		panic(err) // a message of bytes fields always encodes
	}
	return batch
}

type countingListener struct {
	net.Listener
	fake *fakeServer
}

func (l countingListener) Accept() (net.Conn, error) {
	conn, err := l.Listener.Accept()
	if err == nil {
		l.fake.connections.Add(1)
	}
	return conn, err
}

// bytesCodec sends and receives messages as their bytes.
type bytesCodec struct{}

func (bytesCodec) Name() string { return "proto" }

func (bytesCodec) Marshal(v any) (mem.BufferSlice, error) {
	return mem.BufferSlice{mem.SliceBuffer(v.([]byte))}, nil
}

func (bytesCodec) Unmarshal(data mem.BufferSlice, v any) error {
	*v.(*[]byte) = data.Materialize()
	return nil
}

// sendFrames sends each frame as one message, waiting delay before each; it stops early when
// the client goes away.
func sendFrames(stream grpc.ServerStream, delay time.Duration, frames ...[]byte) error {
	for _, frame := range frames {
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-stream.Context().Done():
				return stream.Context().Err()
			}
		}
		if err := stream.SendMsg(frame); err != nil {
			return err
		}
	}
	return nil
}

// wire is the encoding of each event.
func wire(t testing.TB, events ...*aiv1.ModelEvent) [][]byte {
	t.Helper()
	frames := make([][]byte, len(events))
	for i, event := range events {
		data, err := proto.Marshal(event)
		if err != nil {
			t.Fatal(err)
		}
		frames[i] = data
	}
	return frames
}

// playing is a script that sends frames, waiting delay before each, then ends with code and
// message.
func playing(frames [][]byte, delay time.Duration, code codes.Code, message string) script {
	return func(_ *aiv1.StreamRequest, stream grpc.ServerStream) error {
		if err := sendFrames(stream, delay, frames...); err != nil {
			return err
		}
		return status.Error(code, message)
	}
}

// readmeTurn is the answer to the README's question: a text, then a tool call reading README.md.
func readmeTurn() *aiv1.AssistantMessage {
	return assistantMessage(
		[]*aiv1.AssistantContent{text("我先读取项目说明。"), toolCall("call_1", "read", map[string]any{"path": "README.md"})},
		stoppedBy(aiv1.StopReason_STOP_REASON_TOOL_USE),
		func(message *aiv1.AssistantMessage) { message.Timestamp = proto.Int64(1010) },
	)
}

// readmeServer plays readmeTurn in deltas of 8 characters, waiting delay before each event.
func readmeServer(t testing.TB, delay time.Duration) *fakeServer {
	t.Helper()
	return startFake(t, playing(wire(t, eventsOf(readmeTurn(), 8)...), delay, codes.OK, ""))
}

func pemOf(kind string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der})
}
