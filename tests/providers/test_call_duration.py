"""Every provider call's final message says how long the call took, as pi's AssistantMessageEventStream
times a response: duration_ms, from the stream's creation to its terminal event by a monotonic
clock, rounded, never negative; not for a message that has one, nor one that predates the stream.
The clock here is one the test moves, so the durations are exact."""

from __future__ import annotations

import asyncio
import dataclasses
from types import ModuleType

import pytest

import pi_proto as pp
from pi_proto.models.providers import ProviderModel
from pi_proto.models.providers.call import TimedStream
from pi_proto.models.providers.catalog import ModelConfig

from .corpus import provider_modules
from .harness import CLOCK_MS, SECRET, by_name, final_message
from .replay import ReplayServer

PROVIDERS = pytest.mark.parametrize("provider", provider_modules(), ids=lambda module: module.API)


class Clock:
    """A monotonic clock, in seconds, that stands still until the test moves it."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


async def ended_after(provider: ModuleType, case_name: str, seconds: float) -> pp.AssistantMessage:
    """The final message of the case's call, the clock moved `seconds` once the stream is made."""
    case = by_name(provider.CASES)[case_name]
    clock = Clock(1000.0)
    async with ReplayServer() as replay:
        for name in case.replies:
            replay.reply(case.recording(name), cut_after=case.cut_after)
        info = dataclasses.replace(provider.INFO, base_url=replay.base_url)
        model = ProviderModel(ModelConfig(info=info, api_key=SECRET), clock=lambda: CLOCK_MS, monotonic=clock)
        stream = model.stream(case.context, case.options)
        clock.now += seconds
        events = [event async for event in stream]
    return final_message(events)


@PROVIDERS
@pytest.mark.parametrize("case_name", ["text", "error-500", "cut-mid-stream"])
async def test_a_call_that_ends_or_fails_says_how_long_it_took(provider: ModuleType, case_name: str) -> None:
    message = await ended_after(provider, case_name, 1.234)
    assert message.duration_ms == 1234


def started(stream: TimedStream, timestamp: int = CLOCK_MS) -> None:
    stream.push(pp.ModelEvent(start=pp.StartEvent(header=pp.AssistantMessage(usage=pp.Usage(), timestamp=timestamp))))


def done(duration_ms: int | None = None) -> pp.ModelEvent:
    message = pp.assistant_message(usage=pp.Usage(), timestamp=CLOCK_MS)
    message.duration_ms = duration_ms
    return pp.ModelEvent(done=pp.DoneEvent(reason=pp.StopReason.STOP, message=message))


async def test_a_cancelled_call_is_timed_too() -> None:
    clock = Clock(5.0)
    stream = TimedStream(clock=lambda: CLOCK_MS, monotonic=clock)

    async def provider() -> None:
        started(stream)
        await asyncio.sleep(3600)  # a provider that never answers

    stream.drive(provider())
    await asyncio.sleep(0)
    clock.now = 7.5
    stream.cancel()
    message = await stream.result()
    assert message.stop_reason == pp.StopReason.ABORTED
    assert message.duration_ms == 2500


def test_a_clock_that_goes_back_makes_no_negative_duration() -> None:
    clock = Clock(5.0)
    stream = TimedStream(clock=lambda: CLOCK_MS, monotonic=clock)
    started(stream)
    clock.now = 4.0
    stream.push(done())
    assert stream.partial.duration_ms == 0


def test_a_duration_the_message_has_is_kept() -> None:
    clock = Clock(5.0)
    stream = TimedStream(clock=lambda: CLOCK_MS, monotonic=clock)
    started(stream)
    clock.now = 6.0
    stream.push(done(duration_ms=7))
    assert stream.partial.duration_ms == 7


def test_a_message_older_than_the_stream_is_not_timed() -> None:
    """Its response started elsewhere: the stream only forwards it."""
    stream = TimedStream(clock=lambda: CLOCK_MS, monotonic=Clock(5.0))
    started(stream, timestamp=CLOCK_MS - 1)
    stream.fail(pp.StopReason.ERROR, "failed")
    assert stream.partial.duration_ms is None
