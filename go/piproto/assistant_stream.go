package piproto

import (
	"context"
	"errors"
	"iter"
	"sync"

	aiv1 "github.com/pi-proto/pi-proto/go/gen/pi/ai/v1"
)

// Producer produces the events of a driven stream; it should return once ctx ends. Returning
// without a terminal event, or with an error, ends the stream with an ERROR event.
type Producer func(ctx context.Context) error

// StreamFailure says why a stream was ended by its receiver, with an error event of its own
// making: a gRPC status ended the call, or an event broke a stream rule.
type StreamFailure struct {
	// StatusCode is the name of the gRPC status code that ended the call, e.g. "UNAVAILABLE" or
	// "DEADLINE_EXCEEDED"; "" when a rule was broken.
	StatusCode string
	// Rule is the stream rule an event broke (with "terminal-missing" for a call that ended
	// without a terminal event, "event-decode" for bytes that are no ModelEvent); nil when a
	// status ended the call.
	Rule *StreamProtocolError
	// Detail says what happened, in words.
	Detail string
}

func (f *StreamFailure) String() string { return f.Detail }

// AssistantMessageEventStream carries the events of one model call, each with its Partial filled
// in, and ends in the call's final message. It turns any failure of the producer that feeds it
// into an error event, so ranging over it always ends and Result always gives a message.
//
// A producer feeds the stream by calling Push or Send, or by being handed to Drive. A driven
// stream that stops without a terminal event is ended with an error event carrying everything
// received so far: ABORTED when Cancel (or the end of the caller's context) stopped it, ERROR
// otherwise. When the stream ends itself like that, Failure says why.
//
// Each event's Partial is the message rebuilt by an [Accumulator] on the consumer's side, as the
// event is taken: one live message updated in place, as in pi, so the event read last shows the
// message after it until the next Next changes it (clone it with proto.Clone to keep a snapshot).
// A tool call still streaming has its arguments_json left empty there; [AssistantMessageEventStream.Partial] completes it.
// Producers and consumers may be different goroutines. Several consumers take turns, each event
// going to the one that has waited longest; the shared partial is theirs to synchronize.
type AssistantMessageEventStream struct {
	events *EventStream[*aiv1.ModelEvent, *aiv1.AssistantMessage]

	mu       sync.Mutex   // the producer's side: the accumulator and the push that follows it
	received *Accumulator // the rules, and the message an error event keeps
	failure  *StreamFailure
	driven   context.Context
	stop     context.CancelFunc
	streamID string // from the start event pushed
	// cancelled is told the stream id when a cancel ends a stream that has one, so that the
	// server keeping the stream can be told too; nil when nobody needs to know.
	cancelled func(streamID string)

	viewMu sync.Mutex   // the view, between the consumer taking an event and Partial
	view   *Accumulator // the partial the consumers see, in the turn of the one taking an event
	taken  bool         // whether an event has been taken
}

// NewAssistantMessageEventStream returns an empty stream that checks its events against the
// stream rules, with a size limit of [DefaultMaxMessageBytes].
func NewAssistantMessageEventStream() *AssistantMessageEventStream {
	return NewAssistantMessageEventStreamWithLimit(0)
}

// NewAssistantMessageEventStreamWithLimit returns an empty stream whose block events may add up
// to at most maxMessageBytes of UTF-8 (rule "size-limit"); 0 means [DefaultMaxMessageBytes].
func NewAssistantMessageEventStreamWithLimit(maxMessageBytes int64) *AssistantMessageEventStream {
	received := NewAccumulator()
	received.MaxMessageBytes = maxMessageBytes
	return &AssistantMessageEventStream{
		events: NewEventStream(IsTerminal, func(event *aiv1.ModelEvent) *aiv1.AssistantMessage {
			message, _ := TerminalMessage(event)
			return message
		}, DefaultHighWater),
		received: received,
		view:     NewAccumulator(),
	}
}

// Push checks event against the stream so far and queues it. An event that does not fit is
// refused, before anything is queued, with a *[StreamProtocolError] (a driven stream's producer
// returns it, and the stream ends with it as its ERROR event). A no-op once the stream has ended.
func (s *AssistantMessageEventStream) Push(event *aiv1.ModelEvent) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.events.Done() {
		return nil
	}
	if err := s.received.apply(event, true); err != nil {
		return err
	}
	if start := event.GetStart(); start != nil {
		s.streamID = start.GetStreamId()
	}
	s.events.Push(event)
	return nil
}

// StreamID is the id the server keeps the stream under (StartEvent.stream_id), from the start
// event pushed; "" before it, or when the server keeps the stream under none.
func (s *AssistantMessageEventStream) StreamID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.streamID
}

