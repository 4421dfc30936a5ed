"""Real models behind ModelService: pi's provider APIs, configured by pi's models.json.

`load_models(path)` reads the catalog into `ProviderModel`s, which a `ModelServer` serves like any
other model: each call runs the provider's official SDK (or, for pi-messages, pi's own protocol
over HTTP) and streams pi's events from its answer. The SDKs come with the `providers` extra
(`pip install 'pi-proto[providers]'`).
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Protocol, cast

from opentelemetry import trace

from ..._gen.types.pi.ai.v1 import AgentContext, GenerationOptions, Model
from ...ir.messages import now_ms
from ...stream.accumulator import DEFAULT_MAX_MESSAGE_BYTES
from ...stream.event_stream import AssistantMessageEventStream
from ..telemetry import CallTrace
from .call import Call, Describe, TimedStream, clip, run
from .catalog import APIS, CatalogError, ModelConfig, load_catalog

__all__ = ["APIS", "CatalogError", "ModelConfig", "ProviderModel", "load_models"]


class ProviderApi(Protocol):
    """What a provider module offers: a stream for a call, and words for what it raised."""

    stream: Callable[[Call], Awaitable[None]]
    describe: Describe


def provider_api(api: str) -> ProviderApi:
    """The module that speaks `api`; raises CatalogError when its SDK is not installed."""
    try:
        module: ModuleType = importlib.import_module(f".{api.replace('-', '_')}", __name__)  # imported when first used
    except ModuleNotFoundError as error:
        raise CatalogError(f"the {api} API needs the {error.name} package: pip install 'pi-proto[providers]'") from None
    return cast(ProviderApi, module)


class ProviderModel:
    """A model of the catalog, served by calling its provider."""

    # A request may name other models of the catalog to fall back to (StreamRequest.fallback_models).
    falls_back = True

    def __init__(
        self,
        config: ModelConfig,
        *,
        clock: Callable[[], int] = now_ms,
        monotonic: Callable[[], float] = time.monotonic,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    ) -> None:
        self.config = config
        self.api = provider_api(config.info.api)
        self._clock = clock  # the start event's timestamp, in ms; tests pin it
        self._monotonic = monotonic  # in seconds, what each call's duration is measured by; tests pin it
        self.max_message_bytes = max_message_bytes  # each stream's size limit
        # The models a call falls back to, in order, when this one fails before it answers
        # (models.json's `fallbacks`; load_models links them).
        self.fallbacks: list[ProviderModel] = []

    @property
    def info(self) -> Model:
        return self.config.info

    def stream(
        self,
        context: AgentContext,
        options: GenerationOptions | None = None,
        *,
        fallbacks: Sequence[ProviderModel] = (),
    ) -> AssistantMessageEventStream:
        """One call; when it fails before it answers, `fallbacks` (a request's), then the
        catalog's, are tried in turn."""
        traced = CallTrace(self.config.info, options, self._monotonic)
        events = TimedStream(
            clock=self._clock, monotonic=self._monotonic, max_message_bytes=self.max_message_bytes, trace=traced
        )
        with trace.use_span(traced.span, end_on_exit=False):  # the provider's task runs within the span
            events.drive(self._answer(context, options, events, fallbacks))
        return events

    async def _answer(
        self,
        context: AgentContext,
        options: GenerationOptions | None,
        events: TimedStream,
        fallbacks: Sequence[ProviderModel],
    ) -> None:
        """This model's call, then each fallback's in turn while one fails before it answered
        with a failure the next may not share (a 429, a 5xx, a connection that failed); the last
        one's failure ends the stream, naming what the others said."""
        chain = list(dict.fromkeys([self, *fallbacks, *self.fallbacks]))  # each model once, in order
        failed: list[str] = []
        for model in chain:
            call = Call(model.config, context, options, events, self._clock)
            call.fallback = model is not self
            call.failed_before = failed
            words = await run(call, model.api.stream, model.api.describe, fall_back=model is not chain[-1])
            if words is None:
                return
            failed.append(f"{model.info.provider}/{model.info.id}: {clip(model.config.scrub(words))}")


def load_models(path: Path) -> list[ProviderModel]:
    """The models of a models.json, ready to serve, each linked to its fallbacks; raises
    CatalogError naming what is wrong."""
    models = [ProviderModel(config) for config in load_catalog(path)]
    by_name = {f"{model.info.provider}/{model.info.id}": model for model in models}
    for model in models:
        model.fallbacks = [by_name[name] for name in model.config.fallbacks]
    return models
