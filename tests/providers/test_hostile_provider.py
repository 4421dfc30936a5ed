"""A provider that misbehaves, met by the real SDKs over loopback: whatever it sends, the stream
ends in one `error` event that names the provider, the server holds a bounded amount of it, and
no part of the model's key reaches the client.

Memory is measured with tracemalloc's peak while a call runs (the hostile server's own pieces are
64 KiB at most), against a stream limit of LIMIT bytes.
"""

from __future__ import annotations

import dataclasses
import json
import tracemalloc
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anthropic.types
import openai.types.chat
import pytest

import pi_proto as pp
from pi_proto.models.providers import ProviderModel, anthropic_messages, http, openai_completions
from pi_proto.models.providers.call import MAX_ERROR_MESSAGE, Call
from pi_proto.models.providers.catalog import ModelConfig
from pi_proto.stream.accumulator import Accumulator
from pi_proto.stream.event_stream import AssistantMessageEventStream

from .corpus import provider_modules
from .harness import CLOCK_MS, SECRET, hi, still
from .hostile import PIECE, Exchange, HostileServer, gzipped, repeat, sse
from .replay import Recording, event_stream_frame

LIMIT = 1024 * 1024  # the stream's size limit in these tests
MODULES = {module.API: module for module in provider_modules()}
# The APIs that stream another API's events: Azure OpenAI's Responses, Vertex AI's Gemini, and
# Mistral's chat completions, in OpenAI's shape.
STREAMS_AS = {
    "azure-openai-responses": "openai-responses",
    "google-vertex": "google-generative-ai",
    "mistral-conversations": "openai-completions",
}
APIS = pytest.mark.parametrize("api", sorted(MODULES))


def model(api: str, base_url: str, *, limit: int = LIMIT, **config: Any) -> ProviderModel:
    info = dataclasses.replace(MODULES[api].INFO, base_url=base_url)
    return ProviderModel(
        ModelConfig(info=info, api_key=SECRET, **config),
        clock=lambda: CLOCK_MS,
        monotonic=still,
        max_message_bytes=limit,
    )


async def call(api: str, server: HostileServer, **config: Any) -> list[pp.ModelEvent]:
    """One call to the provider `server` plays, as the server-side stream yields it."""
    return [event async for event in model(api, server.base_url, **config).stream(hi())]


async def peak_of_call(api: str, server: HostileServer, **config: Any) -> tuple[list[pp.ModelEvent], int]:
    """The call's events and the most memory Python held while it ran, in bytes (the SDK is
    imported before, when the model is made)."""
    served = model(api, server.base_url, **config)
    tracemalloc.start()
    try:
        events = [event async for event in served.stream(hi())]
        return events, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def the_error(events: list[pp.ModelEvent], api: str) -> str:
    """The error message of a stream that is `start`, anything but a terminal, then one `error`
    carrying the model's names."""
    terminals = [index for index, event in enumerate(events) if event.done is not None or event.error is not None]
    assert events[0].start is not None
    assert terminals == [len(events) - 1]
    error = events[-1].error
    assert error is not None, events[-1]
    assert error.message is not None
    info = MODULES[api].INFO
    assert (error.message.api, error.message.provider, error.message.model) == (info.api, info.provider, info.id)
    assert error.message.error_message is not None
    assert SECRET not in error.message.error_message
    return error.message.error_message


def names_the_provider(message: str, api: str) -> bool:
    return f"provider {MODULES[api].INFO.provider!r}" in message


# --- a key across the cut of an error text -----------------------------------------------------------


def key_at(position: int, total: int) -> str:
    """A page of `total` characters with the key starting at `position`."""
    page = "x" * position + SECRET
    return page + "x" * (total - len(page))


@APIS
async def test_a_key_across_the_cut_of_a_non_json_error_body_is_scrubbed_before_the_cut(api: str) -> None:
    page = "<html>" + key_at(1000 - 6 - 6, 3000) + "</html>"  # six of its characters before the cut

    async def answer(exchange: Exchange) -> None:
        await exchange.whole("401 Unauthorized", "text/html", page.encode())

    async with HostileServer(answer) as server:
        message = the_error(await call(api, server), api)
    assert SECRET[:4] not in message
    assert "***" in message
    assert "<html>xxxx" in message
    assert len(message) <= MAX_ERROR_MESSAGE


