"""azure-openai-responses: the official SDK's Azure client against recorded Azure Responses
streams, through our server.

The stream is read by the code openai-responses reads with (its tests pin each event kind);
these tests pin what Azure has of its own: the endpoint, the deployment, the api-key header, the
prompt cache key, strict tools, Azure's error bodies and its content filter.
"""

from __future__ import annotations

import dataclasses
from functools import partial
from typing import Any

import pytest

import pi_proto as pp
from pi_proto.models.providers import azure_openai_responses
from pi_proto.models.providers.call import Call, ProviderError
from pi_proto.models.providers.catalog import ModelConfig

from .expect import NO_USAGE, Expected, Response, text, tool_call
from .harness import (
    READ,
    READ_SCHEMA,
    RETRYING,
    SECRET,
    by_name,
    cancel_while_streaming,
    level_map,
    outline,
    output_limit_cases,
    play,
    provider_case,
    run,
)
from .replay import RECORDINGS

API = "azure-openai-responses"
# pi 1.6's catalog entry for gpt-5.2 on Azure (providers/data/azure.json).
GPT_5_2 = {"off": None, "xhigh": "xhigh"}
INFO = pp.Model(
    id="gpt-5.2",
    name="GPT-5.2",
    api=API,
    provider="azure",
    base_url="http://replaced-by-the-replay-server",
    reasoning=True,
    input=[pp.InputKind.TEXT, pp.InputKind.IMAGE],
    cost=pp.ModelCost(input=1.75, output=14, cache_read=0.175, cache_write=0),
    context_window=400_000,
    max_tokens=128_000,
    thinking_level_map=level_map(GPT_5_2),
)

case = partial(provider_case, API)
CASES = [
    case("text"),
    case("thinking", options=pp.GenerationOptions(reasoning=pp.ThinkingLevel.MEDIUM)),
    case("tool-call-fragments"),
    case("two-tool-calls"),
    case("cache-usage", options=pp.GenerationOptions(session_id="session-42")),
    case("length"),
    case("content-filter"),
    case("prompt-filtered"),
    case("refusal"),
    case("failed-mid-stream"),
    case("error-event-mid-stream"),
    case("cut-mid-stream", "text.http", cut_after=5),
    case("error-401"),
    case("error-404"),
    case("error-429-long", options=RETRYING),
    case("error-429-then-text", "error-429-short.http", "text.http", options=RETRYING),
    case("error-500", "error-500.http", "error-500.http", "error-500.http"),
    case(
        "deployment",
        "text.http",
        config={"environment": {"AZURE_OPENAI_DEPLOYMENT_NAME_MAP": "gpt-4o=chat, gpt-5.2=prod-gpt52"}},
    ),
    *output_limit_cases(API, INFO),
]
BY_NAME = by_name(CASES)
message = Expected(INFO).message
usage = partial(Expected(INFO).usage, reasoning=0)  # Azure reports reasoning tokens as OpenAI does
RESPONSE_ID = "resp_0a1b2c3d4e5f60718293a4b5c6d7e8f901234567890abcde"
MESSAGE_ID = "msg_0a1b2c3d4e5f60718293a4b5c6d7e8f90123456789abcd{:02d}"
CALL_ITEM_ID = "fc_0a1b2c3d4e5f60718293a4b5c6d7e8f90123456789abcd{:02d}"


def response(status: str | None = "completed") -> Response:
    return Response(id=RESPONSE_ID, raw_stop_reason=status)


TEXT_SIGNATURE = '{"v":1,"id":"msg_0a1b2c3d4e5f60718293a4b5c6d7e8f90123456789abcdef"}'  # text.http's item


def signed(number: int) -> str:
    return f'{{"v":1,"id":"{MESSAGE_ID.format(number)}"}}'


async def test_text_streams_from_the_responses_endpoint_with_the_api_version_and_key() -> None:
    events, replay = await play(BY_NAME["text"], INFO)
    assert outline(events) == [
        "start",
        "textStart 0",
        "textDelta 0 delta='Hello'",
        "textDelta 0 delta='! 你好，'",
        "textDelta 0 delta='how can I help?'",
        f"textEnd 0 textSignature={TEXT_SIGNATURE!r}",
        "done STOP",
    ]
    request = replay.requests[0]
    assert (request.method, request.path) == ("POST", "/responses?api-version=v1")
    assert request.headers["api-key"] == SECRET
    assert "authorization" not in request.headers  # Azure's key header only
    assert request.body["model"] == "gpt-5.2"  # no deployment map: the deployment is the model id


