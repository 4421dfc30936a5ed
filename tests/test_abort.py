"""A client that ends its call stops what it costs: the provider call ends, whatever the protocol,
against `pi-proto serve` as users run it (kept streams on, an HTTP port, a models.json).

The provider here answers a few events and then keeps its connection open; a test passes when the
provider sees the server close that connection. Each server waits 600 s (`--resume-unattended`)
for a client that may resume, and as long for a silent provider (`timeoutMs`): a call kept by
mistake would hold the provider past the test's own limit, so every case that must stop fails if
it does not.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import grpc
import httpx
import pytest

import pi_proto as pp

from .helpers import HANG_SECONDS, Rpc, next_event, read_events, serve_process
from .providers.hostile import Exchange, HostileServer
from .providers.replay import RECORDINGS, Recording

API, PROVIDER, MODEL = "openai-completions", "upstream", "gpt-4o-mini"
PI = Path(__file__).parent / "pi"
NODE = PI / "node_modules" / ".bin" / "node"
TOKEN = "abort-token"


def hi() -> pp.AgentContext:
    return pp.AgentContext(messages=[pp.agent_message(pp.user_message("hi", timestamp=1))])


def request(*, resumable: bool = False, background: bool = False) -> bytes:
    return pp.encode(pp.StreamRequest(context=hi(), model=MODEL, resumable=resumable, background=background))


async def answer_then_hang(exchange: Exchange) -> None:
    """The recording's first three events, then nothing more until the client closes."""
    await exchange.head()
    await exchange.body(Recording.read(RECORDINGS / API / "text.http").events[:3], end=False)
    await exchange.hang()


async def answer_plenty_then_hang(exchange: Exchange) -> None:
    """8 MB of text, more than a client that reads nothing lets the server write, then nothing."""
    events = Recording.read(RECORDINGS / API / "text.http").events
    delta = events[1].replace(b'"Hello"', b'"' + b"x" * 4000 + b'"')
    await exchange.head()
    await exchange.body([events[0], *[delta] * 2000], end=False)
    await exchange.hang()


async def hang_before_answering(exchange: Exchange) -> None:
    await exchange.hang()


@contextmanager
def served(folder: Path, base_url: str, *flags: str) -> Iterator[tuple[str, str]]:
    """`pi-proto serve` of one provider's model at `base_url`, with an HTTP port and a token;
    yields the gRPC target and the HTTP base URL."""
    catalog = folder / "models.json"
    # The provider may be silent for 600 s (timeoutMs) before the server gives up on it itself.
    model = {"id": MODEL, "timeoutMs": 600_000}
    provider = {"baseUrl": base_url, "api": API, "apiKey": "upstream-key", "models": [model]}
    catalog.write_text(json.dumps({"providers": {PROVIDER: provider}}), encoding="utf-8")
    token = folder / "token"
    token.write_text(TOKEN + "\n", encoding="utf-8")
    flags = ("--models", str(catalog), "--http-port", "0", "--token-file", str(token), *flags)
    with serve_process(*flags, "--resume-unattended", "600") as (process, target):
        assert process.stdout is not None
        yield target, "http://" + process.stdout.readline().removeprefix("http on ").strip()


@asynccontextmanager
async def grpc_rpc(target: str) -> AsyncIterator[Rpc]:
    async with grpc.aio.insecure_channel(target) as channel:
        yield Rpc(channel)


METADATA = (("authorization", f"Bearer {TOKEN}"),)


async def stopped(provider: HostileServer) -> None:
    """Wait until the server has closed its call to the provider (HANG_SECONDS at most)."""
    await asyncio.wait_for(provider.client_closed.wait(), HANG_SECONDS)


async def test_a_grpc_cancel_stops_the_provider_call(tmp_path: Path) -> None:
    async with HostileServer(answer_then_hang) as provider:
        with served(tmp_path, provider.base_url) as (target, _):
            async with grpc_rpc(target) as rpc:
                call = rpc.stream(request(), metadata=METADATA)
                assert (await next_event(call)).start is not None
                call.cancel()
                await stopped(provider)


async def test_a_client_that_resumes_still_stops_the_provider_when_its_deadline_passes(tmp_path: Path) -> None:
    async with HostileServer(answer_then_hang) as provider:
        with served(tmp_path, provider.base_url) as (target, _):
            async with grpc_rpc(target) as rpc:
                call = rpc.stream(request(resumable=True), metadata=METADATA, timeout=3)
                with pytest.raises(grpc.aio.AioRpcError) as raised:
                    await read_events(call)
                assert raised.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
                await stopped(provider)