async def test_a_key_across_the_cut_of_openrouters_raw_error_is_scrubbed_before_the_cut() -> None:
    body = {"error": {"message": "Provider returned error", "code": 400, "metadata": {"raw": key_at(994, 2000)}}}

    async def answer(exchange: Exchange) -> None:
        await exchange.whole("400 Bad Request", "application/json", json.dumps(body).encode())

    async with HostileServer(answer) as server:
        message = the_error(await call("openai-completions", server), "openai-completions")
    assert message.startswith("the provider answered 400: Provider returned error\nxxxx")
    assert SECRET[:4] not in message
    assert "***" in message


@APIS
async def test_a_huge_error_page_is_read_in_part_and_quoted_in_part(api: str) -> None:
    async def answer(exchange: Exchange) -> None:
        await exchange.head("401 Unauthorized", "text/html")
        await exchange.body(repeat(b"<p>no</p>", 20 * 1024 * 1024))

    async with HostileServer(answer) as server:
        events, peak = await peak_of_call(api, server)
    message = the_error(events, api)
    assert "401" in message
    assert "<p>no</p>" in message
    assert len(message) <= MAX_ERROR_MESSAGE
    assert peak < 8 * 1024 * 1024


# --- what the server buffers --------------------------------------------------------------------------


@APIS
async def test_an_event_that_never_ends_is_cut_at_the_size_limit(api: str) -> None:
    async def answer(exchange: Exchange) -> None:
        await exchange.head()
        await exchange.body([b"data: "], end=False)
        await exchange.body(repeat(b"x", 32 * LIMIT))

    async with HostileServer(answer) as server:
        events, peak = await peak_of_call(api, server)
    message = the_error(events, api)
    assert names_the_provider(message, api)
    assert f"limit of {LIMIT} bytes" in message
    assert peak < 8 * LIMIT
    assert server.sent < 32 * LIMIT  # the call ended before the provider did


@APIS
async def test_data_lines_without_a_blank_line_count_toward_the_size_limit(api: str) -> None:
    async def answer(exchange: Exchange) -> None:
        await exchange.head()
        await exchange.body(repeat(b"data: " + b"x" * 1000 + b"\n", 32 * LIMIT))

    async with HostileServer(answer) as server:
        events, peak = await peak_of_call(api, server)
    message = the_error(events, api)
    assert names_the_provider(message, api)
    assert f"limit of {LIMIT} bytes" in message
    assert peak < 8 * LIMIT


async def test_lines_gemini_keeps_until_their_braces_balance_count_toward_the_size_limit() -> None:
    # google-genai keeps lines that are not `data:` lines, across blank lines, until a JSON object closes.
    async def answer(exchange: Exchange) -> None:
        await exchange.head()
        await exchange.body([b"{\n\n"], end=False)
        await exchange.body(repeat(b"x" * 1000 + b"\n\n", 32 * LIMIT))

    async with HostileServer(answer) as server:
        events, peak = await peak_of_call("google-generative-ai", server)
    message = the_error(events, "google-generative-ai")
    assert f"limit of {LIMIT} bytes" in message
    assert peak < 8 * LIMIT


@APIS
async def test_a_gzip_bomb_is_bounded_by_its_decompressed_size(api: str) -> None:
    bomb = b"".join(gzipped(repeat(b"data: " + b"x" * 4096, 64 * LIMIT)))
    assert len(bomb) < LIMIT // 4  # 64 MiB from a few kilobytes

    async def answer(exchange: Exchange) -> None:
        await exchange.head("200 OK", exchange.stream_type, "content-encoding: gzip")
        await exchange.body([bomb[start : start + PIECE] for start in range(0, len(bomb), PIECE)])

    async with HostileServer(answer) as server:
        events, peak = await peak_of_call(api, server)
    message = the_error(events, api)
    assert names_the_provider(message, api)
    assert f"limit of {LIMIT} bytes" in message
    assert peak < 8 * LIMIT


