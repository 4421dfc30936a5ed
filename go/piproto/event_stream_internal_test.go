package piproto

import (
	"context"
	"testing"
	"time"
)

// waitingForRoom reports whether a producer waits in Send.
func (s *EventStream[T, R]) waitingForRoom() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.room.channel != nil
}

func TestAFullQueueLetsItsProducerGoOnceItHasDrainedToHalf(t *testing.T) {
	timer := time.AfterFunc(time.Minute, func() { panic(t.Name() + " ran for more than a minute") })
	defer timer.Stop()
	stream := NewEventStream(func(n int) bool { return n < 0 }, func(n int) int { return n }, 4)
	ctx := context.Background()
	for n := range 4 {
		stream.Push(n)
	}
	sent := make(chan struct{})
	go func() {
		_ = stream.Send(ctx, 4)
		close(sent)
	}()
	for !stream.waitingForRoom() {
		time.Sleep(time.Millisecond)
	}

	if _, ok := stream.Next(ctx); !ok {
		t.Fatal("no event")
	}
	if !stream.waitingForRoom() || stream.Queued() != 3 {
		t.Fatal("taking one event of four woke the producer")
	}
	if _, ok := stream.Next(ctx); !ok {
		t.Fatal("no event")
	}
	<-sent // at two queued events of four the producer goes on
	if stream.Queued() != 3 {
		t.Fatalf("queued %d", stream.Queued())
	}
}
