"""Adaptive coalescing: deltas that wait for a slow client merge; a client that keeps up gets all."""

from __future__ import annotations

import pi_proto as pp
from pi_proto.grpc.client import ModelClient
from pi_proto.grpc.outgoing import coalesce
from pi_proto.grpc.server import ModelServer
from pi_proto.stream.event_stream import AssistantMessageEventStream, EventStream

from .helpers import Lockstep, WatchedModel, eventually, kind, readme_context


def delta(text: str, index: int = 0, kind_: str = "text_delta") -> pp.ModelEvent:
    bodies = {"text_delta": pp.TextDeltaEvent, "thinking_delta": pp.ThinkingDeltaEvent}
    return pp.ModelEvent(**{kind_: bodies[kind_](content_index=index, delta=text)})  # type: ignore[arg-type]


def queued(*events: pp.ModelEvent) -> AssistantMessageEventStream:
    stream = AssistantMessageEventStream()
    stream.push(pp.ModelEvent(start=pp.StartEvent(header=pp.assistant_message(timestamp=1))))
    stream.push(pp.ModelEvent(text_start=pp.TextStartEvent(content_index=0)))
    stream.take()
    stream.take()
    for event in events:
        EventStream.push(stream, event)  # queued as if pushed while the client was behind, without rules
    return stream


def test_waiting_deltas_of_one_block_merge_and_the_rest_stays_queued() -> None:
    stream = queued(delta("b"), delta("c"), delta("d", index=1), delta("e"))
    merged = coalesce(delta("a"), stream)
    assert merged.text_delta == pp.TextDeltaEvent(content_index=0, delta="abc")
    assert stream.queued == 2
    assert stream.peek() == delta("d", index=1)


def test_other_events_and_other_kinds_pass_unchanged() -> None:
    end = pp.ModelEvent(text_end=pp.TextEndEvent(content_index=0))
    assert coalesce(end, queued(delta("x"))) is end
    thinking = delta("t", kind_="thinking_delta")
    assert coalesce(thinking, queued(delta("x"))) is thinking
    alone = delta("a")
    assert coalesce(alone, queued()) is alone


async def test_a_client_that_falls_behind_gets_fewer_larger_deltas_and_the_same_message() -> None:
    turn = pp.assistant_message("".join(f"{i % 10}" for i in range(60_000)), timestamp=1)
    model = WatchedModel([turn], delta_size=1)
    async with ModelServer(model) as server, ModelClient(server.target) as client:
        events = client.stream(readme_context(), coalesce_deltas=True)
        kinds = [kind(await anext(events))]
        # Fall behind: the client reads nothing more until the model has played its every event or
        # waits for room (the transport's buffers full, and its queue): deltas wait.
        stream = model.streams[0]
        await eventually(lambda: stream.done or stream._writers, "the model is ahead of the client")
        kinds += [kind(event) async for event in events]
        message = await events.result()
    assert pp.encode(message) == pp.encode(turn)
    assert kinds[:2] == ["start", "text_start"]
    assert kinds[-2:] == ["text_end", "done"]
    assert set(kinds[2:-2]) == {"text_delta"}
    assert len(kinds) - 4 < 60_000 // 4, len(kinds)  # many deltas were merged


async def test_a_client_that_keeps_up_gets_every_delta() -> None:
    turn = pp.assistant_message("x" * 30, timestamp=1)
    # Keeping up is the test's doing: the model plays each event once the client has read the one
    # before, so none ever waits behind another. (A paced model is not enough: on a busy machine, a
    # timer that comes late plays the events due meanwhile together, and they wait together.)
    model = Lockstep(turn)
    async with ModelServer(model) as server, ModelClient(server.target) as client:
        events = client.stream(readme_context(), coalesce_deltas=True)
        deltas = []
        async for event in events:
            if event.text_delta is not None:
                deltas.append(event.text_delta.delta)
            model.read.release()  # only now does the model play the next event
        message = await events.result()
    assert deltas == ["x"] * 30
    assert pp.encode(message) == pp.encode(turn)
