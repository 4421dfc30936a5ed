// EventStream and AssistantMessageEventStream: terminal events, results, cancellation, bounded
// sends, consumers taking turns, and the seed's error test.

package piproto_test

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	aiv1 "github.com/pi-proto/pi-proto/go/gen/pi/ai/v1"
	"github.com/pi-proto/pi-proto/go/piproto"
)

func collect[T any](seq func(func(T) bool)) []T {
	var seen []T
	for item := range seq {
		seen = append(seen, item)
	}
	return seen
}

func kinds(events []*aiv1.ModelEvent) []string {
	names := make([]string, len(events))
	for i, event := range events {
		names[i] = piproto.EventKind(event)
	}
	return names
}

func assertKinds(t *testing.T, events []*aiv1.ModelEvent, want ...string) {
	t.Helper()
	if got := kinds(events); !slices.Equal(got, want) {
		t.Fatalf("kinds %v, want %v", got, want)
	}
}

func assertStopped(t *testing.T, message *aiv1.AssistantMessage, reason aiv1.StopReason, errorMessage string) {
	t.Helper()
	if message == nil {
		t.Fatal("no final message")
	}
	if message.StopReason != reason || message.GetErrorMessage() != errorMessage {
		t.Fatalf("stopped by %v %q, want %v %q", message.StopReason, message.GetErrorMessage(), reason, errorMessage)
	}
}

func numbers(highWater int) *piproto.EventStream[int, string] {
	return piproto.NewEventStream(func(n int) bool { return n < 0 }, func(n int) string { return "ended at " + itoa(n) }, highWater)
}

func itoa(n int) string {
	if n < 0 {
		return "-" + itoa(-n)
	}
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + itoa(n%10)
}

func TestAnErrorEventEndsTheStreamByItselfAndResultIsTheSameMessage(t *testing.T) {
	bound(t)
	// The seed's second focused test: no end call; the error event alone ends iteration.
	stream := piproto.NewAssistantMessageEventStream()
	failed := assistantMessage(nil, failedWith(aiv1.StopReason_STOP_REASON_ERROR, "socket reset"))
	event := errorEvent(aiv1.StopReason_STOP_REASON_ERROR, failed)
	if err := stream.Push(event); err != nil {
		t.Fatal(err)
	}

	seen := collect(stream.Events())

	if len(seen) != 1 || seen[0] != event {
		t.Fatalf("seen %v", seen)
	}
	result := stream.Result(context.Background())
	if result != failed || result.GetErrorMessage() != "socket reset" {
		t.Fatalf("result %v", result)
	}
}

func TestDoneSettlesTheResultAndLaterEventsAreIgnored(t *testing.T) {
	bound(t)
	stream := piproto.NewAssistantMessageEventStream()
	final := assistantMessage(nil)
	for _, event := range []*aiv1.ModelEvent{
		start(assistantMessage(nil)),
		done(final),
		textDelta(0, "late"),
		errorEvent(aiv1.StopReason_STOP_REASON_ERROR, assistantMessage(nil)),
	} {
		if err := stream.Push(event); err != nil {
			t.Fatal(err)
		}
	}

	assertKinds(t, collect(stream.Events()), "start", "done")
	if stream.Result(context.Background()) != final || !stream.Done() {
		t.Fatal("the result is not the done event's message")
	}
}

func TestOnlyTerminalEventsProduceAResult(t *testing.T) {
	bound(t)
	if _, err := piproto.TerminalMessage(textDelta(0, "x")); !errors.Is(err, piproto.ErrNotTerminal) ||
		err.Error() != "only a done or error event carrying a message produces the final message" {
		t.Fatalf("error %v", err)
	}
	final := assistantMessage(nil)
	if message, err := piproto.TerminalMessage(done(final)); message != final || err != nil {
		t.Fatal(message, err)
	}
}

func TestAWaitingConsumerReceivesEventsPushedLater(t *testing.T) {
	bound(t)
	stream := numbers(0)
	consumed := make(chan []int)
	go func() { consumed <- collect(stream.All()) }()
	for _, n := range []int{1, 2, -3} {
		waitFor(t, "the consumer to wait", func() bool { return stream.Queued() == 0 && parked(t, "take") == 1 })
		stream.Push(n)
	}
	stream.Push(4)
	if seen := <-consumed; !slices.Equal(seen, []int{1, 2, -3}) {
		t.Fatalf("seen %v", seen)
	}
	if result, err := stream.Result(context.Background()); result != "ended at -3" || err != nil {
		t.Fatal(result, err)
	}
}