async def test_the_deployment_map_names_the_deployment_sent_as_the_model() -> None:
    _, replay = await play(BY_NAME["deployment"], INFO)
    assert replay.requests[0].body["model"] == "prod-gpt52"


async def test_reasoning_summaries_stream_as_thinking() -> None:
    events, final = await run(BY_NAME["thinking"], INFO)
    assert [line.split(" ")[0] for line in outline(events)] == [
        "start",
        "thinkingStart",
        *["thinkingDelta"] * 4,
        "thinkingEnd",
        "textStart",
        "textDelta",
        "textEnd",
        "done",
    ]
    block = final.content[0].thinking
    assert block is not None
    assert block.thinking.startswith("**Multiplying 27 by 453**")
    assert final.usage == usage(40, 61, reasoning=44)


async def test_function_call_arguments_stream_in_fragments_and_two_calls_end_with_tool_use() -> None:
    events, final = await run(BY_NAME["tool-call-fragments"], INFO)
    call_id = f"call_Qh7xW2mZ9kP4rT1vB8nL3sYd|{CALL_ITEM_ID.format(6)}"
    assert sum(line.startswith("toolcallDelta 1") for line in outline(events)) == 8
    assert final == message(
        text("Let me check the weather.", signed(5)),
        tool_call(call_id, "get_weather", '{"location": "San Francisco, CA", "unit": "fahrenheit", "days": [1, 2]}'),
        usage=usage(472, 89),
        response=response(),
        stop=pp.StopReason.TOOL_USE,
    )
    _, both = await run(BY_NAME["two-tool-calls"], INFO)
    assert [block.tool_call.name for block in both.content if block.tool_call] == ["read", "read"]
    assert both.stop_reason == pp.StopReason.TOOL_USE


async def test_cached_tokens_are_the_cache_read_and_the_session_is_the_prompt_cache_key() -> None:
    _, final = await run(BY_NAME["cache-usage"], INFO)
    assert final.usage == usage(12, 9, cache_read=24000)
    _, replay = await play(BY_NAME["cache-usage"], INFO)
    request = replay.requests[0]
    assert request.body["prompt_cache_key"] == "session-42"
    assert "prompt_cache_retention" not in request.body  # pi asks Azure for no retention
    names = ("session-id", "x-client-request-id", "x-session-id")
    assert not [name for name in names if name in request.headers]  # nor sends session headers


async def test_length_and_the_output_content_filter() -> None:
    _, final = await run(BY_NAME["length"], INFO)
    assert (final.stop_reason, final.raw_stop_reason) == (pp.StopReason.LENGTH, "incomplete.max_output_tokens")
    events, filtered = await run(BY_NAME["content-filter"], INFO)
    assert outline(events)[-1] == "error ERROR"
    assert filtered == message(
        text("Here is how to", signed(12)),
        usage=usage(22, 4),
        response=response("incomplete.content_filter"),
        stop=pp.StopReason.ERROR,
        error="the response is incomplete: content_filter",
    )


async def test_a_filtered_prompt_is_azures_400_with_its_content_filter_code() -> None:
    events, final = await run(BY_NAME["prompt-filtered"], INFO)
    assert outline(events) == ["start", "error ERROR"]
    assert final.error_message is not None
    assert final.error_message.startswith(
        "the provider answered 400 BadRequestError (content_filter): The response was filtered due to the "
        "prompt triggering Azure OpenAI's content management policy."
    )


async def test_a_refusal_streams_as_the_text_of_a_stop() -> None:
    _, final = await run(BY_NAME["refusal"], INFO)
    assert final.stop_reason == pp.StopReason.STOP
    assert pp.text_of(final) == "I'm sorry, but I can't help with that."


@pytest.mark.parametrize("name", ["failed-mid-stream", "error-event-mid-stream", "cut-mid-stream"])
async def test_a_failure_or_a_cut_mid_stream_keeps_what_came_before(name: str) -> None:
    events, final = await run(BY_NAME[name], INFO)
    assert outline(events)[-1] == "error ERROR"
    assert final.stop_reason == pp.StopReason.ERROR
    assert pp.text_of(final) in ("Partial answer", "Hello")
    assert final.error_message