// Send is Push once there is room in the queue, as [EventStream.Send] waits for it, so a producer
// is slowed to the pace of its consumer; it returns ctx's error if ctx ends first.
func (s *AssistantMessageEventStream) Send(ctx context.Context, event *aiv1.ModelEvent) error {
	if err := s.events.waitForRoom(ctx); err != nil {
		return err
	}
	return s.Push(event)
}

// Fail ends the stream with an error event that keeps everything received so far, with this
// reason and error message; a no-op once the stream has ended. The message it carries is built
// from the partial and need not pass the rules a sender's terminal event must.
func (s *AssistantMessageEventStream) Fail(reason aiv1.StopReason, errorMessage string) {
	s.fail(reason, errorMessage, nil)
}

// fail is Fail, recording why the receiver ended the stream; it reports whether it did end it,
// with the stream's id.
func (s *AssistantMessageEventStream) fail(reason aiv1.StopReason, errorMessage string, failure *StreamFailure) (bool, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.events.Done() {
		return false, ""
	}
	s.failure = failure
	message := s.received.Partial()
	message.StopReason = reason
	message.ErrorMessage = &errorMessage
	s.events.Push(&aiv1.ModelEvent{Event: &aiv1.ModelEvent_Error{Error: &aiv1.ErrorEvent{Reason: reason, Message: message}}})
	return true, s.streamID
}

// failRule ends the stream with an ERROR event for a broken stream rule.
func (s *AssistantMessageEventStream) failRule(broken *StreamProtocolError) {
	s.fail(aiv1.StopReason_STOP_REASON_ERROR, broken.Error(), &StreamFailure{Rule: broken, Detail: broken.Error()})
}

// failStatus ends the stream with an ERROR event for a gRPC status that ended the call.
func (s *AssistantMessageEventStream) failStatus(code, errorMessage string) {
	s.fail(aiv1.StopReason_STOP_REASON_ERROR, errorMessage, &StreamFailure{StatusCode: code, Detail: errorMessage})
}

// endWithoutTerminal ends a stream whose events stopped before a terminal event (rule
// "terminal-missing").
func (s *AssistantMessageEventStream) endWithoutTerminal() {
	s.mu.Lock()
	count := s.received.Count
	s.mu.Unlock()
	broken := newStreamProtocolError(count, aiv1.StreamRule_STREAM_RULE_TERMINAL_MISSING, "the events ended without a terminal event")
	s.fail(aiv1.StopReason_STOP_REASON_ERROR, "stream ended without a terminal event", &StreamFailure{Rule: broken, Detail: broken.Error()})
}

// Failure says why the receiver ended the stream itself: a gRPC status or a broken stream rule.
// It is nil while the stream runs, and stays nil when the terminal event came from the producer
// or from a cancel. Read it once the terminal event has been taken (or Result has returned).
func (s *AssistantMessageEventStream) Failure() *StreamFailure {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failure
}

// Drive runs producer in its own goroutine as what feeds this stream. Its context ends when
// Cancel is called, when ctx ends, or once the stream has ended. When ctx ends first the stream
// ends with ABORTED "cancelled", or, for a passed deadline, ERROR "context deadline exceeded"
// (Failure: DEADLINE_EXCEEDED). A producer that returns a *[StreamProtocolError] ends the stream
// with ERROR and that rule as its Failure; one that returns without a terminal event ends it with
// ERROR and the rule "terminal-missing". Drive is called at most once, before anything else
// happens to the stream.
func (s *AssistantMessageEventStream) Drive(ctx context.Context, producer Producer) {
	inner, stop := context.WithCancel(ctx)
	s.mu.Lock()
	s.driven, s.stop = ctx, stop
	s.mu.Unlock()
	unwatch := context.AfterFunc(ctx, s.callerDone)
	go func() {
		defer stop()
		defer unwatch()
		err := producer(inner)
		if ctx.Err() != nil {
			s.callerDone() // what ended the producer, if the stream has not ended yet
		}
		var broken *StreamProtocolError
		switch {
		case errors.As(err, &broken):
			s.failRule(broken)
		case err != nil:
			s.Fail(aiv1.StopReason_STOP_REASON_ERROR, err.Error())
		default:
			s.endWithoutTerminal()
		}
	}()
}

// Cancel stops the call: the stream ends at once with an ABORTED error event "cancelled", after
// the events already queued, and the producer's context ends, so nothing it pushes later is
// delivered. It may be called from any goroutine; a consumer waiting in Next receives the error
// event, and a caller waiting in Result the message it carries.
func (s *AssistantMessageEventStream) Cancel() {
	s.CancelWith("cancelled", aiv1.StopReason_STOP_REASON_ABORTED)
}

