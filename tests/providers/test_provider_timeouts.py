"""Provider calls have timeouts of their own: a connect timeout, and an idle timeout for a provider
that stops sending (before its headers, or mid-stream); a model's `timeoutMs` in models.json sets
them, and either ends the stream in one `error` event naming the provider and the timeout."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import socket
from collections.abc import Iterator
from typing import Any

import pytest

from pi_proto.models.providers import ProviderModel
from pi_proto.models.providers.call import Call
from pi_proto.models.providers.catalog import ModelConfig
from pi_proto.models.providers.http import CONNECT_TIMEOUT_SECONDS, IDLE_TIMEOUT_SECONDS, http_client, timeouts
from pi_proto.stream.event_stream import AssistantMessageEventStream

from .corpus import provider_modules
from .harness import CLOCK_MS, SECRET, hi, still
from .hostile import Answer, Exchange, HostileServer
from .replay import Recording

MODULES = {module.API: module for module in provider_modules()}
APIS = pytest.mark.parametrize("api", sorted(MODULES))


def served(api: str, base_url: str, **config: Any) -> ProviderModel:
    info = dataclasses.replace(MODULES[api].INFO, base_url=base_url)
    return ProviderModel(ModelConfig(info=info, api_key=SECRET, **config), clock=lambda: CLOCK_MS, monotonic=still)


async def error_of(model: ProviderModel) -> str:
    events = [event async for event in model.stream(hi())]
    assert events[0].start is not None
    assert [event.error is not None or event.done is not None for event in events].count(True) == 1
    error = events[-1].error
    assert error is not None, events[-1]
    assert error.message is not None
    assert error.message.error_message is not None
    return error.message.error_message


def text_events(api: str) -> list[bytes]:
    return Recording.read(MODULES[api].BY_NAME["text"].recording("text.http")).events


def silent(api: str, when: str) -> Answer:
    """A provider that goes silent: before its headers, after them, or after three events."""

    async def answer(exchange: Exchange) -> None:
        if when != "before-headers":
            await exchange.head()
            await exchange.body(text_events(api)[: 3 if when == "mid-stream" else 0], end=False)
        await exchange.hang()

    return answer


@APIS
@pytest.mark.parametrize("when", ["before-headers", "after-headers", "mid-stream"])
@pytest.mark.usefixtures("patient_connect")
async def test_a_silent_provider_ends_at_the_idle_timeout(api: str, when: str) -> None:
    async with HostileServer(silent(api, when)) as provider:
        message = await error_of(served(api, provider.base_url, timeout_ms=300))
    assert message == (
        f"the provider {MODULES[api].INFO.provider!r} sent nothing for 0.3 s "
        "(the idle timeout; timeoutMs in models.json sets it)"
    )


@contextlib.contextmanager
def unanswered_port() -> Iterator[int]:
    """A port whose connections never complete: its listen queue is full and nobody accepts."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(0)
    port = server.getsockname()[1]
    fillers = []
    for _ in range(4):
        filler = socket.socket()
        filler.setblocking(False)
        with contextlib.suppress(BlockingIOError):
            filler.connect(("127.0.0.1", port))
        fillers.append(filler)
    try:
        yield port
    finally:
        for filler in fillers:
            filler.close()
        server.close()


@APIS
async def test_a_provider_that_takes_no_connection_ends_at_the_connect_timeout(api: str) -> None:
    with unanswered_port() as port:
        message = await error_of(served(api, f"http://127.0.0.1:{port}", timeout_ms=300))
    assert (
        message == f"cannot connect to the provider {MODULES[api].INFO.provider!r} within 0.3 s (the connect timeout)"
    )


@APIS
async def test_a_provider_slower_than_the_idle_timeout_but_never_silent_that_long_streams(api: str) -> None:
    # The stream takes 65 pauses of 50 ms, over 3.25 s in all whatever the machine (a pause is at
    # least that long), longer than the idle timeout of 3 s, which each piece's bytes renew. Only a
    # machine that stalls the test for nearly the whole timeout could make a pause look like silence
    # (against 1 s, a loaded machine did, once; with pauses of 0.1 s against 0.3 s, 0.2 s did).
    body = b"".join(text_events(api))
    size = -(-len(body) // 65)

    async def answer(exchange: Exchange) -> None:
        await exchange.head()
        for start in range(0, len(body), size):
            await exchange.body([body[start : start + size]], end=False)
            await asyncio.sleep(0.05)
        await exchange.body([])

    async with HostileServer(answer) as provider:
        streamed = [event async for event in served(api, provider.base_url, timeout_ms=3000).stream(hi())]
    assert streamed[-1].done is not None, streamed[-1]


def test_the_default_timeouts_and_timeout_ms() -> None:
    info = MODULES["anthropic-messages"].INFO
    assert (CONNECT_TIMEOUT_SECONDS, IDLE_TIMEOUT_SECONDS) == (10.0, 120.0)
    assert timeouts(ModelConfig(info=info, api_key="k")) == (10.0, 120.0)
    assert timeouts(ModelConfig(info=info, api_key="k", timeout_ms=300_000)) == (10.0, 300.0)
    assert timeouts(ModelConfig(info=info, api_key="k", timeout_ms=2_500)) == (2.5, 2.5)


async def test_the_client_the_sdks_get_has_the_timeouts() -> None:
    config = ModelConfig(info=MODULES["openai-completions"].INFO, api_key="k", timeout_ms=4_000)
    async with http_client(Call(config, hi(), None, AssistantMessageEventStream())) as client:
        assert (client.timeout.connect, client.timeout.read) == (4.0, 4.0)
