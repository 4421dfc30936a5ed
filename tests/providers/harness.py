"""What every provider's tests share: a served model on the replay server, a call through our
gRPC server and client, an outline of the events to compare, and the cases other runtimes replay.
What a call should end with is built in expect.py; conftest.py takes the backoff out of retries.

Each provider's test module lists its `CASES`; `python -m tests.providers.corpus` turns them into
conformance client cases, so every runtime's client meets the same provider-backed streams.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pi_proto as pp
from pi_proto.grpc.client import ModelClient
from pi_proto.grpc.server import ModelServer
from pi_proto.models.providers import ProviderModel
from pi_proto.models.providers.catalog import ModelConfig
from pi_proto.transcripts.pi_json import THINKING_LEVELS

from .replay import RECORDINGS, ReplayServer

# A key that must never leave the server; a provider echoing it in an error must not leak it.
SECRET = "sk-test-9f8e7d6c5b4a3210"
CLOCK_MS = 1_764_000_000_000  # every call's start timestamp, so streams compare exactly
DURATION_MS = 0  # every call's duration_ms, by a monotonic clock that stands still (`still`)


def still() -> float:
    """A monotonic clock that never moves, so a call's duration_ms is the same at every run."""
    return 0.0


def hi() -> pp.AgentContext:
    return pp.AgentContext(messages=[pp.agent_message(pp.user_message("hi", timestamp=CLOCK_MS - 1000))])


# The tool the request tests offer: `read`, taking a path.
READ_SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
READ = pp.Tool(
    name="read",
    description="Read a file",
    parameters_json='{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}',
)


# The retries our server makes unless a call says otherwise (call.RETRIES), said: pi retries only
# when told, so a case that compares the retries themselves with pi's asks for them.
RETRYING = pp.GenerationOptions(max_retries=2)

# Another model than any case serves, whose turns a case's transcript replays.
ANOTHER_MODEL: dict[str, Any] = {"api": "openai-responses", "provider": "openai", "model": "gpt-5"}


def crowded() -> pp.AgentContext:
    """A transcript for a small context window (8000 tokens), where pi's estimate of its tokens
    decides the output limit, each character counting: a prompt and a tool, another model's turn
    (reasoning, text, a tool call) and its result, then a question with an image and a character
    beyond U+FFFF (two UTF-16 units, as JavaScript counts). No turn reports its usage."""
    turn = pp.assistant_message(
        pp.thinking("The notes are in notes.md.", signature="sig"),
        pp.text("Reading them."),
        pp.tool_call("call_1", "read", {"path": "notes.md"}),
        stop_reason=pp.StopReason.TOOL_USE,
        timestamp=CLOCK_MS - 3000,
        **ANOTHER_MODEL,
    )
    messages: list[pp.UserMessage | pp.AssistantMessage | pp.ToolResultMessage] = [
        pp.user_message("Read my notes.", timestamp=CLOCK_MS - 4000),
        turn,
        pp.tool_result_message("call_1", "read", "# Notes\n" + "- keep it short\n" * 40, timestamp=CLOCK_MS - 2000),
        pp.user_message("Summarise them \U0001f980", pp.image(b"\x89PNG", "image/png"), timestamp=CLOCK_MS - 1000),
    ]
    return pp.AgentContext(
        system_prompt="You are terse.", tools=[READ], messages=[pp.agent_message(message) for message in messages]
    )


def after_usage() -> pp.AgentContext:
    """A transcript whose last usable usage (30000 tokens) decides most of pi's estimate (for a
    window of 80000): a later answer reports more but is older than the message before it (a
    summary put in later), and a failed one's usage never counts; what follows the usage is
    estimated from its characters."""

    def answer(text: str, tokens: int, timestamp: int, stop: pp.StopReason = pp.StopReason.STOP) -> pp.AssistantMessage:
        usage = pp.Usage(input=tokens - 100, output=100, total_tokens=tokens, cost=pp.Cost())
        return pp.assistant_message(text, usage=usage, stop_reason=stop, timestamp=timestamp, **ANOTHER_MODEL)

    messages: list[pp.UserMessage | pp.AssistantMessage] = [
        pp.user_message("Read my notes.", timestamp=CLOCK_MS - 7000),
        answer("They are long.", 30_000, CLOCK_MS - 6000),
        pp.user_message("Shorter?", timestamp=CLOCK_MS - 4000),
        answer("Short.", 40_000, CLOCK_MS - 5000),  # older than the question before it
        pp.user_message("And now?", timestamp=CLOCK_MS - 3000),
        answer("Half an ans", 50_000, CLOCK_MS - 2000, pp.StopReason.ERROR),
        pp.user_message("Again.", timestamp=CLOCK_MS - 1000),
    ]
    return pp.AgentContext(messages=[pp.agent_message(message) for message in messages])


def level_map(levels: Mapping[str, str | None]) -> list[pp.ThinkingLevelMapping]:
    """A thinkingLevelMap as models.json writes it (pi's level → the provider's value, None for
    unsupported), as a Model holds it."""
    return [pp.ThinkingLevelMapping(level=THINKING_LEVELS[name], value=value) for name, value in levels.items()]