async def test_a_client_that_resumes_but_leaves_before_the_start_event_stops_the_provider(tmp_path: Path) -> None:
    # It never had the stream's id, so it cannot resume it.
    async with HostileServer(hang_before_answering) as provider:
        with served(tmp_path, provider.base_url) as (target, _):
            async with grpc_rpc(target) as rpc:
                call = rpc.stream(request(resumable=True), metadata=METADATA)
                while not provider.requests:
                    await asyncio.sleep(0.01)
                call.cancel()
                await stopped(provider)


async def test_a_closed_sse_stream_stops_the_provider_call(tmp_path: Path) -> None:
    body = pp.to_json(pp.StreamRequest(context=hi(), model=MODEL))
    headers = {"authorization": f"Bearer {TOKEN}", "content-type": "application/json"}
    async with HostileServer(answer_then_hang) as provider:
        with served(tmp_path, provider.base_url) as (_, http):
            async with (
                httpx.AsyncClient(timeout=HANG_SECONDS) as client,
                client.stream("POST", f"{http}/v1/stream", content=body, headers=headers) as response,
            ):
                assert response.status_code == 200
                async for line in response.aiter_lines():
                    if line.startswith("data:"):
                        break  # the start event: the stream is running
            await stopped(provider)


def agent_aborts(via: str, url: str) -> list[str]:
    """pi's own Agent, aborted at its first streamed update (tests/pi/agent.mjs); the stop reasons
    of its assistant messages."""
    config: dict[str, object] = {"via": via, "url": url, "token": TOKEN, "model": MODEL, "provider": PROVIDER}
    config |= {"api": API, "prompt": "hi", "readme": "", "abort": True}
    command = [str(NODE), str(PI / "agent.mjs"), json.dumps(config)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=HANG_SECONDS, check=False, cwd=PI)
    assert done.returncode == 0, done.stderr
    messages = json.loads(done.stdout.splitlines()[-1])["messages"]
    return [message["stopReason"] for message in messages if message["role"] == "assistant"]


@pytest.mark.parametrize("via", ["pi-messages", "proxy"])
async def test_pi_s_agent_aborting_stops_the_provider_call(tmp_path: Path, via: str) -> None:
    async with HostileServer(answer_then_hang) as provider:
        with served(tmp_path, provider.base_url) as (_, http):
            assert await asyncio.to_thread(agent_aborts, via, http) == ["aborted"]
            await stopped(provider)


async def test_kept_streams_whose_clients_left_hold_their_slots_until_their_models_end(tmp_path: Path) -> None:
    async with HostileServer(answer_then_hang) as provider:
        with served(tmp_path, provider.base_url, "--max-streams", "2") as (target, _):
            async with grpc_rpc(target) as rpc:
                for _ in range(2):  # resumable: each goes on for a client that may come back
                    call = rpc.stream(request(resumable=True), metadata=METADATA)
                    assert (await next_event(call)).start is not None
                    call.cancel()
                third = rpc.stream(request(), metadata=METADATA)
                with pytest.raises(grpc.aio.AioRpcError) as raised:
                    await third.read()
            assert raised.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert len(provider.requests) == 2


async def test_clients_that_never_read_do_not_hold_their_slots_past_the_stream_timeout(tmp_path: Path) -> None:
    flags = ("--max-streams", "2", "--stream-timeout", "2")
    async with HostileServer(answer_plenty_then_hang) as provider:
        with served(tmp_path, provider.base_url, *flags) as (target, _):
            async with grpc_rpc(target) as rpc:
                stalled = [rpc.stream(request(resumable=True), metadata=METADATA) for _ in range(2)]
                while len(provider.requests) < 2:  # both models run; their clients read nothing
                    await asyncio.sleep(0.01)
                # Once the two models have run out of time, a third call is served.
                while True:
                    third = rpc.stream(request(), metadata=METADATA)
                    try:
                        assert (await next_event(third)).start is not None
                        break
                    except grpc.aio.AioRpcError as error:
                        assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, error
                        await asyncio.sleep(0.1)
                third.cancel()
                for call in stalled:
                    call.cancel()