func TestEndReleasesEveryWaitingConsumerAndCanSetTheResult(t *testing.T) {
	bound(t)
	stream := numbers(0)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var seen []int
	for range 2 {
		wg.Go(func() {
			items := collect(stream.All())
			mu.Lock()
			seen = append(seen, items...)
			mu.Unlock()
		})
	}
	waitFor(t, "both consumers to wait", func() bool { return parked(t, "take") == 1 && parked(t, "takeTurn") == 1 })
	stream.Push(7)
	stream.EndWith("over")
	wg.Wait()
	if !slices.Equal(seen, []int{7}) {
		t.Fatalf("seen %v", seen)
	}
	if result, _ := stream.Result(context.Background()); result != "over" {
		t.Fatal(result)
	}
	stream.Push(8)
	if rest := collect(stream.All()); len(rest) != 0 {
		t.Fatalf("after the end: %v", rest)
	}
}

func TestEndWithoutAResultLeavesResultWaitingUntilItsContextEnds(t *testing.T) {
	bound(t)
	stream := numbers(0)
	stream.End()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := stream.Result(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatal(err)
	}
	if _, ok := stream.Next(context.Background()); ok {
		t.Fatal("an ended, empty stream gave an event")
	}
}

func TestNextReturnsWhenItsContextEnds(t *testing.T) {
	bound(t)
	stream := numbers(0)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for parked(t, "take") == 0 { // Next waits for an event
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	if _, ok := stream.Next(ctx); ok || ctx.Err() == nil {
		t.Fatal("Next returned an event from an empty stream")
	}
	if stream.Done() {
		t.Fatal("the end of a consumer's context ended the stream")
	}
}

func TestFailEndsTheStreamWithAnErrorEventThatKeepsThePartial(t *testing.T) {
	bound(t)
	stream := piproto.NewAssistantMessageEventStream()
	for _, event := range []*aiv1.ModelEvent{start(assistantMessage(nil)), textStart(0), textDelta(0, "kept")} {
		if err := stream.Push(event); err != nil {
			t.Fatal(err)
		}
	}
	stream.Fail(aiv1.StopReason_STOP_REASON_ERROR, "socket reset")
	stream.Fail(aiv1.StopReason_STOP_REASON_ABORTED, "ignored: the stream has ended")

	seen := collect(stream.Events())
	message := stream.Result(context.Background())

	assertKinds(t, seen, "start", "text_start", "text_delta", "error")
	assertStopped(t, message, aiv1.StopReason_STOP_REASON_ERROR, "socket reset")
	if piproto.TextOf(message) != "kept" || seen[len(seen)-1].Partial != message || stream.Partial() != message {
		t.Fatalf("message %v", message)
	}
}

func TestEachEventShowsThePartialAsOfThatEvent(t *testing.T) {
	bound(t)
	// The producer runs ahead; the consumer's partial follows the events it has taken.
	stream := piproto.NewAssistantMessageEventStream()
	message := assistantMessage([]*aiv1.AssistantContent{text("abcdef")})
	for _, event := range eventsOf(message, 2) {
		if err := stream.Push(event); err != nil {
			t.Fatal(err)
		}
	}
	var texts []string
	for event := range stream.Events() {
		texts = append(texts, piproto.TextOf(event.Partial))
		if stream.Partial() != event.Partial {
			t.Fatal("Partial() is not the partial of the event taken last")
		}
	}
	if want := []string{"", "", "ab", "abcd", "abcdef", "abcdef", "abcdef"}; !slices.Equal(texts, want) {
		t.Fatalf("texts %q, want %q", texts, want)
	}
}

func TestCancelWithoutAProducerEndsTheStreamWithAborted(t *testing.T) {
	bound(t)
	stream := piproto.NewAssistantMessageEventStream()
	stream.Cancel()
	assertStopped(t, stream.Result(context.Background()), aiv1.StopReason_STOP_REASON_ABORTED, "cancelled")
}

func TestCancelStopsADrivenProducerAndWhatItPushesLaterIsNotDelivered(t *testing.T) {
	bound(t)
	stream := piproto.NewAssistantMessageEventStream()
	released := make(chan struct{})
	stream.Drive(context.Background(), func(ctx context.Context) error {
		if err := stream.Push(start(assistantMessage(nil))); err != nil {
			return err
		}
		<-ctx.Done()
		err := stream.Push(textStart(0))
		close(released)
		return err
	})

	first, ok := stream.Next(context.Background())
	if !ok || piproto.EventKind(first) != "start" {
		t.Fatalf("first %v", first)
	}
	stream.CancelWith("stop now", aiv1.StopReason_STOP_REASON_ABORTED)
	<-released

	assertKinds(t, collect(stream.Events()), "error")
	assertStopped(t, stream.Result(context.Background()), aiv1.StopReason_STOP_REASON_ABORTED, "stop now")
}

func TestADrivenProducerThatStopsEarlyOrFailsBecomesAnErrorEvent(t *testing.T) {
	bound(t)
	quiet := piproto.NewAssistantMessageEventStream()
	quiet.Drive(context.Background(), func(context.Context) error { return quiet.Push(start(nil)) })
	assertKinds(t, collect(quiet.Events()), "start", "error")
	assertStopped(t, quiet.Result(context.Background()), aiv1.StopReason_STOP_REASON_ERROR, "stream ended without a terminal event")

	broken := piproto.NewAssistantMessageEventStream()
	broken.Drive(context.Background(), func(context.Context) error { return errors.New("boom") })
	assertKinds(t, collect(broken.Events()), "error")
	assertStopped(t, broken.Result(context.Background()), aiv1.StopReason_STOP_REASON_ERROR, "boom")

	invalid := piproto.NewAssistantMessageEventStream()
	invalid.Drive(context.Background(), func(context.Context) error { return invalid.Push(textDelta(2, "x")) })
	if message := invalid.Result(context.Background()); message.StopReason != aiv1.StopReason_STOP_REASON_ERROR || message.GetErrorMessage() == "" {
		t.Fatalf("message %v", message)
	}
	if failure := invalid.Failure(); failure == nil || failure.Rule.RuleID != "start-first" || failure.Rule.EventIndex != 0 {
		t.Fatalf("failure %v", failure)
	}
	if failure := quiet.Failure(); failure == nil || failure.Rule.Rule != aiv1.StreamRule_STREAM_RULE_TERMINAL_MISSING || failure.Rule.RuleID != "terminal-missing" || failure.Rule.EventIndex != 1 {
		t.Fatalf("failure %v", failure)
	}
	if broken.Failure() != nil {
		t.Fatalf("failure %v", broken.Failure())
	}
}

func TestTheEndOfTheDrivingContextEndsTheStream(t *testing.T) {
	bound(t)
	// Each context ends once the start event has been taken: a deadline of the test's own, not a
	// timer that a busy machine may let pass before the producer has pushed anything.
	for _, case_ := range []struct {
		name    string
		ctx     func() (context.Context, context.CancelFunc)
		reason  aiv1.StopReason
		message string
	}{
		{"cancelled", func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) }, aiv1.StopReason_STOP_REASON_ABORTED, "cancelled"},
		{"deadline", func() (context.Context, context.CancelFunc) {
			ctx := newDeadlineContext()
			return ctx, ctx.pass
		}, aiv1.StopReason_STOP_REASON_ERROR, "context deadline exceeded"},
	} {
		t.Run(case_.name, func(t *testing.T) {
			ctx, cancel := case_.ctx()
			defer cancel()
			stream := piproto.NewAssistantMessageEventStream()
			stream.Drive(ctx, func(ctx context.Context) error {
				if err := stream.Push(start(assistantMessage(nil))); err != nil {
					return err
				}
				<-ctx.Done()
				return ctx.Err()
			})
			if first, ok := stream.Next(ctx); !ok || piproto.EventKind(first) != "start" {
				t.Fatal("no start event")
			}
			cancel() // or the deadline passes
			// Waiting with the very context that ended still gives the stream's last events.
			rest := collect(func(yield func(*aiv1.ModelEvent) bool) {
				for event, ok := stream.Next(ctx); ok && yield(event); event, ok = stream.Next(ctx) {
				}
			})
			assertKinds(t, rest, "error")
			message := stream.Result(ctx)
			assertStopped(t, message, case_.reason, case_.message)
			if message.GetModel() != "scripted-v1" {
				t.Fatal("the header received before the end is lost")
			}
		})
	}
}