@APIS
async def test_a_gzipped_stream_still_streams(api: str) -> None:
    events_of_recording = Recording.read(MODULES[api].BY_NAME["text"].recording("text.http")).events

    async def answer(exchange: Exchange) -> None:
        await exchange.head("200 OK", exchange.stream_type, "content-encoding: gzip")
        await exchange.body(gzipped(events_of_recording))

    async with HostileServer(answer) as server:
        events = await call(api, server)
    assert events[-1].done is not None, events[-1]
    assert server.requests[0].headers["accept-encoding"] == "gzip, deflate"


ANTHROPIC_MESSAGE = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "content": [],
    "model": "claude-sonnet-4-5",
    "usage": {"input_tokens": 1, "output_tokens": 1},
}
ANTHROPIC_START = "event: message_start\ndata: " + json.dumps({"type": "message_start", "message": ANTHROPIC_MESSAGE})


@APIS
@pytest.mark.parametrize(
    ("encoding", "body", "expected"),
    [
        ("br", b"\x1b\x00", "sent a body encoded as br, which this server does not decode"),
        ("gzip", b"data: not gzip\n\n", "sent a body that is not valid gzip"),
    ],
    ids=["br", "bad-gzip"],
)
async def test_a_body_that_cannot_be_decoded_is_an_error(api: str, encoding: str, body: bytes, expected: str) -> None:
    async def answer(exchange: Exchange) -> None:
        await exchange.head("200 OK", exchange.stream_type, f"content-encoding: {encoding}")
        await exchange.body([body])

    async with HostileServer(answer) as server:
        message = the_error(await call(api, server), api)
    assert message.startswith(f"the provider {MODULES[api].INFO.provider!r} {expected}")


