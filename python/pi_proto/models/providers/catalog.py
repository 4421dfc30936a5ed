"""pi's models.json: providers with their base URL, API, key, headers and compatibility switches,
and the models each serves; read into the models `pi-proto serve --models FILE` serves.

The format is pi's own (packages/coding-agent/docs/models.md in pi-mono), so a pi user's file
works as it is. `apiKey` and header values are resolved as pi resolves them: `!command` runs the
command and takes its output, a name of a set environment variable takes its value, anything else
is used as written. Resolved secrets stay on the server: they are never logged, never put in an
error, and never part of what ListModels shows.

`timeoutMs`, on a model or its provider, is pi's request option of that name made a setting of the
model: how long its provider may be silent before the call ends (http.py has the defaults).

The model fields pi 1.6 added are read into `Model` as pi's schema (providers/model-schema.js)
types them: `thinkingLevelMap` (each level's provider value, null for unsupported),
`promptCache`, `inputLimits`, `samplingParams` and the prompt-size tiers of `cost`. A value pi's
schema refuses is refused here, naming its path.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..._gen.types.pi.ai.v1 import (
    InputKind,
    Model,
    ModelCost,
    ModelCostTier,
    ModelImageInputLimits,
    ModelImageResize,
    ModelInputLimits,
    ModelPromptCache,
    ThinkingLevelMapping,
)
from ...transcripts.pi_json import THINKING_LEVELS
from ...wire.files import read_regular_file

APIS = (
    "openai-completions",
    "openai-responses",
    "azure-openai-responses",
    "anthropic-messages",
    "google-generative-ai",
    "google-vertex",
    "mistral-conversations",
    "bedrock-converse-stream",
    "pi-messages",
)
# The APIs that may go without an apiKey, as in pi: Vertex then signs in with application default
# credentials, Bedrock with the AWS credential chain (profile, access keys, bearer token, roles).
KEYLESS_APIS = ("google-vertex", "bedrock-converse-stream")
# Settings read from the environment (ModelConfig.setting) whose values are secrets: never shown.
SECRET_SETTINGS = ("AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK")
# What pi assumes for a model that leaves these out (models.md, "Model Configuration").
DEFAULT_CONTEXT_WINDOW = 128_000
DEFAULT_MAX_TOKENS = 16_384
MAX_CATALOG_BYTES = 16 * 1024 * 1024  # a models.json; pi's own, with every model it knows, is some hundred KiB
_INPUTS = {"text": InputKind.TEXT, "image": InputKind.IMAGE}
_PRICES = {"input": "input", "output": "output", "cacheRead": "cache_read", "cacheWrite": "cache_write"}
MAX_COST_TIERS = 16  # what Model.cost.tiers holds
MAX_SAMPLING_PARAMS_BYTES = 65_536  # what Model.sampling_params_json holds


class CatalogError(ValueError):
    """A models.json that cannot be served, naming the file and the entry."""


@dataclass(frozen=True)
class ModelConfig:
    """One served model: what clients see (`info`), and what reaches its provider."""

    info: Model
    api_key: str = field(repr=False)  # resolved; never shown
    headers: Mapping[str, str] = field(repr=False, default_factory=dict)
    compat: Mapping[str, Any] = field(default_factory=dict)
    auth_header: bool = False  # also send `Authorization: Bearer <key>`
    timeout_ms: float | None = None  # models.json's timeoutMs: the longest the provider may be silent
    # Settings taken before the process environment, as pi's `env` option: an API's deployment
    # names, cloud project and region, credentials (see each provider module).
    environment: Mapping[str, str] = field(repr=False, default_factory=dict)
    # models.json's `fallbacks`: the models (`provider/id`) a call falls back to, in order.
    fallbacks: tuple[str, ...] = ()

    def setting(self, name: str) -> str | None:
        """The environment setting `name`, as pi's getProviderEnvValue reads it: the model's own,
        else the process's; an empty value counts as unset."""
        return self.environment.get(name) or os.environ.get(name) or None

    def secrets(self) -> list[str]:
        """The key, header values and secret settings, which no error may show (shorter than 4
        characters: not secrets)."""
        settings = (self.setting(name) or "" for name in SECRET_SETTINGS)
        return [secret for secret in (self.api_key, *self.headers.values(), *settings) if len(secret) >= 4]

    def scrub(self, text: str) -> str:
        """`text` with every secret of this model replaced, for errors that leave the server."""
        for secret in self.secrets():
            text = text.replace(secret, "***")
        return text


