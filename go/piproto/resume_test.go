// A call cut off after its stream id arrived resumes by itself (ModelService.Resume), and a kept
// stream that the caller cancels is cancelled on the server too (ModelService.Cancel).

package piproto_test

import (
	"context"
	"slices"
	"testing"
	"time"

	aiv1 "github.com/pi-proto/pi-proto/go/gen/pi/ai/v1"
	"github.com/pi-proto/pi-proto/go/piproto"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

const keptID = "stream-1"

// keptTurn is the events of readmeTurn numbered from 1, its start giving the stream id keptID and
// its terminal event the digest of the content.
func keptTurn(t *testing.T) []*aiv1.ModelEvent {
	t.Helper()
	events := eventsOf(readmeTurn(), 8)
	events[0].GetStart().StreamId = keptID
	withDigest(events[len(events)-1], digestOf(t, readmeTurn().GetContent()...))
	for i, event := range events {
		event.Seq = uint64(i + 1)
	}
	return events
}

// resumingAfter plays a Resume call of keptID: the events numbered above after, and some before
// them again (a server may repeat what it is not sure was received), then an OK status.
func resumingAfter(t *testing.T, events []*aiv1.ModelEvent, repeated int) resumeScript {
	return func(request *aiv1.ResumeRequest, stream grpc.ServerStream) error {
		if request.GetStreamId() != keptID {
			return status.Errorf(codes.NotFound, "no stream %q", request.GetStreamId())
		}
		from := max(0, int(request.GetAfterSeq())-repeated)
		return sendFrames(stream, 0, wire(t, events[from:]...)...)
	}
}

func TestACallCutOffResumesAfterTheLastEventAppliedAsOneStream(t *testing.T) {
	bound(t)
	events := keptTurn(t)
	for name, end := range map[string]codes.Code{"by UNAVAILABLE": codes.Unavailable, "by an OK status before the terminal event": codes.OK} {
		t.Run(name, func(t *testing.T) {
			fake := startServices(t, services{
				stream: playing(wire(t, events[:4]...), 0, end, "connection lost"),
				resume: resumingAfter(t, events, 2),
			})
			stream := newClient(t, fake.target).Stream(testContext(t), userContext("hi"), piproto.WithCoalesceDeltas(true))
			seen, message := drain(stream)
			assertKinds(t, seen, readmeKinds...)
			for i, event := range seen {
				if event.GetSeq() != uint64(i+1) {
					t.Fatalf("event %d is numbered %d", i, event.GetSeq())
				}
			}
			assertProtoEqual(t, message, readmeTurn())
			if stream.Failure() != nil || stream.StreamID() != keptID {
				t.Fatalf("failure %v, stream id %q", stream.Failure(), stream.StreamID())
			}
			resumes := fake.resumesSeen()
			want := &aiv1.ResumeRequest{StreamId: keptID, AfterSeq: 4, CoalesceDeltas: true}
			if len(resumes) != 1 || !proto.Equal(resumes[0], want) {
				t.Fatalf("resumes %v", resumes)
			}
			if methods := fake.methodsSeen(); !slices.Equal(methods, []string{"StreamBatched", "Resume"}) {
				t.Fatalf("methods %v", methods)
			}
		})
	}
}

func TestEachResumeGoesOnAfterTheLastEventAppliedAndTheAttemptsCountAgainAfterAnEvent(t *testing.T) {
	bound(t)
	events := keptTurn(t)
	fake := startServices(t, services{
		stream: playing(wire(t, events[:3]...), 0, codes.Unavailable, "connection lost"),
		resume: func(request *aiv1.ResumeRequest, stream grpc.ServerStream) error {
			after := int(request.GetAfterSeq())
			if after >= 9 { // cut off again, each time after one event
				return sendFrames(stream, 0, wire(t, events[after:]...)...)
			}
			if err := sendFrames(stream, 0, wire(t, events[after:after+1]...)...); err != nil {
				return err
			}
			return status.Error(codes.Unavailable, "connection lost")
		},
	})
	seen, message := drain(newClient(t, fake.target).Stream(testContext(t), userContext("hi")))
	assertKinds(t, seen, readmeKinds...)
	assertProtoEqual(t, message, readmeTurn())
	var after []uint64
	for _, resume := range fake.resumesSeen() {
		after = append(after, resume.GetAfterSeq())
	}
	// More than MaxResumes in all, never more than one in a row without an event.
	if !slices.Equal(after, []uint64{3, 4, 5, 6, 7, 8, 9}) {
		t.Fatalf("resumed after %v", after)
	}
}

func TestResumingGivesUpAfterMaxResumesAttemptsInARow(t *testing.T) {
	bound(t)
	events := keptTurn(t)
	fake := startServices(t, services{
		stream: playing(wire(t, events[:3]...), 0, codes.Unavailable, "connection lost"),
		resume: func(*aiv1.ResumeRequest, grpc.ServerStream) error {
			return status.Error(codes.Unavailable, "still lost")
		},
	})
	began := time.Now()
	stream := newClient(t, fake.target).Stream(testContext(t), userContext("hi"))
	seen, message := drain(stream)
	assertKinds(t, seen, "start", "text_start", "text_delta", "error")
	assertStopped(t, message, aiv1.StopReason_STOP_REASON_ERROR, "still lost")
	if failure := stream.Failure(); failure == nil || failure.StatusCode != "UNAVAILABLE" {
		t.Fatalf("failure %v", failure)
	}
	if n := len(fake.resumesSeen()); n != piproto.MaxResumes {
		t.Fatalf("%d resumes", n)
	}
	// The waits: 50, 100, 200, 400 and 800 ms.
	if waited, least := time.Since(began), piproto.ResumeBackoff*(1<<piproto.MaxResumes-1); waited < least {
		t.Fatalf("gave up after %v, before the backoff of %v", waited, least)
	}
}

func TestAResumeRefusedEndsTheStreamWithItsStatus(t *testing.T) {
	bound(t)
	events := keptTurn(t)
	fake := startServices(t, services{
		stream: playing(wire(t, events[:3]...), 0, codes.Unavailable, "connection lost"),
		resume: func(*aiv1.ResumeRequest, grpc.ServerStream) error {
			return status.Error(codes.NotFound, "the stream is not kept here")
		},
	})
	stream := newClient(t, fake.target).Stream(testContext(t), userContext("hi"))
	_, message := drain(stream)
	assertStopped(t, message, aiv1.StopReason_STOP_REASON_ERROR, "the stream is not kept here")
	if failure := stream.Failure(); failure == nil || failure.StatusCode != "NOT_FOUND" || piproto.TextOf(message) != "我先读取项目说明" {
		t.Fatalf("failure %v, message %v", failure, message)
	}
	if n := len(fake.resumesSeen()); n != 1 {
		t.Fatalf("%d resumes", n)
	}
}

func TestACallIsNotResumedWithoutAStreamIDNorPastItsDeadline(t *testing.T) {
	bound(t)
	unkept := keptTurn(t)
	unkept[0].GetStart().StreamId = ""
	fake := startServices(t, services{
		stream: playing(wire(t, unkept[:3]...), 0, codes.Unavailable, "connection lost"),
		resume: resumingAfter(t, unkept, 0),
	})
	stream := newClient(t, fake.target).Stream(testContext(t), userContext("hi"))
	if _, message := drain(stream); stream.Failure() == nil || stream.Failure().StatusCode != "UNAVAILABLE" || message.GetStopReason() != aiv1.StopReason_STOP_REASON_ERROR {
		t.Fatalf("without a stream id: %v, %v", message, stream.Failure())
	}
	if n := len(fake.resumesSeen()); n != 0 {
		t.Fatalf("without a stream id: %d resumes", n)
	}

	// Every Resume is cut off too, and the fake server decides where the deadline stands: it
	// answers the first three at once (the waits of 50 to 400 ms fit in a deadline of 3 s with
	// plenty to spare), and the fourth only once less than 400 ms of the deadline is left. The
	// next wait, 800 ms, would reach the deadline: the client gives up with the status it got, in
	// the 400 ms that remain, rather than wait into the deadline.
	events := keptTurn(t)
	fake = startServices(t, services{
		stream: playing(wire(t, events[:3]...), 0, codes.Unavailable, "connection lost"),
		resume: func(request *aiv1.ResumeRequest, stream grpc.ServerStream) error {
			if deadline, ok := stream.Context().Deadline(); ok && len(fake.resumesSeen()) == piproto.MaxResumes-1 {
				select {
				case <-time.After(time.Until(deadline) - 400*time.Millisecond):
				case <-stream.Context().Done():
				}
			}
			return status.Error(codes.Unavailable, "still lost")
		},
	})
	stream = newClient(t, fake.target).Stream(context.Background(), userContext("hi"), piproto.WithTimeout(3*time.Second))
	drain(stream)
	if failure := stream.Failure(); failure == nil || failure.StatusCode != "UNAVAILABLE" {
		t.Fatalf("with a deadline: failure %v", failure) // DEADLINE_EXCEEDED: it waited into the deadline
	}
	if n := len(fake.resumesSeen()); n != piproto.MaxResumes-1 {
		t.Fatalf("with a deadline: %d resumes", n)
	}
}

// keptServer sends keptTurn's start event, then waits for the client to go away.
func keptServer(t *testing.T, streamID string) *fakeServer {
	return startFake(t, func(_ *aiv1.StreamRequest, stream grpc.ServerStream) error {
		first := keptTurn(t)[0]
		first.GetStart().StreamId = streamID
		if err := sendFrames(stream, 0, wire(t, first)...); err != nil {
			return err
		}
		<-stream.Context().Done()
		return stream.Context().Err()
	})
}

func TestCancellingAKeptStreamCancelsItOnTheServer(t *testing.T) {
	bound(t)
	for name, cancel := range map[string]func(*piproto.Client, *piproto.AssistantMessageEventStream, context.CancelFunc){
		"Cancel": func(_ *piproto.Client, events *piproto.AssistantMessageEventStream, _ context.CancelFunc) {
			events.Cancel()
		},
		"the context": func(_ *piproto.Client, _ *piproto.AssistantMessageEventStream, stop context.CancelFunc) { stop() },
		"closing the client": func(client *piproto.Client, _ *piproto.AssistantMessageEventStream, _ context.CancelFunc) {
			_ = client.Close()
		},
	} {
		t.Run(name, func(t *testing.T) {
			fake := keptServer(t, keptID)
			client := newClient(t, fake.target, piproto.WithToken("s3cret"))
			ctx, stop := context.WithCancel(testContext(t))
			defer stop()
			events := client.Stream(ctx, userContext("hi"), piproto.WithMetadata("x-case", "kept"))
			if first, ok := events.Next(testContext(t)); !ok || piproto.EventKind(first) != "start" {
				t.Fatal("no start event")
			}
			cancel(client, events, stop)
			_, message := drain(events)
			if message.GetStopReason() != aiv1.StopReason_STOP_REASON_ABORTED || events.Failure() != nil {
				t.Fatalf("message %v, failure %v", message, events.Failure())
			}
			select {
			case seen := <-fake.cancels:
				if seen.request.GetStreamId() != keptID || !slices.Equal(seen.headers.Get("x-case"), []string{"kept"}) ||
					!slices.Equal(seen.headers.Get("authorization"), []string{"Bearer s3cret"}) {
					t.Fatalf("Cancel %v with %v", seen.request, seen.headers)
				}
			case <-time.After(hangGuard):
				t.Fatal("no Cancel call")
			}
		})
	}
}

func TestClosingTheClientWaitsForItsCancelCalls(t *testing.T) {
	bound(t)
	fake := keptServer(t, keptID)
	client, err := piproto.NewClient(fake.target)
	if err != nil {
		t.Fatal(err)
	}
	events := client.Stream(testContext(t), userContext("hi"))
	if first, ok := events.Next(testContext(t)); !ok || piproto.EventKind(first) != "start" {
		t.Fatal("no start event")
	}
	if err := client.Close(); err != nil {
		t.Fatal(err)
	}
	select { // received before Close returned, not after
	case seen := <-fake.cancels:
		if seen.request.GetStreamId() != keptID {
			t.Fatalf("Cancel %v", seen.request)
		}
	default:
		t.Fatal("Close returned before its Cancel call was made")
	}
}

func TestNoCancelIsSentForAStreamWithoutAStreamIDOrOneThatEnded(t *testing.T) {
	bound(t)
	ctx := testContext(t)
	fake := keptServer(t, "")
	client := newClient(t, fake.target)
	events := client.Stream(ctx, userContext("hi"))
	if first, ok := events.Next(ctx); !ok || piproto.EventKind(first) != "start" {
		t.Fatal("no start event")
	}
	events.Cancel()
	drain(events)
	kept := startFake(t, playing(wire(t, keptTurn(t)...), 0, codes.OK, ""))
	keptClient := newClient(t, kept.target)
	finished := keptClient.Stream(ctx, userContext("hi"))
	drain(finished)
	finished.Cancel() // the stream has ended: nothing to cancel
	// Close waits for the Cancel calls on their way (see TestClosingTheClientWaitsForItsCancelCalls):
	// any Cancel made has arrived once it returns.
	for _, closing := range []*piproto.Client{client, keptClient} {
		if err := closing.Close(); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case seen := <-fake.cancels:
		t.Fatalf("Cancel %v for a stream without an id", seen.request)
	case seen := <-kept.cancels:
		t.Fatalf("Cancel %v for a stream that ended", seen.request)
	default:
	}
}
