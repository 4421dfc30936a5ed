"""Helpers for the service tests: contexts, drained streams, scripted servers, raw calls."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import betterproto2
import grpc
from grpc_health.v1 import health_pb2
from grpc_reflection.v1alpha import reflection_pb2

import pi_proto as pp
from pi_proto.grpc.methods import CANCEL_METHOD, RESUME_METHOD, STREAM_METHOD
from pi_proto.grpc.server import ModelServer
from pi_proto.ir.events import events_of, is_terminal
from pi_proto.models.scripted import ScriptedModel
from pi_proto.models.seed import README_REQUEST
from pi_proto.stream.event_stream import AssistantMessageEventStream
from pi_proto.transcripts.pi_json import assistant_to_pi


def readme_context() -> pp.AgentContext:
    return pp.AgentContext(messages=[pp.agent_message(pp.user_message(README_REQUEST, timestamp=1))])


def kind(event: pp.ModelEvent) -> str:
    return betterproto2.which_one_of(event, "event")[0]


async def drain(events: AssistantMessageEventStream) -> tuple[list[pp.ModelEvent], pp.AssistantMessage]:
    seen = [event async for event in events]
    return seen, await events.result()


class RecordingModel:
    """Plays one message and records the server-side partial after every event, and its streams.

    With `hold_after`, each stream plays that many events, then waits until `release` is set (or
    it is cancelled): a stream provably still in flight, however slow the machine, where a paced
    one could have run to its end meanwhile."""

    info = pp.Model(id="recording", provider="tests")

    def __init__(self, message: pp.AssistantMessage, delay: float = 0.0, hold_after: int | None = None) -> None:
        self.message = message
        self.delay = delay
        self.hold_after = hold_after
        self.release = asyncio.Event()
        self.partials: list[bytes] = []
        self.streams: list[AssistantMessageEventStream] = []
        self.producers: list[asyncio.Task[None]] = []

    def stream(
        self, context: pp.AgentContext, options: pp.GenerationOptions | None = None
    ) -> AssistantMessageEventStream:
        events = AssistantMessageEventStream()
        self.streams.append(events)

        message = copy.deepcopy(self.message)  # each stream its own, as ScriptedModel's are

        async def produce() -> None:
            self.producers.append(asyncio.current_task())  # type: ignore[arg-type]
            for number, event in enumerate(events_of(message, delta_size=2)):
                if number == self.hold_after:
                    await self.release.wait()
                await asyncio.sleep(self.delay)
                events.push(event)
                self.partials.append(pp.encode(events.partial))

        events.drive(produce())
        return events


class Lockstep:
    """A model that plays each event of `message` only once the test has read the one before
    (`read.release()` for each event it reads): a client that keeps up, by construction, however
    slow the machine; and at any event the test reads, the next is not played yet."""

    info = pp.Model(id="lockstep", provider="tests")

    def __init__(self, message: pp.AssistantMessage, delta_size: int = 1) -> None:
        self.message = message
        self.delta_size = delta_size
        self.read = asyncio.Semaphore(0)

    def stream(
        self, context: pp.AgentContext, options: pp.GenerationOptions | None = None
    ) -> AssistantMessageEventStream:
        events = AssistantMessageEventStream()
        message = copy.deepcopy(self.message)  # each stream its own, as ScriptedModel's are

        async def produce() -> None:
            for event in events_of(message, self.delta_size):
                events.push(event)
                if not is_terminal(event):
                    await self.read.acquire()

        events.drive(produce())
        return events


README_TURN = ScriptedModel.readme().turns[0]  # the README trip's first turn: text, then a tool call


# How long a test waits for what must happen before it says what it was waiting for: a guard
# against a hang, never a measure of speed, under pytest's own limit of 300 s so that the failure
# names what did not happen.
HANG_SECONDS = 240.0


async def eventually(condition: Callable[[], object], what: str) -> None:
    """Wait until `condition()` holds, looking every 10 ms, for up to HANG_SECONDS."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + HANG_SECONDS
    while not condition():
        assert loop.time() < deadline, f"{what}: still not so after {HANG_SECONDS:g} s"
        await asyncio.sleep(0.01)


def endless_script(folder: Path) -> Path:
    """A script whose one turn is 10,000 characters: served with `--delta-size 1` and a `--delay` of
    50 ms or more, a stream of it runs for over eight minutes, so it is still in flight whenever a
    test stops it, however slow the machine (a paced README trip may have ended meanwhile)."""
    script = folder / "endless.json"
    turn = pp.assistant_message("x" * 10_000, timestamp=1)
    script.write_text(json.dumps([assistant_to_pi(turn)]), encoding="utf-8")
    return script


def held_when_timed_out(server: ModelServer) -> list[bool]:
    """Whether each call whose time runs out still held its slot then (its handler still ran),
    in the order their times ran out."""
    held: list[bool] = []
    time_out = server._time_out

    def watched(events: AssistantMessageEventStream, handler: asyncio.Task[Any] | None, info: pp.Model) -> None:
        held.append(handler is not None and not handler.done())
        time_out(events, handler, info)

    server._time_out = watched  # type: ignore[method-assign]
    return held


