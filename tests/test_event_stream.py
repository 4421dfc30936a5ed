"""EventStream and AssistantMessageEventStream: terminal events, results, and the seed's error test."""

from __future__ import annotations

import asyncio

import pytest

import pi_proto as pp
from pi_proto.grpc.client import ModelClient
from pi_proto.grpc.server import ModelServer
from pi_proto.ir.events import terminal_message
from pi_proto.models.scripted import ScriptedModel
from pi_proto.stream.event_stream import AssistantMessageEventStream, EventStream


async def collect(stream: EventStream[pp.ModelEvent, pp.AssistantMessage]) -> list[pp.ModelEvent]:
    return [event async for event in stream]


def error_event(message: pp.AssistantMessage) -> pp.ModelEvent:
    return pp.ModelEvent(error=pp.ErrorEvent(reason=pp.StopReason.ERROR, message=message))


async def test_error_event_ends_the_stream_by_itself_and_result_is_the_same_message() -> None:
    # The seed's second focused test: no end() call; the error event alone ends iteration.
    stream = AssistantMessageEventStream()
    failed = pp.assistant_message(stop_reason=pp.StopReason.ERROR, error_message="socket reset", timestamp=1)
    event = error_event(failed)
    stream.push(event)

    seen = await collect(stream)

    assert len(seen) == 1
    assert seen[0] is event
    result = await stream.result()
    assert result is failed
    assert result.error_message == "socket reset"


async def test_done_resolves_the_result_and_later_events_are_ignored() -> None:
    stream = AssistantMessageEventStream()
    final = pp.assistant_message(timestamp=1)
    stream.push(pp.ModelEvent(start=pp.StartEvent(header=pp.assistant_message(timestamp=1))))
    stream.push(pp.ModelEvent(done=pp.DoneEvent(reason=pp.StopReason.STOP, message=final)))
    stream.push(pp.ModelEvent(text_delta=pp.TextDeltaEvent(delta="late")))
    stream.push(error_event(pp.assistant_message(stop_reason=pp.StopReason.ERROR)))

    seen = await collect(stream)

    assert [event.start is not None or event.done is not None for event in seen] == [True, True]
    assert await stream.result() is final
    assert stream.done


def test_only_terminal_events_produce_a_result() -> None:
    with pytest.raises(ValueError, match="only a done or error event"):
        terminal_message(pp.ModelEvent(text_delta=pp.TextDeltaEvent(delta="x")))
    final = pp.assistant_message(timestamp=1)
    assert terminal_message(pp.ModelEvent(done=pp.DoneEvent(reason=pp.StopReason.STOP, message=final))) is final


async def test_a_waiting_consumer_receives_events_pushed_later() -> None:
    stream: EventStream[int, str] = EventStream(lambda n: n < 0, lambda n: f"ended at {n}")
    consumer = asyncio.create_task(collect(stream))  # type: ignore[arg-type]
    await asyncio.sleep(0)
    for n in (1, 2, -3, 4):
        stream.push(n)
        await asyncio.sleep(0)
    assert await consumer == [1, 2, -3]
    assert await stream.result() == "ended at -3"


async def test_end_releases_waiting_consumers_and_can_set_the_result() -> None:
    stream: EventStream[int, str] = EventStream(lambda n: False, str)
    consumers = [asyncio.create_task(collect(stream)) for _ in range(2)]  # type: ignore[arg-type]
    await asyncio.sleep(0)
    stream.end("over")
    assert await asyncio.gather(*consumers) == [[], []]
    assert await stream.result() == "over"
    stream.push(1)
    assert await collect(stream) == []  # type: ignore[arg-type]


async def test_end_without_result_leaves_result_pending() -> None:
    stream: EventStream[int, str] = EventStream(lambda n: False, str)
    stream.end()
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(stream.result(), 0.05)


