"""ModelService over HTTP: the README trip on every protocol, the catalog, and errors as each
protocol says them (pi_proto.web)."""

from __future__ import annotations

import base64
import json
import struct
from collections.abc import AsyncIterator
from typing import Any

import pyqwest
import pytest

import pi_proto as pp
from pi_proto.grpc.server import ModelServer
from pi_proto.models.scripted import ScriptedModel
from pi_proto.stream.event_stream import AssistantMessageEventStream
from pi_proto.transcripts.pi_json import assistant_to_pi
from pi_proto.web import SSE_PATH, HttpModelClient, HttpServer, event_from_sse, read_sse
from pi_proto.web.sse import event_to_sse, sse_data

from .helpers import RecordingModel, drain, kind, readme_context

NOT_SERVED = "is not served: this server serves scripted/scripted-v1"
JSON = {"content-type": "application/json"}
WAYS = [
    ("connect", "proto", True),
    ("connect", "proto", False),
    ("connect", "json", True),
    ("connect", "json", False),
    ("grpc-web", "proto", True),
    ("grpc-web", "json", False),
]


@pytest.fixture
async def servers() -> AsyncIterator[tuple[ModelServer, HttpServer]]:
    async with ModelServer(ScriptedModel.readme()) as grpc_server, HttpServer(grpc_server) as http_server:
        yield grpc_server, http_server


async def grpc_trip(target: str) -> tuple[list[str], list[bytes], pp.AssistantMessage]:
    """The README trip over gRPC: event kinds, the partial after each event, the final message."""
    async with pp.ModelClient(target) as client:
        seen, message = await drain(client.stream(readme_context()))
    return [kind(event) for event in seen], [pp.encode(event.partial) for event in seen if event.partial], message


async def sse_post(
    url: str, body: object, headers: dict[str, str] | None = None, path_suffix: str = ""
) -> tuple[int, list[Any]]:
    """POST to the SSE endpoint (its path then `path_suffix`, a query): the status and the events
    (or the error body) that came back."""
    async with pyqwest.Client().stream(
        "POST",
        url + SSE_PATH + path_suffix,
        headers={"content-type": "application/json", **(headers or {})},
        content=body if isinstance(body, bytes) else json.dumps(body).encode(),
    ) as response:
        if response.status != 200:
            return response.status, [json.loads(b"".join([bytes(chunk) async for chunk in response.content]))]
        return 200, [event async for event in read_sse(response.content)]


def rebuilt(objects: list[Any]) -> AssistantMessageEventStream:
    """An event stream fed with the events SSE objects stand for, each partial rebuilt."""
    events = AssistantMessageEventStream()
    for value in objects:
        events.push(event_from_sse(value))
    return events


@pytest.mark.parametrize(("protocol", "codec", "batched"), WAYS, ids=["-".join(map(str, way)) for way in WAYS])
async def test_the_readme_trip_over_connect_and_grpc_web(
    servers: tuple[ModelServer, HttpServer], protocol: str, codec: str, batched: bool
) -> None:
    grpc_server, http_server = servers
    kinds, partials, message = await grpc_trip(grpc_server.target)
    async with HttpModelClient(http_server.url, protocol=protocol, codec=codec, batched=batched) as client:
        events = client.stream(readme_context())
        seen, over_http = await drain(events)
    assert [kind(event) for event in seen] == kinds
    assert [pp.encode(event.partial) for event in seen if event.partial] == partials
    assert over_http == message
    assert over_http.stop_reason == pp.StopReason.TOOL_USE
    assert events.failure is None


async def test_the_readme_trip_over_sse(servers: tuple[ModelServer, HttpServer]) -> None:
    grpc_server, http_server = servers
    kinds, partials, message = await grpc_trip(grpc_server.target)
    status, objects = await sse_post(
        http_server.url, json.loads(pp.to_json(pp.StreamRequest(context=readme_context())))
    )
    assert status == 200
    events = rebuilt(objects)
    seen = [event async for event in events]
    assert [kind(event) for event in seen] == kinds
    assert [pp.encode(event.partial) for event in seen if event.partial] == partials
    assert await events.result() == message


