"""pi's models.json: providers with their base URL, API, key, headers and compatibility switches,
and the models each serves; read into the models `pi-proto serve --models FILE` serves.

The format is pi's own (packages/coding-agent/docs/models.md in pi-mono), so a pi user's file
works as it is. `apiKey` and header values are resolved as pi resolves them: `!command` runs the
command and takes its output, a name of a set environment variable takes its value, anything else
is used as written. Resolved secrets stay on the server: they are never logged, never put in an
error, and never part of what ListModels shows.

`timeoutMs`, on a model or its provider, is pi's request option of that name made a setting of the
model: how long its provider may be silent before the call ends (http.py has the defaults).
"""

from __future__ import annotations

import json
import math
import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._gen.types.pi.ai.v1 import InputKind, Model, ModelCost
from ..files import read_regular_file

APIS = ("openai-completions", "openai-responses", "anthropic-messages", "google-generative-ai", "pi-messages")
# What pi assumes for a model that leaves these out (models.md, "Model Configuration").
DEFAULT_CONTEXT_WINDOW = 128_000
DEFAULT_MAX_TOKENS = 16_384
MAX_CATALOG_BYTES = 16 * 1024 * 1024  # a models.json; pi's own, with every model it knows, is some hundred KiB
_INPUTS = {"text": InputKind.TEXT, "image": InputKind.IMAGE}


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

    def secrets(self) -> list[str]:
        """The key and header values, which no error may show (shorter than 4 characters: not secrets)."""
        return [secret for secret in (self.api_key, *self.headers.values()) if len(secret) >= 4]

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
    return models


def _model(provider_name: str, provider: dict[str, Any], entry: Any, where: str) -> ModelConfig:
    if not isinstance(entry, dict) or not isinstance(entry.get("id"), str) or not entry["id"]:
        raise CatalogError(f'{where}: a model needs an "id"')
    api = entry.get("api", provider.get("api"))
    if api not in APIS:
        raise CatalogError(f"{where}.api: {api!r} is not one of {', '.join(APIS)}")
    base_url = entry.get("baseUrl", provider.get("baseUrl"))
    if not isinstance(base_url, str) or not base_url:
        raise CatalogError(f'{where}: no "baseUrl" for the model or its provider')
    cost = entry.get("cost", {})
    try:
        prices = {key: float(cost.get(key, 0)) for key in ("input", "output", "cacheRead", "cacheWrite")}
        info = Model(
            id=entry["id"],
            name=str(entry.get("name", entry["id"])),
            api=api,
            provider=provider_name,
            base_url=base_url,
            reasoning=bool(entry.get("reasoning", False)),
            input=[_INPUTS[kind] for kind in entry.get("input", ["text"])],
            cost=ModelCost(
                input=prices["input"],
                output=prices["output"],
                cache_read=prices["cacheRead"],
                cache_write=prices["cacheWrite"],
            ),
            context_window=int(entry.get("contextWindow", DEFAULT_CONTEXT_WINDOW)),
            max_tokens=int(entry.get("maxTokens", DEFAULT_MAX_TOKENS)),
        )
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise CatalogError(f"{where}: {type(error).__name__}: {error}") from None
    for key, price in prices.items():
        # Prices per million tokens: a negative or infinite one would make every call's cost nonsense.
        if not math.isfinite(price) or price < 0:
            raise CatalogError(
                f"{where}.cost.{key}: {json.dumps(cost[key])} is not a price: expected a finite number, at least 0"
            )
    headers = {**provider.get("headers", {}), **entry.get("headers", {})}
    provider_where = where.rsplit(".models", 1)[0]
    if "apiKey" not in provider:  # pi requires it too; servers that ignore it take any value
        raise CatalogError(f'{provider_where}: no "apiKey" (a literal, an environment variable\'s name, or !command)')
    return ModelConfig(
        info=info,
        api_key=resolve(provider["apiKey"], f"{provider_where}.apiKey"),
        headers={key: resolve(value, f"{where}.headers.{key}") for key, value in headers.items()},
        compat={**provider.get("compat", {}), **entry.get("compat", {})},
        auth_header=bool(provider.get("authHeader", False)),
        timeout_ms=_timeout_ms(entry, provider, where, provider_where),
    )


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