@pytest.mark.parametrize(
    ("name", "error"),
    [
        (
            "error-401",
            "the provider answered 401 AuthenticationError (401): Access denied due to invalid subscription key "
            "or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct "
            "regional API endpoint for your resource.",
        ),
        (
            "error-404",
            "the provider answered 404 NotFoundError (DeploymentNotFound): The API deployment for this resource "
            "does not exist. If you created the deployment within the last 5 minutes, please wait a moment and "
            "try again.",
        ),
        (
            "error-500",
            "the provider answered 500 server_error: The server had an error while processing your request. "
            "Sorry about that!",
        ),
    ],
)
async def test_an_error_status_ends_with_one_error_event_in_azures_words(name: str, error: str) -> None:
    events, final = await run(BY_NAME[name], INFO)
    assert outline(events) == ["start", "error ERROR"]
    assert final == message(usage=NO_USAGE, stop=pp.StopReason.ERROR, error=error)


async def test_a_429_is_retried_after_the_delay_azure_gives_and_one_beyond_the_cap_is_not() -> None:
    _, final = await run(BY_NAME["error-429-then-text"], INFO)
    assert final.stop_reason == pp.StopReason.STOP
    _, given_up = await run(BY_NAME["error-429-long"], INFO)
    assert given_up.error_message is not None
    assert given_up.error_message.endswith(
        "the provider asks to retry after 120 s, longer than max_retry_delay_ms (60000 ms)"
    )


async def test_a_client_cancel_closes_the_provider_connection_and_ends_aborted() -> None:
    events, closed = await cancel_while_streaming(
        INFO, RECORDINGS / API / "text.http", provider_events=5, client_events=3
    )
    assert closed, "the provider never saw its connection close"
    assert outline(events)[-1] == "error ABORTED"


# --- the request --------------------------------------------------------------------------------


def config(environment: dict[str, str] | None = None, compat: dict[str, Any] | None = None, **model: Any) -> Call:
    info = dataclasses.replace(INFO, **model)
    settings = ModelConfig(info=info, api_key=SECRET, compat=compat or {}, environment=environment or {})
    context = pp.AgentContext(messages=[pp.agent_message(pp.user_message("hi", timestamp=1))], tools=[READ])
    return Call(settings, context, None, pp.AssistantMessageEventStream())


@pytest.mark.parametrize(
    ("base_url", "environment", "expected"),
    [
        ("https://contoso.openai.azure.com", {}, "https://contoso.openai.azure.com/openai/v1"),
        ("https://contoso.openai.azure.com/openai/", {}, "https://contoso.openai.azure.com/openai/v1"),
        ("https://contoso.cognitiveservices.azure.com/", {}, "https://contoso.cognitiveservices.azure.com/openai/v1"),
        ("https://contoso.openai.azure.com/openai/v1/responses", {}, "https://contoso.openai.azure.com/openai/v1"),
        ("https://gateway.example/azure/v1/", {}, "https://gateway.example/azure/v1"),  # not Azure's host: as given
        ("", {"AZURE_OPENAI_RESOURCE_NAME": "fabrikam"}, "https://fabrikam.openai.azure.com/openai/v1"),
        (
            "https://contoso.openai.azure.com",
            {"AZURE_OPENAI_BASE_URL": "https://eu.openai.azure.com", "AZURE_OPENAI_RESOURCE_NAME": "x"},
            "https://eu.openai.azure.com/openai/v1",
        ),
    ],
)
def test_the_endpoint_is_resolved_as_pi_resolves_it(base_url: str, environment: dict[str, str], expected: str) -> None:
    assert azure_openai_responses.base_url(config(environment, base_url=base_url)) == expected


def test_an_endpoint_that_is_no_url_is_refused_by_name() -> None:
    with pytest.raises(ProviderError, match="'not a url' is not an Azure OpenAI base URL"):
        azure_openai_responses.base_url(config(base_url="not a url"))


