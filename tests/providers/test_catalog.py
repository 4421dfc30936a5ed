"""pi's models.json read into served models: defaults, value resolution, and clear errors."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

import pi_proto as pp
from pi_proto.models.providers import CatalogError, load_models
from pi_proto.models.providers.catalog import ModelConfig, load_catalog

from .expect import Expected
from .harness import final_message, level_map, play, provider_case


def write(tmp_path: Path, document: Any) -> Path:
    path = tmp_path / "models.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def test_pis_minimal_example_gets_pis_defaults(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        {
            "providers": {
                "ollama": {
                    "baseUrl": "http://localhost:11434/v1",
                    "api": "openai-completions",
                    "apiKey": "ollama",
                    "models": [{"id": "llama3.1:8b"}, {"id": "qwen2.5-coder:7b"}],
                }
            }
        },
    )
    first, second = load_catalog(path)
    assert first.info == pp.Model(
        id="llama3.1:8b",
        name="llama3.1:8b",
        api="openai-completions",
        provider="ollama",
        base_url="http://localhost:11434/v1",
        reasoning=False,
        input=[pp.InputKind.TEXT],
        cost=pp.ModelCost(),
        context_window=128_000,
        max_tokens=16_384,
    )
    assert first.api_key == "ollama"
    assert second.info.id == "qwen2.5-coder:7b"


def test_model_fields_override_the_providers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROXY_KEY", "sk-from-the-environment")
    path = write(
        tmp_path,
        {
            "providers": {
                "proxy": {
                    "baseUrl": "https://proxy.example.com/v1",
                    "api": "anthropic-messages",
                    "apiKey": "PROXY_KEY",
                    "headers": {"x-team": "core", "x-secret": "!printf 'from a command'"},
                    "compat": {"supportsStore": False},
                    "models": [
                        {
                            "id": "claude-sonnet-4-5",
                            "name": "Sonnet via proxy",
                            "api": "openai-completions",
                            "baseUrl": "https://other.example.com/v1",
                            "reasoning": True,
                            "input": ["text", "image"],
                            "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75},
                            "contextWindow": 200000,
                            "maxTokens": 64000,
                            "headers": {"x-team": "models"},
                            "compat": {"maxTokensField": "max_tokens"},
                        }
                    ],
                }
            }
        },
    )
    (model,) = load_catalog(path)
    assert model.info.api == "openai-completions"
    assert model.info.base_url == "https://other.example.com/v1"
    assert model.info.input == [pp.InputKind.TEXT, pp.InputKind.IMAGE]
    assert model.info.cost == pp.ModelCost(input=3, output=15, cache_read=0.3, cache_write=3.75)
    assert model.api_key == "sk-from-the-environment"
    assert dict(model.headers) == {"x-team": "models", "x-secret": "from a command"}
    assert dict(model.compat) == {"supportsStore": False, "maxTokensField": "max_tokens"}


def test_secrets_are_not_in_the_models_repr_and_are_scrubbed_from_errors(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        {
            "providers": {
                "p": {
                    "baseUrl": "http://x",
                    "api": "openai-responses",
                    "apiKey": "sk-literal-secret",
                    "headers": {"x-key": "header-secret"},
                    "models": [{"id": "m"}],
                }
            }
        },
    )
    (model,) = load_catalog(path)
    assert "secret" not in repr(model)
    assert model.scrub("bad key sk-literal-secret, header header-secret") == "bad key ***, header ***"


def test_timeout_ms_is_the_models_or_its_providers(tmp_path: Path) -> None:
    provider = {
        "apiKey": "k",
        "baseUrl": "u",
        "api": "openai-completions",
        "timeoutMs": 300000,
        "models": [{"id": "slow"}, {"id": "quick", "timeoutMs": 2500}],
    }
    path = write(tmp_path, {"providers": {"local": provider, "other": {**provider, "timeoutMs": None}}})
    with pytest.raises(CatalogError, match=r"providers\.other\.timeoutMs: null is not a timeout"):
        load_catalog(path)
    del provider["timeoutMs"]
    path = write(tmp_path, {"providers": {"local": provider}})
    assert [model.timeout_ms for model in load_catalog(path)] == [None, 2500.0]
    provider["timeoutMs"] = 300000
    path = write(tmp_path, {"providers": {"local": provider}})
    assert [model.timeout_ms for model in load_catalog(path)] == [300000.0, 2500.0]


def catalog_of(tmp_path: Path, **fields: Any) -> Path:
    """A models.json of one model, `m` of provider `p`, with `fields`."""
    provider = {"apiKey": "k", "baseUrl": "u", "api": "openai-responses", "models": [{"id": "m", **fields}]}
    return write(tmp_path, {"providers": {"p": provider}})


def test_pi_1_6s_model_fields_are_read_into_the_model(tmp_path: Path) -> None:
    path = catalog_of(
        tmp_path,
        reasoning=True,
        thinkingLevelMap={"off": "none", "minimal": None, "xhigh": "xhigh", "turbo": "x"},  # pi ignores other keys
        promptCache={"short": 300, "long": 86400},
        inputLimits={
            "maxRequestBytes": 52428800,
            "images": {
                "resize": {"maxWidth": 2048, "maxHeight": 2048.0, "maxBytes": 5242880, "jpegQuality": 85},
                "maxPerMessage": 20,
            },
        },
        samplingParams={"top_p": 0.95, "top_k": 40, "chat_template_kwargs": {"mode": "é"}},
        cost={
            "input": 1.75,
            "output": 14,
            "tiers": [{"inputTokensAbove": 272000, "input": 3.5, "output": 21, "cacheRead": 0.35}],
        },
    )
    (model,) = load_catalog(path)
    info = model.info
    assert info.thinking_level_map == level_map({"off": "none", "minimal": None, "xhigh": "xhigh"})  # pi's order
    assert info.prompt_cache == pp.ModelPromptCache(short=300, long=86400)
    assert info.input_limits == pp.ModelInputLimits(
        max_request_bytes=52428800,
        images=pp.ModelImageInputLimits(
            resize=pp.ModelImageResize(max_width=2048, max_height=2048, max_bytes=5242880, jpeg_quality=85),
            max_per_message=20,
        ),
    )
    assert info.sampling_params_json == '{"top_p":0.95,"top_k":40,"chat_template_kwargs":{"mode":"é"}}'
    assert info.cost == pp.ModelCost(
        input=1.75,
        output=14,
        tiers=[pp.ModelCostTier(input=3.5, output=21, cache_read=0.35, input_tokens_above=272000)],
    )
    assert pp.violations(info) == []  # what the catalog reads, the schema's rules accept


def test_a_model_without_them_leaves_them_absent(tmp_path: Path) -> None:
    (model,) = load_catalog(catalog_of(tmp_path, samplingParams={}, thinkingLevelMap={}))
    info = model.info
    assert (info.thinking_level_map, info.prompt_cache, info.input_limits, info.sampling_params_json) == (
        [],
        None,
        None,
        "",
    )


async def test_cost_tiers_price_a_recorded_call_whose_prompt_exceeds_them(tmp_path: Path) -> None:
    tiers = [
        {"inputTokensAbove": 1000, "input": 2, "output": 16, "cacheRead": 0.2},
        {"inputTokensAbove": 20000, "input": 3.5, "output": 28, "cacheRead": 0.35},  # 24,012 tokens: this one
        {"inputTokensAbove": 200000, "input": 7, "output": 56, "cacheRead": 0.7},
    ]
    path = catalog_of(tmp_path, cost={"input": 1.75, "output": 14, "cacheRead": 0.175, "tiers": tiers})
    (model,) = load_catalog(path)
    events, _ = await play(provider_case("openai-responses", "cache-usage"), model.info)
    # 12 input, 24,000 cache read and 9 output tokens, at the second tier's rates.
    at_tier = Expected(pp.Model(id="m", provider="p", cost=pp.ModelCost(input=3.5, output=28, cache_read=0.35)))
    assert final_message(events).usage == at_tier.usage(12, 9, 24000, reasoning=0)


def test_the_same_model_id_under_two_providers_is_fine(tmp_path: Path) -> None:
    # A request tells them apart by naming the provider; only one provider listing an id twice is refused.
    provider = {"apiKey": "k", "baseUrl": "u", "api": "openai-completions", "models": [{"id": "m"}]}
    path = write(tmp_path, {"providers": {"a": provider, "b": provider}})
    assert [(model.info.provider, model.info.id) for model in load_catalog(path)] == [("a", "m"), ("b", "m")]


def test_providers_without_models_only_adjust_pis_built_ins_and_are_skipped(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        {
            "providers": {
                "anthropic": {"baseUrl": "https://my-proxy.example.com/v1"},
                "local": {
                    "baseUrl": "http://l/v1",
                    "api": "openai-completions",
                    "apiKey": "k",
                    "models": [{"id": "a"}],
                },
            }
        },
    )
    assert [model.info.provider for model in load_catalog(path)] == ["local"]


def test_vertex_may_go_without_a_key_and_azure_without_a_base_url_the_environment_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AZURE_OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("AZURE_OPENAI_RESOURCE_NAME", "contoso")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws-secret-from-the-environment")
    path = write(
        tmp_path,
        {
            "providers": {
                "google-vertex": {
                    "api": "google-vertex",
                    "baseUrl": "https://{location}-aiplatform.googleapis.com",
                    "models": [{"id": "gemini-2.5-flash"}],
                },
                "azure": {"api": "azure-openai-responses", "apiKey": "k", "models": [{"id": "gpt-5.2"}]},
            }
        },
    )
    vertex, azure = load_catalog(path)
    assert vertex.api_key == ""  # signs in with application default credentials
    assert azure.info.base_url == "https://contoso.openai.azure.com/openai/v1"
    # A secret setting of the environment is scrubbed like the key.
    assert azure.scrub("key aws-secret-from-the-environment") == "key ***"
    monkeypatch.delenv("AZURE_OPENAI_RESOURCE_NAME")
    with pytest.raises(
        CatalogError, match=r'providers\.azure\.models\[0\]: no "baseUrl" for the model or its provider'
    ):
        load_catalog(path)


def test_a_models_environment_comes_before_the_process_s(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "europe-west4")
    model = ModelConfig(info=pp.Model(id="m"), api_key="", environment={"GOOGLE_CLOUD_PROJECT": "p"})
    assert (model.setting("GOOGLE_CLOUD_PROJECT"), model.setting("GOOGLE_CLOUD_LOCATION")) == ("p", "europe-west4")
    assert (
        ModelConfig(info=pp.Model(id="m"), api_key="", environment={"GOOGLE_CLOUD_LOCATION": ""}).setting(
            "GOOGLE_CLOUD_LOCATION"
        )
        == "europe-west4"
    )  # an empty value counts as unset, as in pi


@pytest.mark.parametrize(
    ("document", "error"),
    [
        ("not json", "cannot read models.json"),
        ([], 'expected an object with a "providers" object'),
        ({"providers": {}}, "no models (pi's built-in models are not served"),
        (
            {"providers": {"p": {"apiKey": "k", "baseUrl": "u", "models": [{}]}}},
            'providers.p.models[0]: a model needs an "id"',
        ),
        (
            {"providers": {"p": {"apiKey": "k", "baseUrl": "u", "api": "bedrock", "models": [{"id": "m"}]}}},
            "providers.p.models[0].api: 'bedrock' is not one of",
        ),
        (
            {"providers": {"p": {"apiKey": "k", "api": "openai-completions", "models": [{"id": "m"}]}}},
            'providers.p.models[0]: no "baseUrl"',
        ),
        (
            {"providers": {"p": {"baseUrl": "u", "api": "openai-completions", "models": [{"id": "m"}]}}},
            'providers.p: no "apiKey"',
        ),
        (
            {
                "providers": {
                    "p": {
                        "apiKey": "k",
                        "baseUrl": "u",
                        "api": "openai-completions",
                        "models": [{"id": "m", "input": ["audio"]}],
                    }
                }
            },
            "providers.p.models[0]: KeyError: 'audio'",
        ),
        (
            {
                "providers": {
                    "p": {"apiKey": "!exit 3", "baseUrl": "u", "api": "openai-completions", "models": [{"id": "m"}]}
                }
            },
            "providers.p.apiKey: the command failed with exit code 3",
        ),
        (
            {
                "providers": {
                    "p": {
                        "apiKey": "k",
                        "baseUrl": "u",
                        "api": "openai-completions",
                        "models": [{"id": "m"}, {"id": "other"}, {"id": "m", "name": "again"}],
                    }
                }
            },
            "providers.p.models[2]: provider 'p' already has a model 'm' (models[0])",
        ),
        (
            {
                "providers": {
                    "p": {
                        "apiKey": "k",
                        "baseUrl": "u",
                        "api": "openai-completions",
                        "models": [{"id": "m", "cost": {"input": 3, "cacheWrite": -1}}],
                    }
                }
            },
            "providers.p.models[0].cost.cacheWrite: -1 is not a price: expected a finite number, at least 0",
        ),
        (
            '{"providers": {"p": {"apiKey": "k", "baseUrl": "u", "api": "openai-completions",'
            ' "models": [{"id": "m", "cost": {"output": Infinity}}]}}}',
            "providers.p.models[0].cost.output: Infinity is not a price",
        ),
        (
            '{"providers": {"p": {"apiKey": "k", "baseUrl": "u", "api": "openai-completions",'
            ' "models": [{"id": "m", "cost": {"cacheRead": NaN}}]}}}',
            "providers.p.models[0].cost.cacheRead: NaN is not a price",
        ),
        *(
            (
                {
                    "providers": {
                        "p": {
                            "apiKey": "k",
                            "baseUrl": "u",
                            "api": "openai-completions",
                            "models": [{"id": "m", "timeoutMs": value}],
                        }
                    }
                },
                f"providers.p.models[0].timeoutMs: {shown} is not a timeout: expected milliseconds, a number above 0",
            )
            for value, shown in ((0, "0"), (-5, "-5"), ("60000", '"60000"'), (True, "true"))
        ),
        (
            '{"providers": {"p": {"apiKey": "k", "baseUrl": "u", "api": "openai-completions",'
            ' "models": [{"id": "m", "timeoutMs": Infinity}]}}}',
            "providers.p.models[0].timeoutMs: Infinity is not a timeout",
        ),
        *(
            (
                {
                    "providers": {
                        "p": {
                            "apiKey": "k",
                            "baseUrl": "u",
                            "api": "openai-completions",
                            "models": [{"id": "m", **fields}],
                        }
                    }
                },
                error,
            )
            for fields, error in (
                ({"cost": {"input": "3"}}, 'providers.p.models[0].cost.input: "3" is not a price'),
                ({"cost": None}, "providers.p.models[0].cost: expected an object, not null"),
                ({"cost": {"tiers": {}}}, "providers.p.models[0].cost.tiers: expected an array of tiers"),
                (
                    {"cost": {"tiers": [{"input": 1}]}},
                    'providers.p.models[0].cost.tiers[0]: a tier needs "inputTokensAbove"',
                ),
                (
                    {"cost": {"tiers": [{"inputTokensAbove": 1000, "output": -2}]}},
                    "providers.p.models[0].cost.tiers[0].output: -2 is not a price",
                ),
                (
                    {"cost": {"tiers": [{"inputTokensAbove": 0.5}]}},
                    "providers.p.models[0].cost.tiers[0].inputTokensAbove: 0.5 is not a count: expected a whole number",
                ),
                (
                    {"cost": {"tiers": [{"inputTokensAbove": n} for n in range(17)]}},
                    "providers.p.models[0].cost.tiers: 17 tiers; a model takes at most 16",
                ),
                (
                    {"thinkingLevelMap": {"high": 3}},
                    "providers.p.models[0].thinkingLevelMap.high: 3 is not a level's value: expected a string, or null",
                ),
                (
                    {"thinkingLevelMap": ["high"]},
                    "providers.p.models[0].thinkingLevelMap: expected an object, not an array",
                ),
                (
                    {"promptCache": {"short": 0}},
                    "providers.p.models[0].promptCache.short: 0 is not a lifetime: expected seconds, above 0",
                ),
                ({"promptCache": {"long": "1h"}}, 'providers.p.models[0].promptCache.long: "1h" is not a lifetime'),
                (
                    {"inputLimits": {"maxRequestBytes": 0}},
                    "providers.p.models[0].inputLimits.maxRequestBytes: 0 is not a count: expected a whole number, "
                    "at least 1",
                ),
                (
                    {"inputLimits": {"images": {"resize": {"jpegQuality": 101}}}},
                    "providers.p.models[0].inputLimits.images.resize.jpegQuality: 101 is not a count: "
                    "expected a whole number, at least 1 and at most 100",
                ),
                (
                    {"inputLimits": {"images": {"maxPerRequest": True}}},
                    "providers.p.models[0].inputLimits.images.maxPerRequest: true is not a count",
                ),
                ({"samplingParams": [0.9]}, "providers.p.models[0].samplingParams: expected an object, not an array"),
                (
                    {"samplingParams": {"x": "a" * 70000}},
                    "providers.p.models[0].samplingParams: 70008 bytes of JSON; a model takes at most 65536",
                ),
            )
        ),
        (
            '{"providers": {"p": {"apiKey": "k", "baseUrl": "u", "api": "openai-completions",'
            ' "models": [{"id": "m", "samplingParams": {"top_p": NaN}}]}}}',
            "providers.p.models[0].samplingParams: NaN and Infinity are not JSON values a provider takes",
        ),
    ],
)
def test_a_catalog_that_cannot_be_served_says_what_and_where(tmp_path: Path, document: Any, error: str) -> None:
    path = tmp_path / "models.json"
    path.write_text(document if isinstance(document, str) else json.dumps(document), encoding="utf-8")
    with pytest.raises(CatalogError) as caught:
        load_models(path)
    assert str(caught.value).startswith(f"{path}: ")
    assert error in str(caught.value)


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_models_json_that_is_not_a_regular_file_is_refused_without_waiting(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "models.json"
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
    with pytest.raises(CatalogError, match=r"models\.json: cannot read models\.json: not a regular file"):
        load_catalog(path)


@pytest.mark.parametrize("page", ["README.md", "docs/providers.md"])
def test_the_cloud_apis_models_json_of_the_docs_is_served_as_written(tmp_path: Path, page: str) -> None:
    text = (Path(__file__).parents[2] / page).read_text(encoding="utf-8")
    blocks = re.findall(r"```json\n(.*?)```", text, re.S)
    cloud = next(block for block in blocks if "bedrock-converse-stream" in block)
    apis = [model.info.api for model in load_catalog(write(tmp_path, json.loads(cloud)))]
    assert apis == ["azure-openai-responses", "google-vertex", "mistral-conversations", "bedrock-converse-stream"]
