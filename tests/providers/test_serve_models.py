"""`pi-proto serve --models FILE`: a pi models.json served as it is, to our client, keys kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import pi_proto as pp
from pi_proto.grpc.client import CallError, ModelClient

from ..helpers import serve_process
from .harness import SECRET, hi, level_map
from .replay import RECORDINGS, ReplayServer

# One model per API that has recordings, each answering with its plain-text recording.
MODELS = {
    "anthropic-messages": "claude-sonnet-4-5",
    "openai-completions": "gpt-4o-mini",
    "openai-responses": "gpt-5-mini",
    "google-generative-ai": "gemini-2.5-flash",
    "azure-openai-responses": "gpt-5.2",
    "google-vertex": "gemini-2.5-flash",
    "mistral-conversations": "mistral-medium-latest",
    "bedrock-converse-stream": "us.anthropic.claude-sonnet-4-6",  # the key is a Bedrock API key
    "pi-messages": "claude-sonnet-4-5",
}
APIS = [api for api in MODELS if (RECORDINGS / api / "text.http").exists()]


def models_json(path: Path, base_url: str, key_command: Path) -> Path:
    """A models.json as a pi user writes it: a provider per API, the key from a command."""
    providers = {
        f"replay-{api}": {
            "baseUrl": base_url,
            "api": api,
            "apiKey": f"!cat {key_command}",
            "models": [{"id": MODELS[api], "cost": {"input": 1, "output": 2}}],
        }
        for api in APIS
    }
    path.write_text(json.dumps({"providers": providers}, indent=2), encoding="utf-8")
    return path


async def test_serve_models_lists_the_catalog_and_streams_each_api(tmp_path: Path) -> None:
    key_file = tmp_path / "key"
    key_file.write_text(SECRET + "\n", encoding="utf-8")
    async with ReplayServer() as replay:
        catalog = models_json(tmp_path / "models.json", replay.base_url, key_file)
        with serve_process("--models", str(catalog)) as (process, target):
            async with ModelClient(target) as client:
                listed = await client.list_models()
                assert [(model.provider, model.id) for model in listed] == [
                    (f"replay-{api}", MODELS[api]) for api in APIS
                ]
                for api in APIS:
                    replay.reply(RECORDINGS / api / "text.http")
                    message = await client.stream(hi(), provider=f"replay-{api}", model=MODELS[api]).result()
                    assert message.stop_reason == pp.StopReason.STOP, message.error_message
                    assert message.api == api
                    assert pp.text_of(message)
                    usage = message.usage
                    assert usage is not None
                    assert usage.cost is not None
                    # A pi-messages backend prices its own calls (its recording at $3 and $15 per million).
                    rates = (3, 15) if api == "pi-messages" else (1, 2)
                    assert usage.cost.total == pytest.approx(
                        ((usage.input or 0) * rates[0] + (usage.output or 0) * rates[1]) / 1e6
                    )
                with pytest.raises(CallError) as unknown:
                    await client.get_model("no-such-model")
            process.terminate()
            _, stderr = process.communicate(timeout=60)
    assert unknown.value.status_code == "NOT_FOUND"
    assert "no-such-model" in unknown.value.detail
    # Each API sends the key in its own header: Bearer, Anthropic's, Gemini's or Azure's.
    key_headers = ("authorization", "x-api-key", "x-goog-api-key", "api-key")
    assert all(
        any(request.headers.get(name, "").endswith(SECRET) for name in key_headers) for request in replay.requests
    )
    assert "serving replay-" in stderr
    assert SECRET not in stderr


async def test_a_key_the_provider_echoes_in_an_error_never_reaches_the_client(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PI_PROTO_TEST_KEY", SECRET)  # the server process inherits it
    async with ReplayServer() as replay:
        replay.reply(RECORDINGS / "anthropic-messages" / "error-401.http")
        catalog = tmp_path / "models.json"
        catalog.write_text(
            json.dumps(
                {
                    "providers": {
                        "anthropic": {
                            "baseUrl": replay.base_url,
                            "api": "anthropic-messages",
                            "apiKey": "PI_PROTO_TEST_KEY",
                            "models": [{"id": "claude-sonnet-4-5"}],
                        }
                    }
                }
            ),
            encoding="utf-8",
        )
        with serve_process("--models", str(catalog)) as (process, target):
            async with ModelClient(target) as client:
                events = [bytes(event) async for event in client.stream(hi())]
            process.terminate()
            _, stderr = process.communicate(timeout=60)
    assert not any(SECRET.encode() in event for event in events)
    assert b"invalid x-api-key: ***" in events[-1]
    assert SECRET not in stderr


def test_serve_without_models_still_plays_the_script_with_no_key() -> None:
    with serve_process() as (process, _target):
        assert process.poll() is None


def test_a_bad_catalog_stops_serve_with_its_reason(tmp_path: Path) -> None:
    catalog = tmp_path / "models.json"
    catalog.write_text('{"providers": {}}', encoding="utf-8")
    with pytest.raises(AssertionError, match="no models"), serve_process("--models", str(catalog)):
        pass


async def test_pi_1_6s_model_fields_are_served_and_shape_the_call(tmp_path: Path) -> None:
    model = {
        "id": "gpt-5.4",
        "reasoning": True,
        "thinkingLevelMap": {"off": "none", "minimal": None, "xhigh": "xhigh"},
        "promptCache": {"short": 300, "long": 86400},
        "samplingParams": {"top_p": 0.9},
        "cost": {"input": 1, "output": 2, "tiers": [{"inputTokensAbove": 10, "input": 4, "output": 8}]},
    }
    async with ReplayServer() as replay:
        provider = {"baseUrl": replay.base_url, "api": "openai-completions", "apiKey": "k", "models": [model]}
        catalog = tmp_path / "models.json"
        catalog.write_text(json.dumps({"providers": {"openai": provider}}), encoding="utf-8")
        with serve_process("--models", str(catalog)) as (process, target):
            async with ModelClient(target) as client:
                (listed,) = await client.list_models()
                replay.reply(RECORDINGS / "openai-completions" / "text.http")
                options = pp.GenerationOptions(reasoning=pp.ThinkingLevel.MAX)
                message = await client.stream(hi(), model="gpt-5.4", options=options).result()
            process.terminate()
            process.communicate(timeout=60)
    assert listed.thinking_level_map == level_map({"off": "none", "minimal": None, "xhigh": "xhigh"})
    assert listed.prompt_cache == pp.ModelPromptCache(short=300, long=86400)
    assert listed.sampling_params_json == '{"top_p":0.9}'
    assert listed.cost is not None
    assert listed.cost.tiers == [pp.ModelCostTier(input=4, output=8, input_tokens_above=10)]
    sent = replay.requests[0].body
    assert (sent["reasoning_effort"], sent["top_p"]) == ("xhigh", 0.9)  # max, clamped to the map's xhigh
    # 25 prompt tokens, above the tier's 10: its rates, not the base ones.
    assert message.usage is not None
    assert message.usage.cost is not None
    assert message.usage.cost.total == pytest.approx((25 * 4 + 15 * 8) / 1e6)
