// The client against a server that sends what a correct one never does: a stream without a
// terminal event, events after it, undecodable bytes, events out of place and bare statuses.

package piproto_test

import (
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"

	piproto "github.com/pi-proto/pi-proto/go"
	aiv1 "github.com/pi-proto/pi-proto/go/gen/pi/ai/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// rawServer answers every call with the frames a test scripts, then a status.
type rawServer struct {
	target      string
	connections atomic.Int32
}

type countingListener struct {
	net.Listener
	server *rawServer
}

func (l countingListener) Accept() (net.Conn, error) {
	conn, err := l.Listener.Accept()
	if err == nil {
		l.server.connections.Add(1)
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

// startRawServer serves frames (each sent as one gRPC message), then the status code with
// message, on a free port until the test ends.
func startRawServer(t *testing.T, frames [][]byte, code codes.Code, message string) *rawServer {
	t.Helper()
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	raw := &rawServer{target: listener.Addr().String()}
	server := grpc.NewServer(
		grpc.ForceServerCodecV2(bytesCodec{}),
		grpc.UnknownServiceHandler(func(_ any, stream grpc.ServerStream) error {
			var request []byte
			if err := stream.RecvMsg(&request); err != nil {
				return err
			}
			for _, frame := range frames {
				if err := stream.SendMsg(frame); err != nil {
					return err
				}
			}
			return status.Error(code, message)
		}),
	)
	go func() { _ = server.Serve(countingListener{listener, raw}) }()
	t.Cleanup(server.Stop)
	return raw
}

func wire(t *testing.T, events ...*aiv1.ModelEvent) [][]byte {
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

func play(t *testing.T, frames [][]byte, code codes.Code, message string) ([]*aiv1.ModelEvent, *aiv1.AssistantMessage) {
	t.Helper()
	server := startRawServer(t, frames, code, message)
	return drain(newClient(t, server.target).Stream(testContext(t), userContext("hi")))
}

func TestAStreamClosedWithoutATerminalEventIsAnErrorEvent(t *testing.T) {
	bound(t)
	seen, message := play(t, wire(t, eventsOf(assistantMessage([]*aiv1.AssistantContent{text("kept")}), 8)[:3]...), codes.OK, "")
	assertKinds(t, seen, "start", "text_start", "text_delta", "error")
	assertStopped(t, message, aiv1.StopReason_STOP_REASON_ERROR, "stream ended without a terminal event")
	if piproto.TextOf(message) != "kept" {
		t.Fatalf("text %q", piproto.TextOf(message))
	}
}

func TestEventsAfterTheTerminalEventAreIgnored(t *testing.T) {
	bound(t)
	events := eventsOf(assistantMessage([]*aiv1.AssistantContent{text("ok")}), 8)
	late := textDelta(0, "late")
	seen, message := play(t, wire(t, append(events, late, late)...), codes.OK, "")
	assertKinds(t, seen, kinds(events)...)
	if message.StopReason != aiv1.StopReason_STOP_REASON_STOP || piproto.TextOf(message) != "ok" {
		t.Fatalf("message %v", message)
	}
}

func TestAnUndecodableEventBecomesOneErrorEventNamingItsIndex(t *testing.T) {
	bound(t)
	frames := append(wire(t, start(assistantMessage(nil))), []byte{0x0a, 0x05, 0x61, 0x62})
	seen, message := play(t, frames, codes.OK, "")
	assertKinds(t, seen, "start", "error")
	assertStopped(t, message, aiv1.StopReason_STOP_REASON_ERROR, "event 1: cannot decode ModelEvent: cannot parse invalid wire-format data")
}

func TestAnEventOutOfPlaceBecomesOneErrorEventNamingTheRule(t *testing.T) {
	bound(t)
	seen, message := play(t, wire(t, start(assistantMessage(nil)), textDelta(4, "x")), codes.OK, "")
	assertKinds(t, seen, "start", "error")
	assertStopped(t, message, aiv1.StopReason_STOP_REASON_ERROR,
		"event 1 (text_delta) breaks rule 'block-exists': content_index 4 refers to no block (the message has 0)")
}

func TestAStatusThatLooksLikeADecodingFailureIsReportedAsSent(t *testing.T) {
	bound(t)
	seen, message := play(t, nil, codes.Internal, "event 0: cannot decode ModelEvent: the server says so")
	assertKinds(t, seen, "error")
	assertStopped(t, message, aiv1.StopReason_STOP_REASON_ERROR, "event 0: cannot decode ModelEvent: the server says so")
}

func TestAStatusWithoutAMessageIsReportedByItsCodeName(t *testing.T) {
	bound(t)
	for code, name := range map[codes.Code]string{
		codes.ResourceExhausted: "RESOURCE_EXHAUSTED",
		codes.Unauthenticated:   "UNAUTHENTICATED",
		codes.DeadlineExceeded:  "DEADLINE_EXCEEDED",
	} {
		seen, message := play(t, wire(t, start(assistantMessage(nil))), code, "")
		assertKinds(t, seen, "start", "error")
		assertStopped(t, message, aiv1.StopReason_STOP_REASON_ERROR, name)
	}
}

func TestCallsOfOneClientShareOneConnection(t *testing.T) {
	bound(t)
	server := startRawServer(t, wire(t, eventsOf(assistantMessage([]*aiv1.AssistantContent{text("ok")}), 8)...), codes.OK, "")
	client := newClient(t, server.target)
	ctx := testContext(t)
	for range 3 {
		if got := piproto.TextOf(client.Stream(ctx, userContext("hi")).Result(ctx)); got != "ok" {
			t.Fatalf("text %q", got)
		}
	}
	if n := server.connections.Load(); n != 1 {
		t.Fatalf("%d connections", n)
	}
}

func TestASlowConsumerSlowsTheCallDownInsteadOfFillingMemory(t *testing.T) {
	bound(t)
	const deltas = 1000
	message := assistantMessage([]*aiv1.AssistantContent{text(fmt.Sprintf("%0*d", deltas, 0))})
	server := startRawServer(t, wire(t, eventsOf(message, 1)...), codes.OK, "")
	ctx := testContext(t)
	events := newClient(t, server.target).Stream(ctx, userContext("hi"))
	time.Sleep(200 * time.Millisecond) // the server has sent everything; the client reads no further
	most, count := 0, 0
	for range events.Events() {
		most = max(most, events.Queued())
		count++
	}
	if count != deltas+4 {
		t.Fatalf("%d events", count)
	}
	if most > events.HighWater() {
		t.Fatalf("%d events queued, above the high-water mark of %d", most, events.HighWater())
	}
	if piproto.TextOf(events.Result(ctx)) != fmt.Sprintf("%0*d", deltas, 0) {
		t.Fatal("the text was not rebuilt")
	}
}

func TestClosingTheClientEndsItsOpenStreamsWithAnErrorEvent(t *testing.T) {
	bound(t)
	ctx := testContext(t)
	client, err := piproto.NewClient(slowServer(t).target)
	if err != nil {
		t.Fatal(err)
	}
	events := client.Stream(ctx, userContext("hi"))
	if first, ok := events.Next(ctx); !ok || piproto.EventKind(first) != "start" {
		t.Fatal("no start event")
	}
	_ = client.Close()
	rest, message := drain(events)
	assertKinds(t, rest, "error")
	if message.StopReason != aiv1.StopReason_STOP_REASON_ERROR || message.GetErrorMessage() == "" {
		t.Fatalf("message %v", message)
	}
}