async def test_sse_events_are_pis_assistant_message_events(servers: tuple[ModelServer, HttpServer]) -> None:
    _, http_server = servers
    context = {"messages": [{"role": "user", "content": "请读取 README", "timestamp": 1}]}
    status, objects = await sse_post(http_server.url, context)
    assert status == 200
    message = assistant_to_pi(await rebuilt(objects).result())
    header = {key: value for key, value in message.items() if key not in ("stopReason", "errorMessage")}
    amounts = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
    zero = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0, "cost": amounts}
    assert objects == [
        {"type": "start", "partial": {**header, "content": [], "usage": zero}},
        {"type": "text_start", "contentIndex": 0},
        {"type": "text_delta", "contentIndex": 0, "delta": "我先读取项目说明"},
        {"type": "text_delta", "contentIndex": 0, "delta": "。"},
        {"type": "text_end", "contentIndex": 0, "content": "我先读取项目说明。"},
        {"type": "toolcall_start", "contentIndex": 1, "id": "call_1", "name": "read"},
        {"type": "toolcall_delta", "contentIndex": 1, "delta": '{"path":'},
        {"type": "toolcall_delta", "contentIndex": 1, "delta": '"README.'},
        {"type": "toolcall_delta", "contentIndex": 1, "delta": 'md"}'},
        {
            "type": "toolcall_end",
            "contentIndex": 1,
            "toolCall": {"type": "toolCall", "id": "call_1", "name": "read", "arguments": {"path": "README.md"}},
        },
        {"type": "done", "reason": "toolUse", "message": message},
    ]


async def test_sse_answers_text_event_stream_ending_after_the_terminal_event(
    servers: tuple[ModelServer, HttpServer],
) -> None:
    _, http_server = servers
    body = pp.to_json(pp.StreamRequest(context=readme_context())).encode()
    reply = await pyqwest.Client().post(http_server.url + SSE_PATH, headers=JSON, content=body)
    assert reply.status == 200
    assert reply.headers["content-type"] == "text/event-stream"
    assert reply.headers["cache-control"] == "no-cache"
    text = reply.content.decode()
    blocks = text.split("\n\n")
    assert blocks[-1] == ""  # the body ends with the terminal event's blank line
    assert all(block.startswith("data: {") and "\n" not in block for block in blocks[:-1])
    assert json.loads(blocks[-2].removeprefix("data: "))["type"] == "done"


async def test_sse_takes_a_pi_context_with_the_model_in_the_query(servers: tuple[ModelServer, HttpServer]) -> None:
    _, http_server = servers
    context = {"messages": [{"role": "user", "content": "hi", "timestamp": 1}]}
    status, objects = await sse_post(http_server.url, context)
    assert status == 200
    assert objects[-1]["type"] == "done"
    query = "?model=gpt-9&provider=openai"
    reply = await pyqwest.Client().post(
        http_server.url + SSE_PATH + query, headers=JSON, content=json.dumps(context).encode()
    )
    assert reply.status == 404
    assert reply.json() == {
        "code": "not_found",
        "message": "model openai/gpt-9 is not served: this server serves scripted/scripted-v1",
    }


