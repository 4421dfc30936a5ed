"""The event stream runtime: the accumulator that applies events to the partial message and
enforces the stream rules, the partial-JSON completion of streaming tool calls, the event stream
consumers iterate, and the scheduler that plays a stream's events on time."""
