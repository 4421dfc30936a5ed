package piproto

import (
	"context"
	"iter"
	"sync"
)

// DefaultHighWater is how many queued events make [EventStream.Send] wait for a consumer.
const DefaultHighWater = 64

// EventStream is a queue of events that also yields a final result.
//
// Push queues an event (Send first waits for room: once the queue holds the high-water mark, it
// waits until the queue has drained to half of it, so a full queue wakes its producer once per
// half queue rather than once per event); a terminal event,
// as isTerminal says, settles the result with extractResult(event) and ends iteration once it
// has been taken, with no End needed. Anything pushed after a terminal event is ignored. End and
// EndWith end the stream early and release every waiting consumer; without a result, Result keeps
// waiting. Consumers take events with Next or range over All; waiting is done on channels, so
// every wait also ends with its context. Several consumers take turns, as in pi: each event goes
// to the consumer that has waited longest, so two consumers that both wait get every other
// event. An EventStream is safe for concurrent use.
type EventStream[T, R any] struct {
	highWater     int
	isTerminal    func(T) bool
	extractResult func(T) R

	// turn is held by the one consumer waiting for the next event; the others wait to send into
	// it, and a channel's waiting senders go in the order they came: that order is the turns.
	turn chan struct{}

	mu       sync.Mutex
	queue    []T
	head     int // a head index instead of re-slicing from the front, so the array is reused
	ended    bool
	arrived  signal // an event was queued or the stream ended: for consumers
	room     signal // the queue drained to half or the stream ended: for producers
	wanted   signal // a consumer or a Result began to wait: for producers that read on demand
	readers  int    // consumers waiting for an event
	awaiting int    // callers waiting in Result
	result   R
	resolved bool
	settled  chan struct{} // closed once result is set
}

// signal is a broadcast to the goroutines waiting on it: a channel closed, and replaced, when
// the awaited change happens, and only made when someone waits.
type signal struct {
	channel chan struct{}
}

func (s *signal) wait() <-chan struct{} {
	if s.channel == nil {
		s.channel = make(chan struct{})
	}
	return s.channel
}

func (s *signal) wake() {
	if s.channel != nil {
		close(s.channel)
		s.channel = nil
	}
}

// NewEventStream returns an empty stream; highWater <= 0 means [DefaultHighWater].
func NewEventStream[T, R any](isTerminal func(T) bool, extractResult func(T) R, highWater int) *EventStream[T, R] {
	if highWater <= 0 {
		highWater = DefaultHighWater
	}
	return &EventStream[T, R]{
		highWater:     highWater,
		isTerminal:    isTerminal,
		extractResult: extractResult,
		turn:          make(chan struct{}, 1),
		settled:       make(chan struct{}),
	}
}

// HighWater is how many queued events make Send wait for a consumer.
func (s *EventStream[T, R]) HighWater() int { return s.highWater }

// Done reports whether the stream has ended: nothing pushed from now on is delivered.
func (s *EventStream[T, R]) Done() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ended
}

// Queued is the number of events pushed but not yet taken by a consumer.
func (s *EventStream[T, R]) Queued() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue) - s.head
}

// Push queues an event for the consumers; a no-op once the stream has ended.
func (s *EventStream[T, R]) Push(event T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pushLocked(event)
}

func (s *EventStream[T, R]) pushLocked(event T) {
	if s.ended {
		return
	}
	if s.isTerminal(event) {
		s.ended = true
		s.resolveLocked(s.extractResult(event))
	}
	s.queue = append(s.queue, event)
	s.arrived.wake()
	if s.ended {
		s.room.wake()
		s.wanted.wake()
	}
}

// Send pushes once there is room (below the high-water mark; after the queue has been full, once
// it has drained to half): a producer that sends is slowed to the pace of its consumer instead of
// filling memory. It returns ctx's error, without pushing, if ctx ends first; an ended stream
// takes (and ignores) the event at once.
func (s *EventStream[T, R]) Send(ctx context.Context, event T) error {
	if err := s.waitForRoom(ctx); err != nil {
		return err
	}
	s.Push(event)
	return nil
}