async def test_the_catalog_over_connect_post_and_get(servers: tuple[ModelServer, HttpServer]) -> None:
    grpc_server, http_server = servers
    async with HttpModelClient(http_server.url) as client, pp.ModelClient(grpc_server.target) as grpc_client:
        assert await client.list_models() == await grpc_client.list_models()
        assert await client.get_model("scripted-v1") == await grpc_client.get_model("scripted-v1")
        with pytest.raises(pp.CallError) as refused:
            await client.get_model("gpt-9")
    assert refused.value.status_code == "NOT_FOUND"
    assert refused.value.detail == "model 'gpt-9' is not served: this server serves scripted/scripted-v1"
    service = f"{http_server.url}/pi.ai.v1.ModelService"
    listed = await pyqwest.Client().get(f"{service}/ListModels?encoding=json&message=%7B%7D")
    assert listed.status == 200
    assert json.loads(listed.content)["models"][0]["id"] == "scripted-v1"
    missing = await pyqwest.Client().get(f"{service}/GetModel?encoding=json&message=%7B%22id%22%3A%22x%22%7D")
    assert missing.status == 404
    assert missing.json() == {
        "code": "not_found",
        "message": "model 'x' is not served: this server serves scripted/scripted-v1",
    }
    invalid = await pyqwest.Client().post(
        f"{service}/GetModel", headers={"content-type": "application/json"}, content=b"{}"
    )
    assert invalid.status == 400
    assert json.loads(invalid.content)["code"] == "invalid_argument"
    assert "id" in json.loads(invalid.content)["message"]


@pytest.mark.parametrize("protocol", ["connect", "grpc-web"])
async def test_request_errors_are_the_status_gRPC_would_answer(
    servers: tuple[ModelServer, HttpServer], protocol: str
) -> None:
    _, http_server = servers
    async with HttpModelClient(http_server.url, protocol=protocol) as client:
        missing = client.stream(readme_context(), model="gpt-9")
        seen, message = await drain(missing)
        no_context = client.stream(pp.AgentContext(messages=[pp.agent_message(pp.user_message("hi"))]), model="x")
        await drain(no_context)
    assert [kind(event) for event in seen] == ["error"]
    assert message.error_message == "model 'gpt-9' is not served: this server serves scripted/scripted-v1"
    assert missing.failure is not None
    assert missing.failure.status_code == "NOT_FOUND"
    assert no_context.failure is not None
    assert no_context.failure.status_code == "NOT_FOUND"


async def test_an_invalid_request_is_invalid_argument_naming_the_field(servers: tuple[ModelServer, HttpServer]) -> None:
    _, http_server = servers
    request = pp.StreamRequest(context=pp.AgentContext(messages=[pp.agent_message(pp.user_message("hi"))]))
    request.options = pp.GenerationOptions(temperature=7.0)
    body = pp.encode(request)
    connect = await pyqwest.Client().post(
        f"{http_server.url}/pi.ai.v1.ModelService/Stream",
        headers={"content-type": "application/connect+proto"},
        content=struct.pack(">BI", 0, len(body)) + body,
    )
    assert connect.status == 200  # Connect streams say errors in their end message
    flags, size = struct.unpack(">BI", connect.content[:5])
    assert flags == 2
    end = json.loads(connect.content[5 : 5 + size])
    assert end["error"]["code"] == "invalid_argument"
    assert "options.temperature" in end["error"]["message"]
    web = await pyqwest.Client().post(
        f"{http_server.url}/pi.ai.v1.ModelService/Stream",
        headers={"content-type": "application/grpc-web+proto"},
        content=struct.pack(">BI", 0, len(body)) + body,
    )
    flags, size = struct.unpack(">BI", web.content[:5])
    assert flags == 0x80  # the trailers frame
    trailers = dict(line.split(": ", 1) for line in web.content[5 : 5 + size].decode().strip().split("\r\n"))
    assert trailers["grpc-status"] == "3"
    status, objects = await sse_post(http_server.url, json.loads(pp.to_json(request)))
    assert status == 400
    assert objects[0]["code"] == "invalid_argument"
    assert "options.temperature" in objects[0]["message"]