@dataclass(frozen=True)
class ProviderCase:
    """A provider answering one call: the recordings it replies with, in order, and the call."""

    name: str
    api: str
    replies: tuple[str, ...]  # recording file names under recordings/<api>/, one per request
    context: pp.AgentContext = field(default_factory=hi)
    options: pp.GenerationOptions | None = None
    cut_after: int | None = None  # the last reply drops the connection after this many events
    config: Mapping[str, Any] = field(default_factory=dict)  # other ModelConfig fields: compat, headers
    model: pp.Model | None = None  # the model served, when not the one `play` is given

    def recording(self, name: str) -> Path:
        return RECORDINGS / self.api / name


def provider_case(api: str, name: str, *replies: str, **fields: Any) -> ProviderCase:
    """The case `<api>/<name>`, replying with `<name>.http` unless other replies are given."""
    return ProviderCase(f"{api}/{name}", api, replies or (f"{name}.http",), **fields)


def output_limit_cases(api: str, info: pp.Model) -> list[ProviderCase]:
    """The API's cases where pi fits the output limit into the context window (`crowded`,
    `after_usage`), each answered with its `text` recording."""
    return [
        provider_case(
            api,
            "output-limit-fitted",
            "text.http",
            model=dataclasses.replace(info, context_window=8_000),
            context=crowded(),
        ),
        provider_case(
            api,
            "output-limit-after-usage",
            "text.http",
            model=dataclasses.replace(info, context_window=80_000),
            context=after_usage(),
        ),
    ]


def by_name(cases: list[ProviderCase]) -> dict[str, ProviderCase]:
    """The cases by their name without the API."""
    return {case.name.split("/", 1)[1]: case for case in cases}


def served_model(info: pp.Model, **config: object) -> ProviderModel:
    """`info` served with the test key (unless `api_key` is given), pinned clocks, and any other
    ModelConfig fields."""
    fields: dict[str, Any] = {"api_key": SECRET, **config}
    return ProviderModel(ModelConfig(info=info, **fields), clock=lambda: CLOCK_MS, monotonic=still)


async def call_through_server(
    model: ProviderModel, context: pp.AgentContext, options: pp.GenerationOptions | None = None
) -> list[pp.ModelEvent]:
    """One call to `model` through a ModelServer and our client: every event the client yields."""
    async with ModelServer(model) as server, ModelClient(server.target) as client:
        return [event async for event in client.stream(context, options=options)]


async def play(case: ProviderCase, info: pp.Model) -> tuple[list[pp.ModelEvent], ReplayServer]:
    """Run `case` on a fresh replay server, serving `info` (or the case's own model) with the
    case's ModelConfig fields; the model's `base_url` is replaced by the server's."""
    async with ReplayServer() as replay:
        for index, name in enumerate(case.replies):
            last = index == len(case.replies) - 1
            replay.reply(case.recording(name), cut_after=case.cut_after if last else None)
        info = dataclasses.replace(info if case.model is None else case.model, base_url=replay.base_url)
        events = await call_through_server(served_model(info, **case.config), case.context, case.options)
    return events, replay


async def run(case: ProviderCase, info: pp.Model) -> tuple[list[pp.ModelEvent], pp.AssistantMessage]:
    """`play`, for the events and the final message; the test key must not be in them."""
    events, _ = await play(case, info)
    assert not leaks(events)
    return events, final_message(events)


async def cancel_while_streaming(
    info: pp.Model, recording: Path, *, provider_events: int, client_events: int
) -> tuple[list[pp.ModelEvent], bool]:
    """Cancel a call once the client has `client_events` events, while the provider, having sent
    `provider_events` events, still holds the stream open; returns the events the client yields
    and whether the provider saw its connection close."""
    async with ReplayServer() as replay:
        replay.reply(recording, hang_after=provider_events)
        info = dataclasses.replace(info, base_url=replay.base_url)
        async with ModelServer(served_model(info)) as server, ModelClient(server.target) as client:
            stream = client.stream(hi())
            events = []
            async for event in stream:
                events.append(event)
                if len(events) == client_events:
                    stream.cancel()
        try:  # the bound only guards against a hang: the close comes, or it never does
            await asyncio.wait_for(replay.client_closed.wait(), 60)
        except TimeoutError:
            return events, False
    return events, True


def final_message(events: list[pp.ModelEvent]) -> pp.AssistantMessage:
    """The message the terminal event carries; fails when the last event is not terminal."""
    terminal = events[-1].done or events[-1].error
    assert terminal is not None, "the last event is not terminal"
    assert terminal.message is not None
    return terminal.message


def outline(events: list[pp.ModelEvent]) -> list[str]:
    """The events in a line each: kind, content index and payload, and usage where it changed."""
    return [_line(event) for event in events]


def _line(event: pp.ModelEvent) -> str:
    kind, body = next((name, value) for name, value in event.to_dict().items() if name not in ("partial", "usage"))
    if kind in ("done", "error"):
        line = f"{kind} {body['reason'].removeprefix('STOP_REASON_')}"
    else:
        parts = [kind, str(body.pop("contentIndex", 0))] if kind != "start" else [kind]
        parts += [f"{key}={value!r}" for key, value in body.items() if kind != "start"]
        line = " ".join(parts)
    if event.usage is not None:
        usage = event.usage
        line += f" usage={usage.input}/{usage.output}/{usage.cache_read}/{usage.cache_write}"
    return line


def leaks(events: list[pp.ModelEvent]) -> bool:
    """Whether the test key appears anywhere in the events."""
    return any(SECRET.encode() in bytes(event) for event in events)