// CancelWith is Cancel with another error message and reason, e.g. ERROR for a deadline.
func (s *AssistantMessageEventStream) CancelWith(errorMessage string, reason aiv1.StopReason) {
	s.cancel(errorMessage, reason, nil)
}

func (s *AssistantMessageEventStream) cancel(errorMessage string, reason aiv1.StopReason, failure *StreamFailure) {
	ended, streamID := s.fail(reason, errorMessage, failure)
	s.mu.Lock()
	stop, cancelled := s.stop, s.cancelled
	s.mu.Unlock()
	if stop != nil {
		stop()
	}
	// A caller's cancel, not a passed deadline: the server cannot tell it from a connection lost.
	if ended && failure == nil && streamID != "" && cancelled != nil {
		cancelled(streamID)
	}
}

// callerDone ends the stream because the context given to Drive has ended.
func (s *AssistantMessageEventStream) callerDone() {
	s.mu.Lock()
	ctx := s.driven
	s.mu.Unlock()
	if err := ctx.Err(); errors.Is(err, context.DeadlineExceeded) {
		s.cancel(err.Error(), aiv1.StopReason_STOP_REASON_ERROR, &StreamFailure{StatusCode: "DEADLINE_EXCEEDED", Detail: err.Error()})
	} else {
		s.Cancel()
	}
}

// stopping reports whether a wait that ctx ended should go on: when the stream's own context has
// ended too, the stream ends now (if it has not yet) and the wait takes what is left.
func (s *AssistantMessageEventStream) stopping(ctx context.Context) bool {
	if ctx.Err() == nil {
		return false
	}
	s.mu.Lock()
	driven := s.driven
	s.mu.Unlock()
	if driven == nil || driven.Err() == nil {
		return false
	}
	s.callerDone()
	return true
}

// Done reports whether the stream has ended: nothing pushed from now on is delivered.
func (s *AssistantMessageEventStream) Done() bool { return s.events.Done() }

// Queued is the number of events pushed but not yet taken by a consumer.
func (s *AssistantMessageEventStream) Queued() int { return s.events.Queued() }

// HighWater is how many queued events make Send wait for a consumer.
func (s *AssistantMessageEventStream) HighWater() int { return s.events.HighWater() }

// Next waits for its turn, then for the next event, and fills in its Partial. It returns false
// once the terminal event has been taken, or when ctx ends first; but when the context given to
// Drive has ended too (as when ctx is that context or derives from it), the stream ends at once
// and Next goes on to return what is left, down to its error event.
func (s *AssistantMessageEventStream) Next(ctx context.Context) (*aiv1.ModelEvent, bool) {
	if !s.events.takeTurn(ctx) {
		if !s.stopping(ctx) {
			return nil, false
		}
		s.events.takeTurn(context.Background())
	}
	defer s.events.endTurn()
	event, ok := s.events.take(ctx)
	if !ok && s.stopping(ctx) {
		event, ok = s.events.take(context.Background())
	}
	if !ok {
		return nil, false
	}
	s.viewMu.Lock()
	defer s.viewMu.Unlock()
	_ = s.view.apply(event, false) // accepted already by the producer's side
	event.Partial = s.view.partial
	s.taken = true
	return event, true
}

// Events ranges over the events, each with its Partial, up to and including the terminal one.
// It never fails: a failure arrives as the error event. Breaking out of the loop leaves the call
// running; Cancel stops it.
func (s *AssistantMessageEventStream) Events() iter.Seq[*aiv1.ModelEvent] {
	return func(yield func(*aiv1.ModelEvent) bool) {
		for {
			event, ok := s.Next(context.Background())
			if !ok || !yield(event) {
				return
			}
		}
	}
}

// Result waits for the final message: the one the terminal event carries. It is nil only when
// ctx ends first while the context given to Drive has not (see Next).
func (s *AssistantMessageEventStream) Result(ctx context.Context) *aiv1.AssistantMessage {
	message, err := s.events.Result(ctx)
	if err != nil {
		if !s.stopping(ctx) {
			return nil
		}
		message, _ = s.events.Result(context.Background())
	}
	return message
}

// Partial is the message as rebuilt from the events taken so far, or nil before the first: the
// Partial of the event that Next returned last, with the arguments_json of every tool call still
// streaming completed (see [Accumulator.Partial]).
func (s *AssistantMessageEventStream) Partial() *aiv1.AssistantMessage {
	s.viewMu.Lock()
	defer s.viewMu.Unlock()
	if !s.taken {
		return nil
	}
	return s.view.Partial()
}
