"""models.json's `fallbacks`: a call that fails before its provider answers (a 429, a 5xx, a
connection that failed) goes to the next model on the same stream; after the stream opened,
nothing is retried silently."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

import pi_proto as pp
from pi_proto.grpc.client import ModelClient
from pi_proto.grpc.server import ModelServer
from pi_proto.models.providers import CatalogError, ProviderModel, load_models

from . import test_anthropic_messages, test_openai_responses
from .harness import RETRYING, SECRET, call_through_server, final_message, hi, outline, served_model
from .replay import RECORDINGS, ReplayServer

OPENAI = test_openai_responses.INFO
ANTHROPIC = test_anthropic_messages.INFO


async def fall_back(
    first: str, then: str, *, options: pp.GenerationOptions | None = None
) -> tuple[list[pp.ModelEvent], int, int]:
    """A call to an openai-responses model answering with the recording `first`, falling back to
    an anthropic-messages one answering `then`: the events, and the requests each provider got."""
    async with ReplayServer() as primary, ReplayServer() as secondary:
        primary.reply(RECORDINGS / "openai-responses" / first)
        secondary.reply(RECORDINGS / "anthropic-messages" / then)
        model = served_model(dataclasses.replace(OPENAI, base_url=primary.base_url))
        model.fallbacks = [served_model(dataclasses.replace(ANTHROPIC, base_url=secondary.base_url))]
        events = await call_through_server(model, hi(), options)
    return events, len(primary.requests), len(secondary.requests)


async def test_a_429_beyond_the_retry_cap_falls_back_and_the_message_names_the_model_that_answered() -> None:
    events, asked, fell_back = await fall_back("error-429-long.http", "text.http", options=RETRYING)
    assert (asked, fell_back) == (1, 1)
    assert outline(events)[0] == "start"
    assert sum(event.start is not None for event in events) == 1  # one stream, one start
    message = final_message(events)
    assert message.stop_reason == pp.StopReason.STOP
    assert (message.api, message.provider, message.model) == (ANTHROPIC.api, ANTHROPIC.provider, ANTHROPIC.id)
    assert message.response_model == ANTHROPIC.id  # the model that answered, not the one asked for
    assert pp.text_of(message)


async def test_a_provider_that_cannot_be_reached_falls_back() -> None:
    async with ReplayServer() as secondary:
        secondary.reply(RECORDINGS / "anthropic-messages" / "text.http")
        model = served_model(dataclasses.replace(OPENAI, base_url="http://127.0.0.1:9"))  # nothing listens
        model.fallbacks = [served_model(dataclasses.replace(ANTHROPIC, base_url=secondary.base_url))]
        events = await call_through_server(model, hi(), pp.GenerationOptions(max_retries=0))
    message = final_message(events)
    assert (message.stop_reason, message.model) == (pp.StopReason.STOP, ANTHROPIC.id)


async def test_500s_fall_back_after_their_retries() -> None:
    async with ReplayServer() as primary, ReplayServer() as secondary:
        for _ in range(3):
            primary.reply(RECORDINGS / "openai-responses" / "error-500.http")
        secondary.reply(RECORDINGS / "anthropic-messages" / "text.http")
        model = served_model(dataclasses.replace(OPENAI, base_url=primary.base_url))
        model.fallbacks = [served_model(dataclasses.replace(ANTHROPIC, base_url=secondary.base_url))]
        events = await call_through_server(model, hi())
    assert (len(primary.requests), len(secondary.requests)) == (3, 1)  # this model's retries first
    assert final_message(events).stop_reason == pp.StopReason.STOP


async def test_an_overloaded_stream_before_any_content_falls_back_on_the_same_stream() -> None:
    async with ReplayServer() as primary, ReplayServer() as secondary:
        primary.reply(RECORDINGS / "anthropic-messages" / "overloaded-before-content.http")
        secondary.reply(RECORDINGS / "openai-responses" / "text.http")
        model = served_model(dataclasses.replace(ANTHROPIC, base_url=primary.base_url))
        model.fallbacks = [served_model(dataclasses.replace(OPENAI, base_url=secondary.base_url))]
        events = await call_through_server(model, hi())
    assert (len(primary.requests), len(secondary.requests)) == (1, 1)
    assert sum(event.start is not None for event in events) == 1  # the stream opened once
    message = final_message(events)
    assert message.stop_reason == pp.StopReason.STOP
    assert (message.api, message.provider, message.model) == (OPENAI.api, OPENAI.provider, OPENAI.id)
    assert message.response_model is not None
    assert pp.text_of(message)


async def test_an_overloaded_stream_after_content_does_not_fall_back() -> None:
    async with ReplayServer() as primary, ReplayServer() as secondary:
        primary.reply(RECORDINGS / "anthropic-messages" / "overloaded-mid-stream.http")
        secondary.reply(RECORDINGS / "openai-responses" / "text.http")
        model = served_model(dataclasses.replace(ANTHROPIC, base_url=primary.base_url))
        model.fallbacks = [served_model(dataclasses.replace(OPENAI, base_url=secondary.base_url))]
        events = await call_through_server(model, hi())
    assert len(secondary.requests) == 0  # text was sent: nothing is retried silently after it
    assert final_message(events).stop_reason == pp.StopReason.ERROR


@pytest.mark.parametrize("first", ["error-401.http", "error-event-mid-stream.http"])
async def test_a_refusal_or_a_failure_after_the_stream_opened_does_not_fall_back(first: str) -> None:
    events, asked, fell_back = await fall_back(first, "text.http")
    assert (asked, fell_back) == (1, 0)
    assert final_message(events).stop_reason == pp.StopReason.ERROR
    assert final_message(events).model == OPENAI.id


async def test_when_every_model_fails_the_error_says_what_each_said() -> None:
    events, asked, fell_back = await fall_back("error-429-long.http", "error-401.http", options=RETRYING)
    assert (asked, fell_back) == (1, 1)
    message = final_message(events)
    assert message.stop_reason == pp.StopReason.ERROR
    assert message.model == ANTHROPIC.id  # the last model tried
    assert message.error_message is not None
    assert message.error_message.startswith("the provider answered 401")
    assert f"(after falling back from openai/{OPENAI.id}: the provider answered 429" in message.error_message
    assert SECRET not in message.error_message


async def test_a_request_names_its_own_fallbacks_which_come_before_the_catalogs() -> None:
    async with ReplayServer() as primary, ReplayServer() as asked, ReplayServer() as listed:
        primary.reply(RECORDINGS / "openai-responses" / "error-429-long.http")
        asked.reply(RECORDINGS / "anthropic-messages" / "text.http")
        model = served_model(dataclasses.replace(OPENAI, base_url=primary.base_url))
        named = served_model(dataclasses.replace(ANTHROPIC, id="claude-asked", base_url=asked.base_url))
        model.fallbacks = [served_model(dataclasses.replace(ANTHROPIC, base_url=listed.base_url))]
        async with ModelServer([model, named, *model.fallbacks]) as server, ModelClient(server.target) as client:
            stream = client.stream(
                hi(), model=OPENAI.id, options=RETRYING, fallback_models=[f"{ANTHROPIC.provider}/claude-asked"]
            )
            events = [event async for event in stream]
    assert (len(primary.requests), len(asked.requests), len(listed.requests)) == (1, 1, 0)
    assert final_message(events).model == "claude-asked"


@pytest.mark.parametrize(
    ("names", "code", "words"),
    [
        (["anthropic/nothing"], "NOT_FOUND", "fallback_models[0]: model anthropic/nothing is not served"),
        (["scripted/scripted-v1"], "INVALID_ARGUMENT", "only models of a models.json fall back"),
    ],
)
async def test_a_fallback_a_request_names_must_be_a_served_provider_model(
    names: list[str], code: str, words: str
) -> None:
    model = served_model(OPENAI)
    async with ModelServer([model, pp.ScriptedModel.readme()]) as server, ModelClient(server.target) as client:
        stream = client.stream(hi(), model=OPENAI.id, fallback_models=names)
        _ = [event async for event in stream]
    assert stream.failure is not None
    assert stream.failure.status_code == code
    assert words in stream.failure.detail


def catalog(tmp_path: Path, fallbacks: object) -> Path:
    path = tmp_path / "models.json"
    openai = {"baseUrl": "http://o", "api": "openai-responses", "apiKey": "k", "models": [{"id": "gpt-5.2"}]}
    openai["models"][0]["fallbacks"] = fallbacks  # type: ignore[index]
    anthropic = {"baseUrl": "http://a", "api": "anthropic-messages", "apiKey": "k", "models": [{"id": "claude"}]}
    other = {"baseUrl": "http://b", "api": "anthropic-messages", "apiKey": "k", "models": [{"id": "claude"}]}
    path.write_text(json.dumps({"providers": {"openai": openai, "anthropic": anthropic, "other": other}}))
    return path


def test_fallbacks_are_linked_by_provider_and_id(tmp_path: Path) -> None:
    first, *_ = load_models(catalog(tmp_path, ["other/claude", "anthropic/claude"]))
    assert [(model.info.provider, model.info.id) for model in first.fallbacks] == [
        ("other", "claude"),
        ("anthropic", "claude"),
    ]
    assert all(isinstance(model, ProviderModel) for model in first.fallbacks)


@pytest.mark.parametrize(
    ("fallbacks", "error"),
    [
        (["claude"], "'claude' is ambiguous: anthropic/claude, other/claude"),
        (["nobody/nothing"], "'nobody/nothing' serves no model of that name"),
        (["openai/gpt-5.2"], "a model cannot fall back to itself"),
        ("anthropic/claude", "expected a list of model names (provider/id)"),
    ],
)
def test_a_fallback_that_names_no_one_served_model_is_refused(tmp_path: Path, fallbacks: object, error: str) -> None:
    with pytest.raises(CatalogError, match=error.replace("(", r"\(").replace(")", r"\)")):
        load_models(catalog(tmp_path, fallbacks))
