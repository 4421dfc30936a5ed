// The client over StreamBatched: the events of a batch taken one at a time, each with its own
// partial and its own index; a malformed event or batch losing nothing in front of it; the
// fallback to Stream on a server without StreamBatched; and WithBatched(false).

package piproto_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	aiv1 "github.com/pi-proto/pi-proto/go/gen/pi/ai/v1"
	"github.com/pi-proto/pi-proto/go/piproto"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// sendingBatches is a StreamBatched script that sends each batch as one message, then ends with
// code; Stream fails the test.
func sendingBatches(code codes.Code, batches ...[]byte) services {
	return services{
		batched: func(_ *aiv1.StreamRequest, stream grpc.ServerStream) error {
			if err := sendFrames(stream, 0, batches...); err != nil {
				return err
			}
			return status.Error(code, "")
		},
		stream: func(*aiv1.StreamRequest, grpc.ServerStream) error {
			return status.Error(codes.FailedPrecondition, "Stream was called")
		},
	}
}

// otherFields is a batch's fields that are no event, of every wire type a reader skips.
func otherFields() []byte {
	var fields []byte
	fields = protowire.AppendTag(fields, 2, protowire.VarintType)
	fields = protowire.AppendVarint(fields, 300)
	fields = protowire.AppendTag(fields, 3, protowire.BytesType)
	fields = protowire.AppendBytes(fields, []byte("not an event"))
	fields = protowire.AppendTag(fields, 4, protowire.Fixed32Type)
	fields = protowire.AppendFixed32(fields, 7)
	fields = protowire.AppendTag(fields, 5, protowire.Fixed64Type)
	return protowire.AppendFixed64(fields, 7)
}

func TestTheEventsOfABatchComeOneByOneEachWithItsOwnPartial(t *testing.T) {
	bound(t)
	ctx := testContext(t)
	frames := wire(t, eventsOf(readmeTurn(), 8)...)
	// Two batches, the first cut inside the text block, with fields that are no event in between.
	first := append(batchOf(frames[:3]...), otherFields()...)
	second := append(append(batchOf(frames[3:6]...), otherFields()...), batchOf(frames[6:]...)...)
	fake := startServices(t, sendingBatches(codes.OK, first, second))
	events := newClient(t, fake.target).Stream(ctx, userContext("hi"))
	var seen []string
	var steps []*aiv1.AssistantMessage
	for event := range events.Events() {
		seen = append(seen, piproto.EventKind(event))
		steps = append(steps, proto.Clone(event.Partial).(*aiv1.AssistantMessage))
	}
	if !slices.Equal(seen, readmeKinds) {
		t.Fatalf("kinds %v", seen)
	}
	// Each partial is the message as of its own event, not as of the end of its batch.
	if len(steps[1].Content) != 1 || piproto.TextOf(steps[1]) != "" {
		t.Fatalf("after text_start: %v", steps[1])
	}
	if piproto.TextOf(steps[2]) != "我先读取项目说明" || piproto.TextOf(steps[3]) != "我先读取项目说明。" {
		t.Fatalf("texts %q, %q", piproto.TextOf(steps[2]), piproto.TextOf(steps[3]))
	}
	var raw []string
	for _, index := range []int{6, 7, 8} {
		raw = append(raw, callAt(t, steps[index], 1).GetRawArguments())
	}
	if want := []string{`{"path":`, `{"path":"README.`, `{"path":"README.md"}`}; !slices.Equal(raw, want) {
		t.Fatalf("raw arguments %q", raw)
	}
	assertProtoEqual(t, events.Result(ctx), readmeTurn())
	if events.Failure() != nil || !slices.Equal(fake.methodsSeen(), []string{"StreamBatched"}) {
		t.Fatalf("failure %v, methods %v", events.Failure(), fake.methodsSeen())
	}
}