@pytest.mark.parametrize(
    ("mapping", "deployment"),
    [
        ("", "gpt-5.2"),
        ("gpt-5.2=prod", "prod"),
        (" gpt-4o = a , gpt-5.2 = b ", "b"),
        ("gpt-5.2=", "gpt-5.2"),  # an entry without a deployment is skipped
        ("gpt-5=other", "gpt-5.2"),
    ],
)
def test_the_deployment_comes_from_the_map_else_the_model_id(mapping: str, deployment: str) -> None:
    assert azure_openai_responses.deployment(config({"AZURE_OPENAI_DEPLOYMENT_NAME_MAP": mapping})) == deployment


async def test_the_request_marks_tools_strict_false_and_keeps_the_call_options() -> None:
    options = pp.GenerationOptions(
        temperature=0.5,
        max_tokens=1000,
        reasoning=pp.ThinkingLevel.XHIGH,
        tool_choice=pp.ToolChoice(mode=pp.ToolChoiceMode.REQUIRED),
        cache_retention=pp.CacheRetention.NONE,  # pi's Azure sends the key whatever the retention
        session_id="s-1",
    )
    context = pp.AgentContext(messages=[pp.agent_message(pp.user_message("hi", timestamp=1))], tools=[READ])
    _, replay = await play(case("options", "text.http", context=context, options=options), INFO)
    assert replay.requests[0].body == {
        "model": "gpt-5.2",
        "stream": True,
        "input": [{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}],
        "store": False,
        "prompt_cache_key": "s-1",
        "max_output_tokens": 1000,
        "temperature": 0.5,
        "tools": [
            {
                "type": "function",
                "name": "read",
                "description": "Read a file",
                "parameters": READ_SCHEMA,
                "strict": False,
            }
        ],
        "tool_choice": "required",
        "reasoning": {"effort": "xhigh", "summary": "auto"},
        "include": ["reasoning.encrypted_content"],
    }


def test_strict_is_left_out_where_the_model_does_not_take_it() -> None:
    request = azure_openai_responses.request(config(compat={"supportsStrictMode": False}))
    assert "strict" not in request["tools"][0]


def test_without_a_level_a_model_whose_off_is_unsupported_gets_no_effort() -> None:
    assert "reasoning" not in azure_openai_responses.request(config())
    assert "reasoning" in azure_openai_responses.request(config(thinking_level_map=level_map({})))


def test_another_models_tool_call_ids_are_rewritten_for_azure() -> None:
    turn = pp.assistant_message(
        pp.tool_call("call 1|item/1", "read", {"path": "a"}),
        provider="anthropic",
        api="anthropic-messages",
        model="claude",
        stop_reason=pp.StopReason.TOOL_USE,
        timestamp=2,
    )
    messages = [
        pp.agent_message(pp.user_message("hi", timestamp=1)),
        pp.agent_message(turn),
        pp.agent_message(pp.tool_result_message("call 1|item/1", "read", "A", timestamp=3)),
    ]
    settings = ModelConfig(info=INFO, api_key=SECRET)
    call = Call(settings, pp.AgentContext(messages=messages), None, pp.AssistantMessageEventStream())
    items = azure_openai_responses.request(call)["input"]
    assert [item.get("call_id") for item in items if item.get("type") == "function_call"] == ["call_1"]
    assert [item["id"] for item in items if item.get("type") == "function_call"] == ["fc_item_1"]


def test_thinking_of_an_azure_turn_replays_its_reasoning_item() -> None:
    item = '{"id":"rs_1","summary":[],"type":"reasoning","encrypted_content":"e"}'
    turn = pp.assistant_message(
        pp.thinking("t", signature=item),
        provider="azure",
        api=API,
        model="gpt-5.2",
        stop_reason=pp.StopReason.STOP,
        timestamp=2,
    )
    messages = [pp.agent_message(pp.user_message("hi", timestamp=1)), pp.agent_message(turn)]
    call = Call(
        ModelConfig(info=INFO, api_key=SECRET),
        pp.AgentContext(messages=messages),
        None,
        pp.AssistantMessageEventStream(),
    )
    assert azure_openai_responses.request(call)["input"][1] == {
        "id": "rs_1",
        "summary": [],
        "type": "reasoning",
        "encrypted_content": "e",
    }


async def test_a_call_without_a_key_fails_before_any_request() -> None:
    events, replay = await play(case("no-key", "text.http", config={"api_key": ""}), INFO)
    assert not replay.requests
    assert outline(events) == ["start", "error ERROR"]
    assert "no API key" in (events[-1].error.message.error_message or "")  # type: ignore[union-attr]
