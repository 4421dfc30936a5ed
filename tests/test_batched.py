"""StreamBatched: several events per message, read as if each had come alone, nothing lost before
a bad one, and Stream for servers without it."""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator

import grpc
import pytest

import pi_proto as pp
from pi_proto._gen.pb2.pi.ai.v1.service_pb2 import StreamBatchedView
from pi_proto.grpc.client import _split_batch
from pi_proto.grpc.methods import BATCHED_METHOD, SERVICE
from pi_proto.grpc.outgoing import wire_event

from .helpers import readme_context

START = pp.ModelEvent(start=pp.StartEvent(header=pp.assistant_message(timestamp=1)))
OPEN = pp.ModelEvent(text_start=pp.TextStartEvent())


def delta(text: str) -> pp.ModelEvent:
    return pp.ModelEvent(text_delta=pp.TextDeltaEvent(delta=text))


def batch(*events: bytes) -> bytes:
    return StreamBatchedView(events=events).SerializeToString()


class RawServer:
    """A ModelService that answers StreamBatched (unless `batched` is False) with fixed messages."""

    def __init__(self, messages: list[bytes], *, batched: bool = True) -> None:
        self.messages = messages
        self.calls: list[str] = []
        self.server = grpc.aio.server()
        methods: dict[str, grpc.RpcMethodHandler[bytes, bytes]] = {
            "Stream": grpc.unary_stream_rpc_method_handler(self._stream)
        }
        if batched:
            methods["StreamBatched"] = grpc.unary_stream_rpc_method_handler(self._batched)
        self.server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, methods),))
        self.target = f"127.0.0.1:{self.server.add_insecure_port('127.0.0.1:0')}"

    async def _batched(self, request: bytes, context: object) -> AsyncIterator[bytes]:
        self.calls.append("StreamBatched")
        for message in self.messages:
            yield message

    async def _stream(self, request: bytes, context: object) -> AsyncIterator[bytes]:
        self.calls.append("Stream")
        for event in (START, OPEN, delta("a"), delta("b")):
            yield wire_event(event)

    async def __aenter__(self) -> RawServer:
        await self.server.start()
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.server.stop(0)


async def test_each_event_of_a_batch_carries_the_partial_as_of_that_event() -> None:
    events = [START, OPEN, delta("a"), delta("b"), delta("c")]
    async with RawServer([batch(*map(wire_event, events))]) as server, pp.ModelClient(server.target) as client:
        texts = [
            pp.text_of(event.partial) async for event in client.stream(readme_context()) if event.partial is not None
        ]
    assert texts[:5] == ["", "", "a", "ab", "abc"]


async def test_the_events_in_front_of_a_bad_one_are_kept_and_the_bad_one_fails_at_its_index() -> None:
    good = [wire_event(event) for event in (START, OPEN, delta("a"))]
    async with RawServer([batch(*good, b"\xff\xff")]) as server, pp.ModelClient(server.target) as client:
        stream = client.stream(readme_context())
        _ = [event async for event in stream]
    assert pp.text_of(await stream.result()) == "a"
    assert stream.failure is not None
    assert (stream.failure.rule_id, stream.failure.event_index) == ("event-decode", 3)


async def test_a_batch_cut_mid_field_fails_at_the_next_events_index() -> None:
    good = batch(*(wire_event(event) for event in (START, OPEN)))
    async with RawServer([good, good[:3]]) as server, pp.ModelClient(server.target) as client:
        stream = client.stream(readme_context())
        _ = [event async for event in stream]
    assert stream.failure is not None
    assert (stream.failure.rule_id, stream.failure.event_index) == ("event-decode", 2)


async def test_a_server_without_stream_batched_is_read_through_stream() -> None:
    async with RawServer([], batched=False) as server, pp.ModelClient(server.target) as client:
        stream = client.stream(readme_context())
        seen = [event async for event in stream]
    assert server.calls == ["Stream"]
    assert [pp.event_kind(event)[0] for event in seen] == ["start", "text_start", "text_delta", "text_delta", "error"]
    assert stream.failure is not None
    assert stream.failure.rule_id == "terminal-missing"


async def test_batched_false_calls_stream() -> None:
    async with RawServer([]) as server, pp.ModelClient(server.target, batched=False) as client:
        _ = [event async for event in client.stream(readme_context())]
    assert server.calls == ["Stream"]


@pytest.mark.parametrize(
    ("data", "events", "parses"),
    [
        (b"\x0a\x01x\x10\x05\x0a\x01y", [b"x", b"y"], True),  # a varint field 2 between events is skipped
        (b"\x0a\x01x\x1d\x00\x00\x00\x00", [b"x"], True),  # so is a fixed32 field 3
        (b"\x0a\x01x\x0a\x05ab", [], False),  # an event cut short: the whole batch is refused
        (b"\x02\x00", [], False),  # field 0
        (b"\x0a\x01x\x0b", [], False),  # a group that never ends
        (b"\x0a\x80", [], False),  # a length cut short
    ],
)
def test_a_batch_is_read_through_the_view_whole_or_not_at_all(data: bytes, events: list[bytes], parses: bool) -> None:
    found: deque[bytes] = deque()
    problem = _split_batch(data, found)
    assert list(found) == events
    assert (problem is None) == parses
    if problem is not None:
        assert "not a StreamBatchedResponse" in str(problem)


async def batched_messages(server: pp.ModelServer) -> list[deque[bytes]]:
    """The messages of one StreamBatched call to `server`, each split into its events."""
    request = pp.encode(pp.StreamRequest(context=readme_context()))
    async with grpc.aio.insecure_channel(server.target) as channel:
        call: grpc.aio.UnaryStreamMultiCallable[bytes, bytes] = channel.unary_stream(BATCHED_METHOD)
        messages = [message async for message in call(request)]
    split: list[deque[bytes]] = []
    for message in messages:
        events: deque[bytes] = deque()
        assert _split_batch(message, events) is None
        split.append(events)
    return split


async def test_the_server_sends_the_events_waiting_together_in_one_message() -> None:
    turn = pp.assistant_message("x" * 2_000, timestamp=1)  # 2,000 one-character deltas, produced at once
    async with pp.ModelServer(pp.ScriptedModel([turn], delta_size=1)) as server:
        messages = await batched_messages(server)
    events = [event for message in messages for event in message]
    assert len(events) == 2_004
    assert len(messages) < len(events) / 10
    assert b"".join(events) == b"".join(wire_event(event) for event in pp.events_of(turn, delta_size=1))


async def test_a_flush_window_lets_a_paced_stream_share_messages() -> None:
    turn = pp.assistant_message("x" * 40, timestamp=1)
    paced = pp.ScriptedModel([turn], delta_size=1, delay=0.002)
    async with pp.ModelServer(paced, flush_window=0.05) as server:
        shared = await batched_messages(server)
    assert sum(map(len, shared)) == 44
    # A message waits 50 ms after its first event, and events come every 2 ms: each holds more
    # than one, but a last one that holds only the terminal event (which is never held back).
    # Without the window, how many share depends on how busy the machine is.
    assert all(len(events) > 1 for events in shared[:-1]), [len(events) for events in shared]


@pytest.mark.parametrize("window", [-0.001, float("nan"), float("inf")])
def test_a_flush_window_must_be_a_duration(window: float) -> None:
    with pytest.raises(ValueError, match="flush_window must be 0 or more seconds"):
        pp.ModelServer(pp.ScriptedModel.readme(), flush_window=window)