async def test_a_driven_stream_that_stops_without_terminal_ends_with_an_error_event() -> None:
    stream = AssistantMessageEventStream()

    async def produce() -> None:
        stream.push(pp.ModelEvent(start=pp.StartEvent(header=pp.assistant_message(timestamp=1))))
        stream.push(pp.ModelEvent(text_start=pp.TextStartEvent(content_index=0)))
        stream.push(pp.ModelEvent(text_delta=pp.TextDeltaEvent(content_index=0, delta="kept")))

    stream.drive(produce())
    seen = await collect(stream)
    assert seen[-1].error is not None
    result = await stream.result()
    assert (result.stop_reason, result.error_message) == (
        pp.StopReason.ERROR,
        "stream ended without a terminal event",
    )
    assert pp.text_of(result) == "kept"


async def test_a_producer_that_raises_ends_the_stream_with_its_error() -> None:
    stream = AssistantMessageEventStream()

    async def produce() -> None:
        raise RuntimeError("model crashed")

    stream.drive(produce())
    result = await stream.result()
    assert (result.stop_reason, result.error_message) == (pp.StopReason.ERROR, "RuntimeError: model crashed")


async def test_cancel_stops_the_producer_and_ends_with_aborted() -> None:
    stream = AssistantMessageEventStream()
    finished = asyncio.Event()

    async def produce() -> None:
        try:
            stream.push(pp.ModelEvent(start=pp.StartEvent(header=pp.assistant_message(timestamp=1))))
            await asyncio.sleep(60)
        finally:
            finished.set()

    stream.drive(produce())
    first = await anext(stream)
    assert first.start is not None
    stream.cancel("stop now")
    last = await anext(stream)
    assert last.error is not None
    assert last.error.reason == pp.StopReason.ABORTED
    assert (await stream.result()).error_message == "stop now"
    assert finished.is_set()


async def test_two_consumers_take_turns_as_in_pi() -> None:
    # pi's EventStream hands each event to the consumer that has waited longest.
    stream: EventStream[int, int] = EventStream(lambda n: n == 5, lambda n: n)
    taken: dict[str, list[int]] = {"a": [], "b": []}

    async def consume(name: str) -> None:
        async for number in stream:
            taken[name].append(number)

    consumers = [asyncio.create_task(consume("a")), asyncio.create_task(consume("b"))]
    await asyncio.sleep(0)  # both wait, a first
    for number in range(6):
        stream.push(number)
        await asyncio.sleep(0)
    await asyncio.gather(*consumers)
    assert taken == {"a": [0, 2, 4], "b": [1, 3, 5]}
    assert await stream.result() == 5


async def test_an_event_handed_to_a_consumer_that_is_cancelled_goes_to_the_next() -> None:
    stream: EventStream[int, int] = EventStream(lambda n: n == 1, lambda n: n)
    first = asyncio.create_task(anext(stream))
    second = asyncio.create_task(anext(stream))
    await asyncio.sleep(0)
    stream.push(0)
    first.cancel()  # cancelled after the event was handed over, before it ran
    assert await second == 0


async def test_cancel_from_another_task_ends_a_waiting_client_stream_with_aborted() -> None:
    model = ScriptedModel([pp.assistant_message("x" * 40, timestamp=1)], delta_size=1, delay=5)
    async with ModelServer(model) as server, ModelClient(server.target) as client:
        events = client.stream(pp.AgentContext(messages=[pp.agent_message(pp.user_message("hi"))]))
        waiting_for_result = asyncio.create_task(events.result())
        asyncio.get_running_loop().call_later(0.2, events.cancel)  # a stop button, from elsewhere
        seen = await collect(events)  # must not raise CancelledError
        assert pp.event_kind(seen[-1])[0] == "error"
        result = await waiting_for_result
    assert result.stop_reason == pp.StopReason.ABORTED
    assert seen[-1].error is not None
    assert seen[-1].error.reason == pp.StopReason.ABORTED