func TestSendWaitsForRoomBelowTheHighWaterMarkButPushDoesNot(t *testing.T) {
	bound(t)
	stream := numbers(2)
	ctx := context.Background()
	for _, n := range []int{1, 2} {
		if err := stream.Send(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	sent := make(chan struct{})
	go func() {
		_ = stream.Send(ctx, 3)
		close(sent)
	}()
	waitFor(t, "Send to wait for room", func() bool { return parked(t, "waitForRoom") == 1 })
	select {
	case <-sent:
		t.Fatal("Send did not wait for room")
	default:
	}
	if stream.Queued() != 2 {
		t.Fatalf("queued %d", stream.Queued())
	}
	stream.Push(4) // Push is the producer's own choice to skip the bound
	if stream.Queued() != 3 {
		t.Fatalf("queued %d", stream.Queued())
	}
	for _, want := range []int{1, 2} {
		if got, ok := stream.Next(ctx); !ok || got != want {
			t.Fatal(got, ok)
		}
	}
	<-sent
	stream.Push(-1)
	if rest := collect(stream.All()); !slices.Equal(rest, []int{4, 3, -1}) {
		t.Fatalf("rest %v", rest)
	}

	full := numbers(1)
	full.Push(1)
	short, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	if err := full.Send(short, 2); !errors.Is(err, context.DeadlineExceeded) || full.Queued() != 1 {
		t.Fatalf("Send into a full stream: %v", err)
	}
}

func TestEndingTheStreamReleasesAProducerWaitingInSend(t *testing.T) {
	bound(t)
	stream := piproto.NewAssistantMessageEventStream()
	for _, event := range []*aiv1.ModelEvent{start(assistantMessage(nil)), textStart(0)} {
		if err := stream.Push(event); err != nil {
			t.Fatal(err)
		}
	}
	for stream.Queued() < stream.HighWater() {
		if err := stream.Push(textDelta(0, "x")); err != nil {
			t.Fatal(err)
		}
	}
	blocked := make(chan error)
	go func() { blocked <- stream.Send(context.Background(), textDelta(0, "late")) }()
	waitFor(t, "Send to wait for room", func() bool { return parked(t, "waitForRoom") == 1 })
	stream.CancelWith("deadline passed", aiv1.StopReason_STOP_REASON_ERROR)
	if err := <-blocked; err != nil {
		t.Fatal(err)
	}
	seen := collect(stream.Events())
	if len(seen) != stream.HighWater()+1 {
		t.Fatalf("%d events", len(seen))
	}
	message := stream.Result(context.Background())
	assertStopped(t, message, aiv1.StopReason_STOP_REASON_ERROR, "deadline passed")
	if piproto.TextOf(message) != strings.Repeat("x", stream.HighWater()-2) {
		t.Fatalf("text %q", piproto.TextOf(message))
	}
}

func TestALongStreamReadOneEventBehindStaysInOrder(t *testing.T) {
	bound(t)
	stream := piproto.NewEventStream(func(n int) bool { return n < 0 }, func(n int) int { return n }, 0)
	const count = 5000
	ctx := context.Background()
	stream.Push(0)
	var seen []int
	for n := 1; n <= count; n++ {
		if n == count {
			stream.Push(-n)
		} else {
			stream.Push(n) // the queue never empties until the end
		}
		got, _ := stream.Next(ctx)
		seen = append(seen, got)
	}
	seen = append(seen, collect(stream.All())...)
	for i, n := range seen[:count] {
		if n != i {
			t.Fatalf("event %d is %d", i, n)
		}
	}
	if len(seen) != count+1 || seen[count] != -count {
		t.Fatalf("%d events, last %d", len(seen), seen[len(seen)-1])
	}
}

func TestConcurrentProducersAndConsumersLoseNothing(t *testing.T) {
	bound(t)
	stream := numbers(8)
	ctx := context.Background()
	const producers, each = 4, 2000
	var produced sync.WaitGroup
	for p := range producers {
		produced.Go(func() {
			for i := range each {
				if err := stream.Send(ctx, 1+p*each+i); err != nil {
					t.Error(err)
				}
			}
		})
	}
	results := make(chan []int)
	for range 3 {
		go func() { results <- collect(stream.All()) }()
	}
	produced.Wait()
	stream.Push(-1)
	var seen []int
	for range 3 {
		seen = append(seen, <-results...)
	}
	slices.Sort(seen)
	if len(seen) != producers*each+1 || seen[0] != -1 {
		t.Fatalf("%d events", len(seen))
	}
	for i, n := range seen[1:] {
		if n != i+1 {
			t.Fatalf("event %d is missing or repeated", i+1)
		}
	}
}

func TestConsumersThatWaitTakeTurns(t *testing.T) {
	bound(t)
	// As in pi: each event goes to the consumer that has waited longest.
	stream := numbers(0)
	var got [2][]int
	var consumers sync.WaitGroup
	for i := range got {
		consumers.Go(func() {
			for n := range stream.All() {
				got[i] = append(got[i], n)
			}
		})
		// Consumer 0 waits for an event first, consumer 1 for its turn behind it.
		waitFor(t, "the consumer to wait", func() bool { return parked(t, "take") == 1 && parked(t, "takeTurn") == i })
	}
	for n := range 6 {
		stream.Push(n)
		// The consumer that took n waits again, behind the other, which waits for the next event.
		waitFor(t, "the consumers to wait again", func() bool {
			return stream.Queued() == 0 && parked(t, "take") == 1 && parked(t, "takeTurn") == 1
		})
	}
	stream.Push(-1)
	consumers.Wait()
	if !slices.Equal(got[0], []int{0, 2, 4, -1}) || !slices.Equal(got[1], []int{1, 3, 5}) {
		t.Fatalf("consumers got %v", got)
	}
}

func TestConsumersOfAnAssistantStreamTakeTurnsAndSeeThePartialOfTheirEvent(t *testing.T) {
	bound(t)
	stream := piproto.NewAssistantMessageEventStream()
	var got [2][]string
	recorded := make(chan struct{})
	var consumers sync.WaitGroup
	for i := range got {
		consumers.Go(func() {
			for event := range stream.Events() {
				// The partial is shared: read it before the next event may change it.
				got[i] = append(got[i], piproto.EventKind(event)+" "+piproto.TextOf(event.Partial))
				recorded <- struct{}{}
			}
		})
		// Consumer 0 waits for an event first, consumer 1 for its turn behind it.
		waitFor(t, "the consumer to wait", func() bool { return parked(t, "take") == 1 && parked(t, "takeTurn") == i })
	}
	events := eventsOf(assistantMessage([]*aiv1.AssistantContent{text("abcd")}), 1)
	for n, event := range events {
		if err := stream.Push(event); err != nil {
			t.Fatal(err)
		}
		<-recorded
		if n < len(events)-1 {
			// The consumer that took it waits again, behind the other, which waits for the next event.
			waitFor(t, "the consumers to wait again", func() bool { return parked(t, "take") == 1 && parked(t, "takeTurn") == 1 })
		}
	}
	consumers.Wait()
	want := [2][]string{
		{"start ", "text_delta a", "text_delta abc", "text_end abcd"},
		{"text_start ", "text_delta ab", "text_delta abcd", "done abcd"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("consumers got %q", got)
	}
}

func TestCancelFromAnotherGoroutineEndsEveryWaitingConsumerAndResolvesResult(t *testing.T) {
	bound(t)
	stream := piproto.NewAssistantMessageEventStream()
	stream.Drive(context.Background(), func(ctx context.Context) error {
		if err := stream.Push(start(assistantMessage(nil))); err != nil {
			return err
		}
		<-ctx.Done() // a model that goes quiet
		return nil
	})
	var mu sync.Mutex
	var seen []string
	var consumers sync.WaitGroup
	for range 3 {
		consumers.Go(func() {
			for event := range stream.Events() {
				mu.Lock()
				seen = append(seen, piproto.EventKind(event))
				mu.Unlock()
			}
		})
	}
	results := make(chan *aiv1.AssistantMessage, 2)
	for range 2 {
		go func() { results <- stream.Result(context.Background()) }()
	}
	// Everyone waits: the start event taken, one consumer for the next event, two for their turn,
	// two callers in Result.
	waitFor(t, "every consumer and Result to wait", func() bool {
		mu.Lock()
		started := slices.Equal(seen, []string{"start"})
		mu.Unlock()
		return started && parked(t, "take") == 1 && parked(t, "takeTurn") == 2 && parked(t, "Result") == 2
	})
	go stream.Cancel()
	consumers.Wait()
	slices.Sort(seen)
	if !slices.Equal(seen, []string{"error", "start"}) {
		t.Fatalf("seen %v", seen)
	}
	first, second := <-results, <-results
	assertStopped(t, first, aiv1.StopReason_STOP_REASON_ABORTED, "cancelled")
	if second != first || first.GetModel() != "scripted-v1" || stream.Failure() != nil {
		t.Fatalf("results %v, %v; failure %v", first, second, stream.Failure())
	}
}