class WatchedModel(ScriptedModel):
    """A scripted model that keeps the streams it serves, to look at the server side."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.streams: list[AssistantMessageEventStream] = []

    def stream(
        self, context: pp.AgentContext, options: pp.GenerationOptions | None = None
    ) -> AssistantMessageEventStream:
        events = super().stream(context, options)
        self.streams.append(events)
        return events


async def raw_call(target: str, request: bytes, metadata: tuple[tuple[str, str], ...] = ()) -> list[bytes]:
    """Call Stream with raw request bytes and return the raw messages of a call that ends with OK."""
    async with grpc.aio.insecure_channel(target) as channel:
        stream: grpc.aio.UnaryStreamMultiCallable[bytes, bytes] = channel.unary_stream(STREAM_METHOD)
        return [message async for message in stream(request, metadata=metadata)]


async def list_services(target: str, version: str, metadata: tuple[tuple[str, str], ...]) -> list[str]:
    """The services gRPC reflection `version` ("v1" or "v1alpha") lists; v1 has v1alpha's messages."""
    async with grpc.aio.insecure_channel(target) as channel:
        info = channel.stream_stream(
            f"/grpc.reflection.{version}.ServerReflection/ServerReflectionInfo",
            request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
            response_deserializer=reflection_pb2.ServerReflectionResponse.FromString,
        )
        call = info(iter([reflection_pb2.ServerReflectionRequest(list_services="*")]), metadata=metadata)
        replies = [reply async for reply in call]
    return [service.name for reply in replies for service in reply.list_services_response.service]


async def raw_status(target: str, request: bytes, metadata: tuple[tuple[str, str], ...] = ()) -> grpc.aio.AioRpcError:
    """Call Stream with raw request bytes and return the status error it must end with."""
    async with grpc.aio.insecure_channel(target) as channel:
        stream: grpc.aio.UnaryStreamMultiCallable[bytes, bytes] = channel.unary_stream(STREAM_METHOD)
        try:
            async for _ in stream(request, metadata=metadata):
                pass
        except grpc.aio.AioRpcError as error:
            return error
    raise AssertionError("the call ended with OK")


async def health_status(target: str, service: str = "") -> int:
    """The serving status the standard health service reports for `service`."""
    async with grpc.aio.insecure_channel(target) as channel:
        check = channel.unary_unary(
            "/grpc.health.v1.Health/Check",
            request_serializer=health_pb2.HealthCheckRequest.SerializeToString,
            response_deserializer=health_pb2.HealthCheckResponse.FromString,
        )
        reply: health_pb2.HealthCheckResponse = await check(health_pb2.HealthCheckRequest(service=service))
        return reply.status


# A job started in the background inherits SIGINT (and SIGQUIT) ignored, and a program that
# starts with a signal ignored keeps ignoring it: Python then installs no KeyboardInterrupt
# handler, and a test's SIGINT never reaches the program it tests. This runs before the program
# and resets SIGINT and SIGTERM to their defaults, which exec keeps. A command of its own rather
# than a preexec_fn: no Python runs in a child forked from this process (see conftest.py).
_DEFAULT_SIGNALS = (
    "import os, signal, sys\n"
    "for signum in (signal.SIGINT, signal.SIGTERM):\n"
    "    signal.signal(signum, signal.SIG_DFL)\n"
    "os.execv(sys.argv[1], sys.argv[1:])\n"
)


def with_default_signals(command: list[str]) -> list[str]:
    """`command`, run with SIGINT and SIGTERM at their default disposition, whatever this process
    inherited (the first word must be a path, as sys.executable is)."""
    return [sys.executable, "-c", _DEFAULT_SIGNALS, *command]


@contextlib.contextmanager
def serve_process(*flags: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """`pi-proto serve --port 0 FLAGS` as a process: yields it and the target from its first line."""
    command = [sys.executable, "-m", "pi_proto.cli", "serve", "--port", "0", *flags]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("listening on "), f"{line!r}; stderr: {process.stderr.read() if process.stderr else ''}"
        yield process, line.removeprefix("listening on ").strip()
    finally:
        process.kill()
        process.communicate()


@contextlib.contextmanager
def view_process(file: Path) -> Iterator[tuple[subprocess.Popen[str], int]]:
    """`pi-proto view FILE` as a process: yields it and its port."""
    command = [sys.executable, "-m", "pi_proto.cli", "view", str(file)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert " at http://127.0.0.1:" in line, line
        yield process, int(line.rsplit(":", 1)[1].removesuffix("/#view\n"))
    finally:
        process.terminate()
        process.communicate(timeout=60)


class Rpc:
    """ModelService's streaming and cancel methods on a channel, bytes in and out."""

    def __init__(self, channel: grpc.aio.Channel) -> None:
        self.stream: grpc.aio.UnaryStreamMultiCallable[bytes, bytes] = channel.unary_stream(STREAM_METHOD)
        self.resume: grpc.aio.UnaryStreamMultiCallable[bytes, bytes] = channel.unary_stream(RESUME_METHOD)
        self.cancel: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes] = channel.unary_unary(CANCEL_METHOD)


async def read_events(call: grpc.aio.UnaryStreamCall[bytes, bytes]) -> list[pp.ModelEvent]:
    """The rest of a call's events, read one by one (a call read() once cannot be iterated)."""
    events = []
    while isinstance(data := await call.read(), bytes):
        events.append(pp.decode(pp.ModelEvent, data))
    return events


def stream_id_of(event: pp.ModelEvent) -> str:
    """The stream id of a start event."""
    assert event.start is not None
    return event.start.stream_id


def terminal_of(event: pp.ModelEvent) -> pp.DoneEvent | pp.ErrorEvent:
    """The body of a terminal event."""
    body = event.done or event.error
    assert body is not None
    return body


async def next_event(call: grpc.aio.UnaryStreamCall[bytes, bytes]) -> pp.ModelEvent:
    """The call's next event; the call must not have ended."""
    data = await call.read()
    assert isinstance(data, bytes), "the call ended"
    return pp.decode(pp.ModelEvent, data)