def load_catalog(path: Path) -> list[ModelConfig]:
    """Every model of a models.json, in file order; raises CatalogError naming what is wrong."""
    try:
        document = json.loads(read_regular_file(path, MAX_CATALOG_BYTES))
    except ValueError as error:  # the file's, UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise CatalogError(f"{path}: cannot read models.json: {error}") from None
    providers = document.get("providers") if isinstance(document, dict) else None
    if not isinstance(providers, dict):
        raise CatalogError(f'{path}: expected an object with a "providers" object')
    models: list[ModelConfig] = []
    for name, provider in providers.items():
        where = f"{path}: providers.{name}"
        if not isinstance(provider, dict):
            raise CatalogError(f"{where}: expected an object")
        # A provider without "models" only adjusts pi's built-in models, which are not served here.
        # A request names a model by provider and id, so of two alike one could never be reached
        # (pi keeps the last silently): refused, with the index of each.
        first_of: dict[str, int] = {}
        for index, entry in enumerate(provider.get("models", [])):
            model = _model(name, provider, entry, f"{where}.models[{index}]")
            first = first_of.setdefault(model.info.id, index)
            if first != index:
                raise CatalogError(
                    f"{where}.models[{index}]: provider {name!r} already has a model {model.info.id!r} "
                    f"(models[{first}]); give each model of a provider its own id"
                )
            models.append(model)
    if not models:
        raise CatalogError(f'{path}: no models (pi\'s built-in models are not served; list each model under "models")')
    return _linked(models, path)


def _linked(models: list[ModelConfig], path: Path) -> list[ModelConfig]:
    """The models with their fallbacks named as `provider/id`: each a served model other than
    itself, written `provider/id`, or as a bare id that one provider serves."""
    served = {f"{model.info.provider}/{model.info.id}" for model in models}
    out = []
    for model in models:
        named = []
        for index, given in enumerate(model.fallbacks):
            where = f"{path}: providers.{model.info.provider}, model {model.info.id!r}: fallbacks[{index}]"
            matches = [name for name in served if name == given or name.split("/", 1)[1] == given]
            if given in served:
                matches = [given]
            if len(matches) != 1:
                found = "serves no model of that name" if not matches else f"is ambiguous: {', '.join(sorted(matches))}"
                raise CatalogError(f"{where}: {given!r} {found}; name a served model as provider/id")
            if matches[0] == f"{model.info.provider}/{model.info.id}":
                raise CatalogError(f"{where}: a model cannot fall back to itself")
            named.append(matches[0])
        out.append(dataclasses.replace(model, fallbacks=tuple(named)))
    return out


def _model(provider_name: str, provider: dict[str, Any], entry: Any, where: str) -> ModelConfig:
    if not isinstance(entry, dict) or not isinstance(entry.get("id"), str) or not entry["id"]:
        raise CatalogError(f'{where}: a model needs an "id"')
    api = entry.get("api", provider.get("api"))
    if api not in APIS:
        raise CatalogError(f"{where}.api: {api!r} is not one of {', '.join(APIS)}")
    base_url = entry.get("baseUrl", provider.get("baseUrl"))
    if base_url is None and api == "azure-openai-responses":
        base_url = _azure_base_url()  # pi's Azure models name their endpoint by the environment
    if not isinstance(base_url, str) or not base_url:
        raise CatalogError(f'{where}: no "baseUrl" for the model or its provider')
    cost = _cost(entry.get("cost", {}), f"{where}.cost")
    try:
        info = Model(
            id=entry["id"],
            name=str(entry.get("name", entry["id"])),
            api=api,
            provider=provider_name,
            base_url=base_url,
            reasoning=bool(entry.get("reasoning", False)),
            input=[_INPUTS[kind] for kind in entry.get("input", ["text"])],
            cost=cost,
            context_window=int(entry.get("contextWindow", DEFAULT_CONTEXT_WINDOW)),
            max_tokens=int(entry.get("maxTokens", DEFAULT_MAX_TOKENS)),
        )
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise CatalogError(f"{where}: {type(error).__name__}: {error}") from None
    _read_pi_16_fields(info, entry, where)
    headers = {**provider.get("headers", {}), **entry.get("headers", {})}
    provider_where = where.rsplit(".models", 1)[0]
    if (
        "apiKey" not in provider and api not in KEYLESS_APIS
    ):  # pi requires it too; servers that ignore it take any value
        raise CatalogError(f'{provider_where}: no "apiKey" (a literal, an environment variable\'s name, or !command)')
    return ModelConfig(
        info=info,
        api_key=resolve(provider["apiKey"], f"{provider_where}.apiKey") if "apiKey" in provider else "",
        headers={key: resolve(value, f"{where}.headers.{key}") for key, value in headers.items()},
        compat={**provider.get("compat", {}), **entry.get("compat", {})},
        auth_header=bool(provider.get("authHeader", False)),
        timeout_ms=_timeout_ms(entry, provider, where, provider_where),
        fallbacks=_fallbacks(entry.get("fallbacks", provider.get("fallbacks", [])), f"{where}.fallbacks"),
    )