def tool_calls(api: str, count: int, id_bytes: int, argument_bytes: int) -> Iterator[str]:
    """`count` tool calls, each with an id of `id_bytes` and arguments of about `argument_bytes`,
    as `api` streams them."""
    api = STREAMS_AS.get(api, api)
    arguments = json.dumps({"p": "a" * argument_bytes})
    if api == "anthropic-messages":
        yield ANTHROPIC_START
    for number in range(count):
        call_id = f"{number:08d}" + "i" * (id_bytes - 8)
        if api == "anthropic-messages":
            block = {"type": "tool_use", "id": f"toolu_{call_id}", "name": "read", "input": {}}
            yield "event: content_block_start\ndata: " + json.dumps(
                {"type": "content_block_start", "index": number, "content_block": block}
            )
            yield "event: content_block_delta\ndata: " + json.dumps(
                {
                    "type": "content_block_delta",
                    "index": number,
                    "delta": {"type": "input_json_delta", "partial_json": arguments},
                }
            )
            yield "event: content_block_stop\ndata: " + json.dumps({"type": "content_block_stop", "index": number})
        elif api == "openai-completions":
            function = {"name": "read", "arguments": arguments}
            delta = {"tool_calls": [{"index": number, "id": call_id, "type": "function", "function": function}]}
            chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}
            yield "data: " + json.dumps({**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
        elif api == "openai-responses":
            item = {"type": "function_call", "id": f"fc_{number}", "call_id": call_id, "name": "read", "arguments": ""}
            yield "event: response.output_item.added\ndata: " + json.dumps(
                {"type": "response.output_item.added", "output_index": number, "item": item, "sequence_number": 1}
            )
            yield "event: response.function_call_arguments.delta\ndata: " + json.dumps(
                {
                    "type": "response.function_call_arguments.delta",
                    "item_id": f"fc_{number}",
                    "output_index": number,
                    "delta": arguments,
                    "sequence_number": 2,
                }
            )
            done = {**item, "arguments": arguments, "status": "completed"}
            yield "event: response.output_item.done\ndata: " + json.dumps(
                {"type": "response.output_item.done", "output_index": number, "item": done, "sequence_number": 3}
            )
        elif api == "pi-messages":
            yield "data: " + json.dumps(
                {"type": "toolcall_start", "contentIndex": number, "id": call_id, "toolName": "read"}
            )
            yield "data: " + json.dumps({"type": "toolcall_delta", "contentIndex": number, "delta": arguments})
            finished = {"type": "toolCall", "id": call_id, "name": "read", "arguments": {"p": "a" * argument_bytes}}
            yield "data: " + json.dumps({"type": "toolcall_end", "contentIndex": number, "toolCall": finished})
        else:
            part = {"functionCall": {"id": call_id, "name": "read", "args": {"p": "a" * argument_bytes}}}
            yield "data: " + json.dumps({"candidates": [{"content": {"role": "model", "parts": [part]}, "index": 0}]})


def bedrock_tool_calls(count: int, id_bytes: int, argument_bytes: int) -> Iterator[dict[str, Any]]:
    """`count` tool calls as Bedrock's ConverseStream sends them, one frame's message each."""
    arguments = json.dumps({"p": "a" * argument_bytes})
    yield {"event": "messageStart", "payload": {"role": "assistant"}}
    for number in range(count):
        tool_use = {"toolUseId": f"{number:08d}" + "i" * (id_bytes - 8), "name": "read"}
        yield {"event": "contentBlockStart", "payload": {"contentBlockIndex": number, "start": {"toolUse": tool_use}}}
        delta = {"toolUse": {"input": arguments}}
        yield {"event": "contentBlockDelta", "payload": {"contentBlockIndex": number, "delta": delta}}
        yield {"event": "contentBlockStop", "payload": {"contentBlockIndex": number}}


def ids_count_toward_the_limit() -> bool:
    """Whether the accumulator counts tool call ids toward its size limit."""
    accumulator = Accumulator(max_message_bytes=8)
    accumulator.apply(pp.ModelEvent(start=pp.StartEvent(header=pp.AssistantMessage())))
    try:
        accumulator.apply(pp.ModelEvent(toolcall_start=pp.ToolCallStartEvent(content_index=0, id="i" * 64, name="n")))
    except ValueError:
        return True
    return False


@APIS
@pytest.mark.parametrize(
    "argument_bytes",
    [
        64 * 1024,
        pytest.param(
            0,
            marks=pytest.mark.skipif(
                not ids_count_toward_the_limit(), reason="the accumulator does not count tool call ids"
            ),
        ),
    ],
    ids=["ids-and-arguments", "ids-only"],
)
async def test_endless_tool_calls_with_large_ids_end_in_one_error(api: str, argument_bytes: int) -> None:
    async def answer(exchange: Exchange) -> None:
        await exchange.head()
        if api == "bedrock-converse-stream":  # binary event stream frames
            await exchange.body(map(event_stream_frame, bedrock_tool_calls(64, 64 * 1024, argument_bytes)))
        else:
            await exchange.body(sse(*tool_calls(api, 64, 64 * 1024, argument_bytes)))

    async with HostileServer(answer) as server:
        events = await call(api, server)
    message = the_error(events, api)
    assert names_the_provider(message, api)
    assert f"limit of {LIMIT} bytes" in message
    assert 0 < sum(event.toolcall_start is not None for event in events) < 64  # some streamed, then the limit


def anthropic_thinking(*deltas: str) -> Iterator[str]:
    yield ANTHROPIC_START
    block = {"type": "thinking", "thinking": "", "signature": ""}
    yield "event: content_block_start\ndata: " + json.dumps(
        {"type": "content_block_start", "index": 0, "content_block": block}
    )
    for signature in deltas:
        delta = {"type": "signature_delta", "signature": signature}
        yield "event: content_block_delta\ndata: " + json.dumps(
            {"type": "content_block_delta", "index": 0, "delta": delta}
        )


async def test_anthropic_signature_deltas_count_toward_the_size_limit() -> None:
    async def answer(exchange: Exchange) -> None:
        await exchange.head()
        await exchange.body(sse(*anthropic_thinking(*["s" * PIECE] * 64)))

    async with HostileServer(answer) as server:
        message = the_error(await call("anthropic-messages", server), "anthropic-messages")
    assert names_the_provider(message, "anthropic-messages")
    assert f"limit of {LIMIT} bytes" in message


async def test_openai_completions_arguments_before_the_name_count_toward_the_size_limit() -> None:
    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    delta = {"tool_calls": [{"index": 0, "function": {"arguments": "a" * PIECE}}]}
    event = "data: " + json.dumps({**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})

    async def answer(exchange: Exchange) -> None:
        await exchange.head()
        await exchange.body(sse(*[event] * 64))

    async with HostileServer(answer) as server:
        message = the_error(await call("openai-completions", server), "openai-completions")
    assert f"limit of {LIMIT} bytes" in message


async def test_openai_completions_encrypted_reasoning_details_count_toward_the_size_limit() -> None:
    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}

    def event(number: int) -> str:
        detail = {"type": "reasoning.encrypted", "id": f"r{number}", "data": "e" * PIECE}
        delta = {"content": "", "reasoning_details": [detail]}
        return "data: " + json.dumps({**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})

    async def answer(exchange: Exchange) -> None:
        await exchange.head()
        await exchange.body(sse(*[event(number) for number in range(64)]))

    async with HostileServer(answer) as server:
        message = the_error(await call("openai-completions", server), "openai-completions")
    assert f"limit of {LIMIT} bytes" in message


# --- text kept from many chunks is kept without copying it at each chunk ----------------------------


class Counted(str):
    """A string that counts the concatenations it takes part in: each copies the text so far."""

    copies = 0

    def __add__(self, other: str) -> str:
        Counted.copies += 1
        return str(self) + str(other)

    def __radd__(self, other: str) -> str:
        Counted.copies += 1
        return str(other) + str(self)


def reader_call(api: str) -> Call:
    config = ModelConfig(info=dataclasses.replace(MODULES[api].INFO), api_key=SECRET)
    return Call(config, hi(), None, AssistantMessageEventStream())


async def test_anthropic_keeps_a_signature_from_its_deltas_without_copying_it_at_each_delta() -> None:
    call = reader_call("anthropic-messages")
    reader = anthropic_messages._Reader(call)
    await call.start()
    block = anthropic.types.ThinkingBlock.model_construct(type="thinking", thinking="", signature="")
    await reader.apply(
        anthropic.types.RawContentBlockStartEvent.model_construct(
            type="content_block_start", index=0, content_block=block
        )
    )
    Counted.copies = 0
    for number in range(1000):
        delta = anthropic.types.SignatureDelta.model_construct(type="signature_delta", signature=Counted(f"{number};"))
        await reader.apply(
            anthropic.types.RawContentBlockDeltaEvent.model_construct(type="content_block_delta", index=0, delta=delta)
        )
    await reader.apply(anthropic.types.RawContentBlockStopEvent.model_construct(type="content_block_stop", index=0))
    thinking = call.events.partial.content[0].thinking
    assert thinking is not None
    assert thinking.thinking_signature == "".join(f"{number};" for number in range(1000))
    assert Counted.copies == 0


class CountedLine(bytes):
    """A line that counts the copies of the text before it that adding it makes: adding it to
    bytes copies them; a bytearray extends in place."""

    copies = 0

    def __radd__(self, other: bytes) -> bytes:
        if isinstance(other, bytearray):
            return NotImplemented
        CountedLine.copies += 1
        return bytes(other) + bytes(self)


class CountedChunk(bytes):
    def splitlines(self, keepends: bool = False) -> list[bytes]:
        return [CountedLine(line) for line in bytes(self).splitlines(keepends)]


async def test_anthropic_gathers_an_event_of_many_lines_without_copying_it_at_each_line() -> None:
    decoder = anthropic_messages._Client(api_key="k")._make_sse_decoder()
    chunks = [b"event: content_block_delta\r\n", *[b"data: x\n"] * 1000, b"\n", b"event: ping\rdata: {}\r\r"]

    async def body() -> AsyncIterator[bytes]:
        for chunk in chunks:
            yield CountedChunk(chunk)

    CountedLine.copies = 0
    events = [event async for event in decoder.aiter_bytes(body())]
    assert [(event.event, event.data) for event in events] == [
        ("content_block_delta", "\n".join(["x"] * 1000)),
        ("ping", "{}"),
    ]
    assert CountedLine.copies == 0


async def test_openai_completions_keeps_arguments_before_the_name_without_copying_them_at_each_chunk() -> None:
    call = reader_call("openai-completions")
    reader = openai_completions._Reader(call)
    await call.start()
    types = openai.types.chat.chat_completion_chunk

    def chunk(arguments: str, name: str | None = None) -> openai.types.chat.ChatCompletionChunk:
        function = types.ChoiceDeltaToolCallFunction.model_construct(name=name)
        function.arguments = arguments  # as it is: model_construct would make a str of a Counted
        tool_call = types.ChoiceDeltaToolCall.model_construct(index=0, id=None, function=function)
        delta = types.ChoiceDelta.model_construct(content=None, tool_calls=[tool_call])
        choice = types.Choice.model_construct(index=0, delta=delta, finish_reason=None)
        return openai.types.chat.ChatCompletionChunk.model_construct(choices=[choice], usage=None)

    Counted.copies = 0
    for number in range(1000):
        await reader.apply(chunk(Counted(f"{number},")))
    await reader.apply(chunk("", name="read"))
    await reader.finish()
    tool = call.events.partial.content[0].tool_call
    assert tool is not None
    assert tool.raw_arguments == "".join(f"{number}," for number in range(1000))
    assert Counted.copies == 0


# --- an answer that is not an event stream --------------------------------------------------------------


@APIS
async def test_a_200_that_is_not_an_event_stream_is_an_error_naming_what_was_sent(api: str) -> None:
    async def answer(exchange: Exchange) -> None:
        await exchange.whole("200 OK", "text/html; charset=utf-8", b"<html><title>Sign in</title></html>")

    async with HostileServer(answer) as server:
        message = the_error(await call(api, server), api)
    assert names_the_provider(message, api)
    assert "text/html" in message
    assert "<html><title>Sign in</title></html>" in message


@APIS
@pytest.mark.parametrize("body", [b"", b": keep-alive\n\n: keep-alive\n\n", b"<html>a page</html>\n"])
async def test_an_event_stream_that_holds_no_event_is_an_error(api: str, body: bytes) -> None:
    async def answer(exchange: Exchange) -> None:
        await exchange.head()
        await exchange.body([body])

    async with HostileServer(answer) as server:
        message = the_error(await call(api, server), api)
    assert names_the_provider(message, api)
    if STREAMS_AS.get(api, api) == "google-generative-ai" and body:  # google-genai reads any other line as JSON
        assert f"sent something that is not an event: {body.decode().splitlines()[0]}" in message
    else:
        assert "no event" in message


@APIS
async def test_an_event_stream_with_a_charset_is_an_event_stream(api: str) -> None:
    recording = Recording.read(MODULES[api].BY_NAME["text"].recording("text.http"))

    async def answer(exchange: Exchange) -> None:
        # The type in other letters, with a parameter: still the API's event stream.
        await exchange.head("200 OK", exchange.stream_type.title() + " ; charset=UTF-8")
        await exchange.body(recording.events)

    async with HostileServer(answer) as server:
        events = await call(api, server)
    assert events[-1].done is not None, events[-1]


# --- how the bytes an SDK holds are counted -----------------------------------------------------------


@pytest.mark.parametrize("gemini", [False, True], ids=["sse", "gemini"])
@pytest.mark.parametrize("blank", [b"\n\n", b"\r\n\r\n", b"\r\r", b"\n\r\n"])
def test_a_blank_line_ends_what_is_held_even_across_pieces(gemini: bool, blank: bytes) -> None:
    for cut in range(len(blank) + 1):
        pending = http._Pending(gemini)
        pending.feed(b"data: " + b"x" * 100 + blank[:cut])
        assert pending.feed(blank[cut:] + b"data: yy") in (8, 9), cut  # the LF of a CRLF may count


@pytest.mark.parametrize("gemini", [False, True], ids=["sse", "gemini"])
def test_a_line_end_split_across_pieces_is_no_blank_line(gemini: bool) -> None:
    pending = http._Pending(gemini)
    pending.feed(b"data: " + b"x" * 100 + b"\r")
    assert pending.feed(b"\ndata: y") > 100


def test_gemini_lines_that_are_not_data_lines_stay_held_across_blank_lines() -> None:
    pending = http._Pending(gemini=True)
    pending.feed(b"{\n\n" + b"x" * 100 + b"\n\n")
    assert pending.feed(b"data: {}\n\n") == 2 + 101
