"""A provider-backed stream: `pi-proto serve --models` on a recorded Anthropic stream, against the
same recording read by the Anthropic SDK alone, both from one loopback replay server."""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from pathlib import Path

import anthropic

import pi_proto as pp
from tests.providers.replay import ReplayServer

from .workloads import serving

MODEL = "claude-sonnet-4-5"
CONTEXT = pp.AgentContext(messages=[pp.agent_message(pp.user_message("go", timestamp=1))])


def recording(path: Path, deltas: int) -> Path:
    """A Messages stream of one text block in `deltas` deltas, in the documented SSE format."""

    def event(name: str, data: dict[str, object]) -> str:
        return f"event: {name}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"

    usage = {"input_tokens": 10, "output_tokens": 1}
    message = {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "model": MODEL, "usage": usage}
    parts = [
        "HTTP/1.1 200 OK\ncontent-type: text/event-stream\ntransfer-encoding: chunked\n\n",
        event("message_start", {"type": "message_start", "message": message}),
        event(
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        ),
        *(
            event(
                "content_block_delta",
                {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": f"{n:07d},"}},
            )
            for n in range(deltas)
        ),
        event("content_block_stop", {"type": "content_block_stop", "index": 0}),
        event(
            "message_delta",
            {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": deltas}},
        ),
        event("message_stop", {"type": "message_stop"}),
    ]
    path.write_text("".join(parts), encoding="utf-8")
    return path


async def sdk_alone(replay: ReplayServer, path: Path) -> float:
    """Events per second the SDK reads from the recording, with nothing else in the way."""
    replay.reply(path)
    client = anthropic.AsyncAnthropic(api_key="bench", base_url=replay.base_url, max_retries=0)
    started = time.perf_counter()
    count = 0
    async with await client.messages.create(
        model=MODEL, max_tokens=1, messages=[{"role": "user", "content": "go"}], stream=True
    ) as events:
        async for _ in events:
            count += 1
    seconds = time.perf_counter() - started
    await client.close()
    return count / seconds


async def through_server(replay: ReplayServer, path: Path, target: str) -> float:
    """Events per second our client yields from our server streaming the same recording."""
    replay.reply(path)
    async with pp.ModelClient(target) as client:
        started = time.perf_counter()
        events = client.stream(CONTEXT)
        count = sum([1 async for _ in events])
        seconds = time.perf_counter() - started
        message = await events.result()
    assert message.stop_reason == pp.StopReason.STOP, message.error_message
    return count / seconds


async def measure(deltas: int, runs: int) -> tuple[float, float]:
    """(ours, the SDK alone): the best of `runs` each, in events per second."""
    with tempfile.TemporaryDirectory() as folder:
        path = recording(Path(folder) / "stream.http", deltas)
        async with ReplayServer() as replay:
            catalog = Path(folder) / "models.json"
            provider = {
                "baseUrl": replay.base_url,
                "api": "anthropic-messages",
                "apiKey": "bench",
                "models": [{"id": MODEL}],
            }
            catalog.write_text(json.dumps({"providers": {"anthropic": provider}}), encoding="utf-8")
            alone = max([await sdk_alone(replay, path) for _ in range(runs)])
            command = ["-m", "pi_proto.cli", "serve", "--port", "0", "--models", str(catalog)]
            with serving(command) as (_, target):
                ours = max([await through_server(replay, path, target) for _ in range(runs)])
    return ours, alone


def provider_stream(deltas: int = 10_000, runs: int = 3) -> tuple[float, float]:
    return asyncio.run(measure(deltas, runs))