def _fallbacks(value: Any, at: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(name, str) and name for name in value):
        raise CatalogError(f"{at}: expected a list of model names (provider/id)")
    return tuple(value)


def _azure_base_url() -> str | None:
    """The Azure endpoint the environment names, as pi reads it: AZURE_OPENAI_BASE_URL, else the
    resource AZURE_OPENAI_RESOURCE_NAME's."""
    if base_url := os.environ.get("AZURE_OPENAI_BASE_URL", "").strip():
        return base_url
    resource = os.environ.get("AZURE_OPENAI_RESOURCE_NAME")
    return f"https://{resource}.openai.azure.com/openai/v1" if resource else None


def _cost(value: Any, at: str) -> ModelCost:
    """The model's rates per million tokens (each 0 where left out), and its prompt-size tiers."""
    rates = _object(value, at)
    cost = ModelCost()
    _set_prices(cost, rates, at)
    if "tiers" in rates:
        cost.tiers = _tiers(rates["tiers"], f"{at}.tiers")
    return cost


def _tiers(value: Any, at: str) -> list[ModelCostTier]:
    """pi's cost tiers: each the rates for prompts above `inputTokensAbove` tokens."""
    if not isinstance(value, list):
        raise CatalogError(f"{at}: expected an array of tiers")
    if len(value) > MAX_COST_TIERS:
        raise CatalogError(f"{at}: {len(value)} tiers; a model takes at most {MAX_COST_TIERS}")
    tiers = []
    for index, entry in enumerate(value):
        here = f"{at}[{index}]"
        tier = _object(entry, here)
        if "inputTokensAbove" not in tier:
            raise CatalogError(f'{here}: a tier needs "inputTokensAbove", the prompt size above which it applies')
        rates = ModelCostTier(
            input_tokens_above=_whole(tier["inputTokensAbove"], f"{here}.inputTokensAbove", minimum=0)
        )
        _set_prices(rates, tier, here)
        tiers.append(rates)
    return tiers


def _set_prices(rates: ModelCost | ModelCostTier, given: dict[str, Any], at: str) -> None:
    for key, name in _PRICES.items():
        setattr(rates, name, _price(given, key, at))


def _price(rates: dict[str, Any], key: str, at: str) -> float:
    """A rate per million tokens; a negative or infinite one would make every call's cost nonsense."""
    value = rates.get(key, 0)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        raise CatalogError(f"{at}.{key}: {json.dumps(value)} is not a price: expected a finite number, at least 0")
    return float(value)


def _read_pi_16_fields(info: Model, entry: dict[str, Any], where: str) -> None:
    """The model fields pi 1.6 added, on `info` where models.json gives them."""
    if "thinkingLevelMap" in entry:
        info.thinking_level_map = _thinking_level_map(entry["thinkingLevelMap"], f"{where}.thinkingLevelMap")
    if "promptCache" in entry:
        info.prompt_cache = _prompt_cache(entry["promptCache"], f"{where}.promptCache")
    if "inputLimits" in entry:
        info.input_limits = _input_limits(entry["inputLimits"], f"{where}.inputLimits")
    if "samplingParams" in entry:
        info.sampling_params_json = _sampling_params(entry["samplingParams"], f"{where}.samplingParams")


def _thinking_level_map(value: Any, at: str) -> list[ThinkingLevelMapping]:
    """pi's thinkingLevelMap, in pi's order of levels: a string is the provider's value for the
    level, null marks it unsupported. Other keys are left alone, as pi's open schema allows them."""
    levels = _object(value, at)
    mapping = []
    for name, level in THINKING_LEVELS.items():
        if name not in levels:
            continue
        given = levels[name]
        if given is not None and not isinstance(given, str):
            raise CatalogError(
                f"{at}.{name}: {json.dumps(given)} is not a level's value: "
                "expected a string, or null for a level the model does not support"
            )
        mapping.append(ThinkingLevelMapping(level=level, value=given))
    return mapping