func TestABatchIsReadOnlyAsFastAsItsEventsAreConsumed(t *testing.T) {
	bound(t)
	const deltas = 1000
	message := assistantMessage([]*aiv1.AssistantContent{text(strings.Repeat("x", deltas))})
	ctx := testContext(t)
	// One batch of every event: each is decoded and checked only once a consumer wants it.
	served := sendingBatches(codes.OK, batchOf(wire(t, eventsOf(message, 1)...)...))
	sent, batched := make(chan struct{}), served.batched
	served.batched = func(request *aiv1.StreamRequest, stream grpc.ServerStream) error {
		defer close(sent)
		return batched(request, stream)
	}
	events := newClient(t, startServices(t, served).target).Stream(ctx, userContext("hi"))
	<-sent // the whole batch is on its way to the client; nobody reads
	most, count := 0, 0
	for range events.Events() {
		most = max(most, events.Queued())
		count++
	}
	if count != deltas+4 || most > 1 {
		t.Fatalf("%d events, at most %d queued", count, most)
	}
	// Cancelling after the third event of one batch: nothing of it was taken ahead.
	events = newClient(t, startServices(t, sendingBatches(codes.OK, batchOf(wire(t, eventsOf(readmeTurn(), 8)...)...))).target).
		Stream(ctx, userContext("hi"))
	var seen []*aiv1.ModelEvent
	for event := range events.Events() {
		if seen = append(seen, event); len(seen) == 3 {
			events.Cancel()
		}
	}
	assertKinds(t, seen, "start", "text_start", "text_delta", "error")
	assertStopped(t, events.Result(ctx), aiv1.StopReason_STOP_REASON_ABORTED, "cancelled")
}

func TestAMalformedBatchKeepsTheEventsInFrontOfWhatIsWrong(t *testing.T) {
	bound(t)
	head := wire(t, start(assistantMessage(nil)), textStart(0), textDelta(0, "ab"))
	group := protowire.AppendTag(nil, 1, protowire.StartGroupType)
	cutEvent := append(protowire.AppendTag(nil, 1, protowire.BytesType), 20, 0x0a) // 20 bytes said, 1 there
	for _, case_ := range []struct {
		name    string
		batches [][]byte
		limit   int64
		index   int
		rule    string
		text    string
	}{
		{"an event that does not decode", [][]byte{batchOf(append(head, []byte{0x0a, 0x05, 0x61, 0x62})...)}, 0, 3, "event-decode", "ab"},
		// A batch that is no StreamBatchedView fails at its first event; the batches before it
		// are delivered.
		{"a batch that ends inside an event", [][]byte{batchOf(head...), cutEvent}, 0, 3, "event-decode", "ab"},
		{"a batch that ends inside a key", [][]byte{batchOf(head...), {0x80}}, 0, 3, "event-decode", "ab"},
		{"a group that never ends", [][]byte{batchOf(head...), group}, 0, 3, "event-decode", "ab"},
		{"a field numbered 0", [][]byte{batchOf(head...), {0x02, 0x00}}, 0, 3, "event-decode", "ab"},
		{"a malformed batch loses its own events", [][]byte{batchOf(head[:2]...), append(batchOf(head[2]), 0x80)}, 0, 2, "event-decode", ""},
		{"a malformed first batch", [][]byte{append(batchOf(head...), 0x80)}, 0, 0, "event-decode", ""},
		// As every protobuf reader does, an events field of another wire type is an unknown field.
		{"an events field that is not length-delimited", [][]byte{append(batchOf(head...), 0x08, 0x01)}, 0, 3, "terminal-missing", "ab"},
		{"an event out of place in a later batch", [][]byte{batchOf(head[:2]...), batchOf(wire(t, textDelta(0, "a"), textDelta(4, "x"))...)}, 0, 3, "block-exists", "a"},
		{"more deltas than the limit", [][]byte{batchOf(wire(t, eventsOf(readmeTurn(), 8)...)...)}, 10, 2, "size-limit", ""},
		{"no terminal event", [][]byte{batchOf(head...), batchOf(), otherFields()}, 0, 3, "terminal-missing", "ab"},
	} {
		t.Run(case_.name, func(t *testing.T) {
			fake := startServices(t, sendingBatches(codes.OK, case_.batches...))
			events := newClient(t, fake.target, piproto.WithMaxMessageBytes(case_.limit)).Stream(testContext(t), userContext("hi"))
			seen, message := drain(events)
			if len(seen) != case_.index+1 || message.StopReason != aiv1.StopReason_STOP_REASON_ERROR || piproto.TextOf(message) != case_.text {
				t.Fatalf("kinds %v, message %v", kinds(seen), message)
			}
			failure := events.Failure()
			if failure == nil || failure.Rule == nil || failure.Rule.RuleID != case_.rule || piproto.StreamRuleID(failure.Rule.Rule) != case_.rule || failure.Rule.EventIndex != case_.index {
				t.Fatalf("failure %+v", failure)
			}
		})
	}
}

