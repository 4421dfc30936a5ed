// Package piproto is pi-proto for Go: the pi.ai.v1 message IR generated from the repository's
// proto/ (package [aiv1]), its validation, a small event-stream runtime, [CalculateCost], and a
// gRPC client of ModelService.
//
// [Violations] and [Check] enforce the schema's rules: its protovalidate (buf.validate) rules,
// then the JSON text rules of the fields marked with the pi.ai.v1.json option. [EventStream] is
// a queue of events with a final result; [AssistantMessageEventStream] carries ModelEvents,
// rebuilds each event's partial message through an [Accumulator], which enforces the stream
// rules, and ends at the first done or error event; [Client.Stream] starts one call and never
// fails: every failure becomes the stream's one error event, so iterating the stream ends and
// [AssistantMessageEventStream.Result] always gives a message, while
// [AssistantMessageEventStream.Failure] says what went wrong in structured form; it resumes a
// call cut off after its stream id arrived (ModelService.Resume) and tells the server when the
// caller cancels a kept stream (ModelService.Cancel).
// [Client.ListModels] and [Client.GetModel] read the server's model catalog. [ReadSession],
// [EntryFromPi], [MessageFromPi], [EventFromPi] and their writers read and write pi's own JSON
// (its session files and events) byte for byte.
//
// [aiv1]: github.com/pi-proto/pi-proto/go/gen/pi/ai/v1
package piproto