@pytest.mark.parametrize(
    ("body", "status", "words"),
    [
        (b"{not json", 400, "the body is not JSON"),
        (b"[1]", 400, "must be a JSON object"),
        (b'{"contexts": {}}', 400, "cannot decode StreamRequest from ProtoJSON"),
        (b'{"messages": [{"role": "user", "content": 5}]}', 400, "context.messages[0].content"),
        (b'{"messages": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", 400, "nested too deeply"),
        (
            b'{"messages": [], "tools": [{"name": "t", "description": "d", "parameters": '
            + b'{"a": ' * 990
            + b"1"
            + b"}" * 990
            + b"}]}",
            400,
            "nested too deeply",
        ),
    ],
    ids=["not-json", "not-an-object", "unknown-field", "bad-pi-json", "deep-json", "deep-tool-parameters"],
)
async def test_sse_request_errors_are_http_errors_with_connect_json(
    servers: tuple[ModelServer, HttpServer], body: bytes, status: int, words: str
) -> None:
    _, http_server = servers
    got, objects = await sse_post(http_server.url, body)
    assert got == status
    (error,) = objects
    assert error["code"] == "invalid_argument"
    assert words in error["message"]
    reply = await pyqwest.Client().get(http_server.url + SSE_PATH)
    assert reply.status == 405
    assert reply.headers["allow"] == "POST"


@pytest.mark.parametrize(
    ("query", "body", "words"),
    [
        ("?modle=x", {"messages": []}, "unknown query parameter 'modle': expected model, provider, coalesceDeltas"),
        ("?coalesceDeltas=yes", {"messages": []}, "coalesceDeltas must be true, false, 1 or 0, not 'yes'"),
        ("?model=nope", {"context": {}}, "the query parameter 'model' goes with a pi-JSON context"),
    ],
    ids=["unknown-parameter", "not-a-boolean", "model-beside-a-stream-request"],
)
async def test_sse_refuses_a_query_it_would_not_honour(
    servers: tuple[ModelServer, HttpServer], query: str, body: object, words: str
) -> None:
    _, http_server = servers
    status, (error,) = await sse_post(http_server.url, body, path_suffix=query)
    assert (status, error["code"]) == (400, "invalid_argument")
    assert error["message"].startswith(words)


async def test_a_failure_after_the_start_is_an_error_event_on_every_protocol() -> None:
    model = ScriptedModel([pp.assistant_message("only turn", timestamp=1)])
    context = readme_context()
    context.messages.append(pp.agent_message(pp.assistant_message("an earlier answer", timestamp=1)))
    async with ModelServer(model) as grpc_server, HttpServer(grpc_server) as http_server:
        async with HttpModelClient(http_server.url) as client:
            events = client.stream(context)
            seen, message = await drain(events)
        status, objects = await sse_post(http_server.url, json.loads(pp.to_json(pp.StreamRequest(context=context))))
    assert [kind(event) for event in seen] == ["start", "error"]
    assert message.stop_reason == pp.StopReason.ERROR
    assert events.failure is None  # the server's own error event, not a status
    assert status == 200
    assert [value["type"] for value in objects] == ["start", "error"]
    assert objects[1]["error"]["errorMessage"] == message.error_message


@pytest.mark.parametrize("protocol", ["connect", "grpc-web"])
async def test_closing_the_http_client_ends_its_open_streams_with_aborted(protocol: str) -> None:
    model = ScriptedModel.readme(delay=0.05)
    async with ModelServer(model) as grpc_server, HttpServer(grpc_server) as http_server:
        client = HttpModelClient(http_server.url, protocol=protocol)
        events = client.stream(readme_context())
        first = await anext(events)
        await client.close()
        rest, message = await drain(events)
        after, late = await drain(client.stream(readme_context()))
    assert kind(first) == "start"
    assert [kind(event) for event in rest][-1] == "error"
    assert (message.stop_reason, message.error_message) == (pp.StopReason.ABORTED, "the client was closed")
    assert [kind(event) for event in after] == ["error"]
    assert (late.stop_reason, late.error_message) == (pp.StopReason.ABORTED, "the client was closed")


async def test_sse_names_a_broken_rule_of_a_pi_json_body_by_its_pi_json_path(
    servers: tuple[ModelServer, HttpServer],
) -> None:
    _, http_server = servers
    result = {"role": "toolResult", "toolCallId": "", "toolName": "read", "content": [], "timestamp": 1}
    status, (error,) = await sse_post(http_server.url, {"messages": [result]})
    assert (status, error["code"]) == (400, "invalid_argument")
    assert error["message"].startswith("messages[0].toolCallId: ")
    protojson = json.loads(pp.to_json(pp.StreamRequest(context=pp.context_from_pi({"messages": [result]}))))
    status, (error,) = await sse_post(http_server.url, protojson)
    assert error["message"].startswith("context.messages[0].tool_result.tool_call_id: ")  # as the client wrote it


@pytest.mark.parametrize(
    "content_type",
    [None, "text/plain", "application/x-www-form-urlencoded", "multipart/form-data", "application/jsonl"],
)
async def test_sse_takes_only_json_bodies_so_that_pages_must_ask_first(content_type: str | None) -> None:
    model = RecordingModel(pp.assistant_message("hi", timestamp=1))
    body = json.dumps({"messages": [{"role": "user", "content": "hi", "timestamp": 1}]}).encode()
    headers = {} if content_type is None else {"content-type": content_type}
    async with ModelServer(model) as grpc_server, HttpServer(grpc_server) as http_server:
        reply = await pyqwest.Client().post(http_server.url + SSE_PATH, headers=headers, content=body)
    assert reply.status == 415
    shown = "none" if content_type is None else repr(content_type)
    assert json.loads(reply.content) == {
        "code": "invalid_argument",
        "message": f"the body must be application/json, not {shown}",
    }
    assert model.streams == []


@pytest.mark.parametrize("content_type", ["application/json; charset=utf-8", "Application/JSON"])
async def test_sse_takes_json_with_parameters_and_in_any_case(
    servers: tuple[ModelServer, HttpServer], content_type: str
) -> None:
    context = {"messages": [{"role": "user", "content": "hi", "timestamp": 1}]}
    status, events = await sse_post(servers[1].url, context, headers={"content-type": content_type})
    assert (status, events[-1]["type"]) == (200, "done")


@pytest.mark.parametrize(
    ("method", "content_type"),
    [
        ("Stream", "application/connect+proto"),
        ("StreamBatched", "application/connect+json"),
        ("Stream", "application/grpc-web+proto"),
        ("StreamBatched", "application/grpc-web-text+proto"),
    ],
)
async def test_streaming_answers_tell_proxies_not_to_buffer_them(
    servers: tuple[ModelServer, HttpServer], method: str, content_type: str
) -> None:
    request = pp.StreamRequest(context=readme_context())
    message = pp.to_json(request).encode() if content_type.endswith("json") else pp.encode(request)
    body = struct.pack(">BI", 0, len(message)) + message
    if "text" in content_type:
        body = base64.b64encode(body)
    async with pyqwest.Client().stream(
        "POST", f"{servers[1].url}/pi.ai.v1.ModelService/{method}", headers={"content-type": content_type}, content=body
    ) as response:
        assert response.status == 200
        assert (response.headers["cache-control"], response.headers["x-accel-buffering"]) == ("no-cache", "no")


def test_a_lone_surrogate_goes_out_and_comes_back_as_pis_escape() -> None:
    """A text protobuf holds for a lone surrogate (U+10F800 + k) is written as pi's `\\udxxx` escape,
    on the delta's direct path and the general one, and read back to what it was."""
    mapped = "a\U0010f83db"  # "\ud83d" as a protobuf string holds it
    delta = pp.ModelEvent(text_delta=pp.TextDeltaEvent(content_index=0, delta=mapped))
    assert sse_data(delta) == b'data: {"type":"text_delta","contentIndex":0,"delta":"a\\ud83db"}\n\n'
    assert pp.dump_json(event_to_sse(delta)) == '{"type":"text_delta","contentIndex":0,"delta":"a\\ud83db"}'
    assert event_from_sse(pp.load_json('{"type":"text_delta","contentIndex":0,"delta":"a\\ud83db"}')) == delta