func TestAServerWithoutStreamBatchedIsReadThroughStream(t *testing.T) {
	bound(t)
	ctx := testContext(t)
	frames := wire(t, eventsOf(readmeTurn(), 8)...)
	fake := startServices(t, services{stream: playing(frames, 0, codes.OK, ""), old: true})
	events := newClient(t, fake.target).Stream(ctx, userContext("hi"), piproto.WithTimeout(10*time.Second))
	seen, message := drain(events)
	assertKinds(t, seen, readmeKinds...)
	assertProtoEqual(t, message, readmeTurn())
	if events.Failure() != nil || !slices.Equal(fake.methodsSeen(), []string{"StreamBatched", "Stream"}) {
		t.Fatalf("failure %v, methods %v", events.Failure(), fake.methodsSeen())
	}

	// The fallback keeps the call's deadline: after a server that takes a while to say
	// UNIMPLEMENTED, Stream has that much less, not a deadline of its own. The deadlines are the
	// client's, as each call starts: the server's copies differ by how long each request took to
	// arrive.
	slow := startServices(t, services{stream: playing(frames, 0, codes.OK, ""), batched: func(*aiv1.StreamRequest, grpc.ServerStream) error {
		time.Sleep(50 * time.Millisecond)
		return status.Error(codes.Unimplemented, "no StreamBatched")
	}})
	var mu sync.Mutex
	var deadlines []time.Time
	recordDeadline := grpc.WithChainStreamInterceptor(func(ctx context.Context, desc *grpc.StreamDesc, conn *grpc.ClientConn,
		method string, streamer grpc.Streamer, options ...grpc.CallOption,
	) (grpc.ClientStream, error) {
		deadline, _ := ctx.Deadline()
		mu.Lock()
		deadlines = append(deadlines, deadline)
		mu.Unlock()
		return streamer(ctx, desc, conn, method, options...)
	})
	events = newClient(t, slow.target, piproto.WithDialOptions(recordDeadline)).Stream(ctx, userContext("hi"), piproto.WithTimeout(10*time.Second))
	assertProtoEqual(t, events.Result(ctx), readmeTurn())
	mu.Lock()
	defer mu.Unlock()
	if len(deadlines) != 2 || deadlines[0].IsZero() || !deadlines[1].Equal(deadlines[0]) || !slices.Equal(slow.methodsSeen(), []string{"StreamBatched", "Stream"}) {
		t.Fatalf("deadlines %v of %v", deadlines, slow.methodsSeen())
	}

	// UNIMPLEMENTED after an event is the call's failure, not a reason to call Stream.
	late := startServices(t, sendingBatches(codes.Unimplemented, batchOf(frames[:2]...)))
	events = newClient(t, late.target).Stream(ctx, userContext("hi"))
	seen, _ = drain(events)
	assertKinds(t, seen, "start", "text_start", "error")
	if failure := events.Failure(); failure == nil || failure.StatusCode != "UNIMPLEMENTED" || !slices.Equal(late.methodsSeen(), []string{"StreamBatched"}) {
		t.Fatalf("failure %v, methods %v", failure, late.methodsSeen())
	}
}

func TestWithBatchedFalseCallsStreamAlone(t *testing.T) {
	bound(t)
	ctx := testContext(t)
	fake := readmeServer(t, 0) // serves StreamBatched as well
	client := newClient(t, fake.target, piproto.WithBatched(false))
	assertProtoEqual(t, client.Stream(ctx, userContext("hi")).Result(ctx), readmeTurn())
	assertProtoEqual(t, newClient(t, fake.target).Stream(ctx, userContext("hi")).Result(ctx), readmeTurn())
	if got := fake.methodsSeen(); !slices.Equal(got, []string{"Stream", "StreamBatched"}) {
		t.Fatalf("methods %v", got)
	}
}