def _prompt_cache(value: Any, at: str) -> ModelPromptCache:
    """How long the provider keeps a cached prompt, in seconds, for each retention tier it gives."""
    lifetimes = _object(value, at)
    cache = ModelPromptCache()
    for key in ("short", "long"):
        if key not in lifetimes:
            continue
        seconds = lifetimes[key]
        if (
            isinstance(seconds, bool)
            or not isinstance(seconds, int | float)
            or not math.isfinite(seconds)
            or seconds <= 0
        ):
            raise CatalogError(f"{at}.{key}: {json.dumps(seconds)} is not a lifetime: expected seconds, above 0")
        setattr(cache, key, float(seconds))
    return cache


def _input_limits(value: Any, at: str) -> ModelInputLimits:
    limits = _object(value, at)
    out = ModelInputLimits(max_request_bytes=_optional_whole(limits, "maxRequestBytes", at, minimum=1))
    if "images" in limits:
        out.images = _image_limits(limits["images"], f"{at}.images")
    return out


def _image_limits(value: Any, at: str) -> ModelImageInputLimits:
    limits = _object(value, at)
    out = ModelImageInputLimits(
        max_per_message=_optional_whole(limits, "maxPerMessage", at, minimum=1),
        max_per_request=_optional_whole(limits, "maxPerRequest", at, minimum=1),
    )
    if "resize" in limits:
        resize = _object(limits["resize"], f"{at}.resize")
        here = f"{at}.resize"
        out.resize = ModelImageResize(
            max_width=_optional_whole(resize, "maxWidth", here, minimum=1),
            max_height=_optional_whole(resize, "maxHeight", here, minimum=1),
            max_bytes=_optional_whole(resize, "maxBytes", here, minimum=1),
            jpeg_quality=_optional_whole(resize, "jpegQuality", here, minimum=1, maximum=100),
        )
    return out


def _sampling_params(value: Any, at: str) -> str:
    """The model's default sampling parameters as the text of their JSON object ("" for none)."""
    params = _object(value, at)
    try:
        text = json.dumps(params, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except ValueError:
        raise CatalogError(f"{at}: NaN and Infinity are not JSON values a provider takes") from None
    if len(text.encode()) > MAX_SAMPLING_PARAMS_BYTES:
        raise CatalogError(
            f"{at}: {len(text.encode())} bytes of JSON; a model takes at most {MAX_SAMPLING_PARAMS_BYTES}"
        )
    return text if params else ""


def _object(value: Any, at: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise CatalogError(f"{at}: expected an object, not {_kind(value)}")
    return value


def _kind(value: Any) -> str:
    """What a JSON value is, in words."""
    if value is None:
        return "null"
    kinds = ((bool, "true or false"), (str, "a string"), (list, "an array"), (int | float, "a number"))
    return next(name for kind, name in kinds if isinstance(value, kind))


def _optional_whole(
    values: dict[str, Any], key: str, at: str, *, minimum: int, maximum: int | None = None
) -> int | None:
    return _whole(values[key], f"{at}.{key}", minimum=minimum, maximum=maximum) if key in values else None


def _whole(value: Any, at: str, *, minimum: int, maximum: int | None = None) -> int:
    """A whole number within bounds (JSON's 2.0 is one, as JSON Schema's integers count it)."""
    whole = (
        isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value == int(value)
    )
    if not whole or value < minimum or (maximum is not None and value > maximum):
        bounds = f"at least {minimum}" + (f" and at most {maximum}" if maximum is not None else "")
        raise CatalogError(f"{at}: {json.dumps(value)} is not a count: expected a whole number, {bounds}")
    return int(value)


def _timeout_ms(entry: dict[str, Any], provider: dict[str, Any], where: str, provider_where: str) -> float | None:
    """The model's timeoutMs, else its provider's: milliseconds, a finite number above 0."""
    if "timeoutMs" in entry:
        value, at = entry["timeoutMs"], f"{where}.timeoutMs"
    elif "timeoutMs" in provider:
        value, at = provider["timeoutMs"], f"{provider_where}.timeoutMs"
    else:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
        raise CatalogError(f"{at}: {json.dumps(value)} is not a timeout: expected milliseconds, a number above 0")
    return float(value)


def resolve(spec: Any, where: str) -> str:
    """A configured value as pi resolves it: `!command`, an environment variable's name, or itself."""
    if not isinstance(spec, str):
        raise CatalogError(f"{where}: expected a string")
    if spec.startswith("!"):
        try:
            done = subprocess.run(spec[1:], shell=True, capture_output=True, text=True, timeout=30, check=False)
        except subprocess.TimeoutExpired:
            raise CatalogError(f"{where}: the command took longer than 30 s") from None
        if done.returncode != 0:
            raise CatalogError(f"{where}: the command failed with exit code {done.returncode}")
        return done.stdout.strip()
    return os.environ.get(spec, spec)
