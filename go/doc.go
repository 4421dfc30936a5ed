// Package piproto is pi-proto for Go: the pi.ai.v1 message IR generated from ../proto (package
// [aiv1]), the same small event-stream runtime as the Python and TypeScript packages, and a gRPC
// client of ModelService.Stream.
//
// The runtime mirrors the others name for name: [EventStream] is a queue of events with a final
// result; [AssistantMessageEventStream] carries ModelEvents, rebuilds each event's partial message
// through the one [Accumulator] and ends at the first done or error event; [Client.Stream] starts
// one call and never fails: every failure becomes the stream's one error event, so iterating the
// stream ends and [AssistantMessageEventStream.Result] always gives a message.
//
// [aiv1]: github.com/pi-proto/pi-proto/go/gen/pi/ai/v1
package piproto