// waitForRoom returns once the queue is below the high-water mark or the stream has ended; when
// it has to wait, it waits for the queue to drain to half.
func (s *EventStream[T, R]) waitForRoom(ctx context.Context) error {
	for {
		s.mu.Lock()
		if s.ended || len(s.queue)-s.head < s.highWater {
			s.mu.Unlock()
			return nil
		}
		room := s.room.wait()
		s.mu.Unlock()
		select {
		case <-room:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// End ends the stream and releases every waiting consumer; the events already queued are still
// delivered.
func (s *EventStream[T, R]) End() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.endLocked()
}

// EndWith ends the stream like End and settles the result, unless a terminal event already has.
func (s *EventStream[T, R]) EndWith(result R) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resolveLocked(result)
	s.endLocked()
}

func (s *EventStream[T, R]) endLocked() {
	s.ended = true
	s.arrived.wake()
	s.room.wake()
	s.wanted.wake()
}

// Result waits for the final result, once a terminal event or EndWith has provided it; it returns
// ctx's error if ctx ends first.
func (s *EventStream[T, R]) Result(ctx context.Context) (R, error) {
	select {
	case <-s.settled:
		return s.result, nil
	default:
	}
	s.mu.Lock()
	s.awaiting++
	s.wanted.wake()
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.awaiting--
		s.mu.Unlock()
	}()
	select {
	case <-s.settled:
		return s.result, nil
	case <-ctx.Done():
		var zero R
		return zero, ctx.Err()
	}
}

// Next waits for its turn and then for the next event. It returns false once the stream has
// ended and every event has been taken, or when ctx ends first (ctx.Err() then says so).
func (s *EventStream[T, R]) Next(ctx context.Context) (T, bool) {
	if !s.takeTurn(ctx) {
		var zero T
		return zero, false
	}
	defer s.endTurn()
	return s.take(ctx)
}

// takeTurn waits until every consumer that came earlier has had its event; false when ctx ends
// first.
func (s *EventStream[T, R]) takeTurn(ctx context.Context) bool {
	select {
	case s.turn <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

func (s *EventStream[T, R]) endTurn() { <-s.turn }

// take waits for the next event, in the caller's turn.
func (s *EventStream[T, R]) take(ctx context.Context) (T, bool) {
	waiting := false
	defer func() {
		if waiting {
			s.mu.Lock()
			s.readers--
			s.mu.Unlock()
		}
	}()
	for {
		s.mu.Lock()
		if s.head < len(s.queue) {
			event := s.takeLocked()
			s.mu.Unlock()
			return event, true
		}
		if s.ended {
			s.mu.Unlock()
			var zero T
			return zero, false
		}
		if !waiting {
			waiting = true
			s.readers++
			s.wanted.wake()
		}
		arrived := s.arrived.wait()
		s.mu.Unlock()
		select {
		case <-arrived:
		case <-ctx.Done():
			var zero T
			return zero, false
		}
	}
}

// awaitDemand returns once someone wants the next event: a consumer waits for one and none is
// queued, or a caller waits in Result (which wants them all); or once the stream has ended. A
// producer that reads its events from elsewhere calls it before each read, so it reads no faster
// than its events are consumed. It returns ctx's error if ctx ends first.
func (s *EventStream[T, R]) awaitDemand(ctx context.Context) error {
	for {
		s.mu.Lock()
		if s.ended || s.awaiting > 0 || (s.readers > 0 && s.head == len(s.queue)) {
			s.mu.Unlock()
			return nil
		}
		wanted := s.wanted.wait()
		s.mu.Unlock()
		select {
		case <-wanted:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// All ranges over the events until the stream has ended and every event has been taken.
func (s *EventStream[T, R]) All() iter.Seq[T] {
	return func(yield func(T) bool) {
		for {
			event, ok := s.Next(context.Background())
			if !ok || !yield(event) {
				return
			}
		}
	}
}

func (s *EventStream[T, R]) takeLocked() T {
	var zero T
	event := s.queue[s.head]
	s.queue[s.head] = zero // the queue no longer holds on to it
	s.head++
	if s.head == len(s.queue) {
		s.queue = s.queue[:0]
		s.head = 0
	} else if s.head >= 1024 && s.head*2 >= len(s.queue) {
		// A consumer that never quite catches up: move the rest to the front.
		rest := copy(s.queue, s.queue[s.head:])
		clear(s.queue[rest:])
		s.queue = s.queue[:rest]
		s.head = 0
	}
	if len(s.queue)-s.head <= s.highWater/2 {
		s.room.wake() // a producer in Send may be waiting for room
	}
	return event
}

func (s *EventStream[T, R]) resolveLocked(result R) {
	if s.resolved {
		return
	}
	s.resolved = true
	s.result = result
	close(s.settled)
}
