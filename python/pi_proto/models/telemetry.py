"""OpenTelemetry spans and metrics of provider calls, as the GenAI semantic conventions name them.

Each provider call is a CLIENT span `chat <model>` with gen_ai.operation.name, gen_ai.provider.name
and gen_ai.request.* when it starts; gen_ai.response.id, .model, .finish_reasons,
.time_to_first_chunk and gen_ai.usage.* (cache and reasoning tokens included) when it ends; an
error or a cancel sets the span's status and error.type. The span is the current one while the
provider is called, so the provider's HTTP request carries its trace context (`inject`), and its
parent is the context the client's request carried (`extracted`). Metrics:
gen_ai.client.operation.duration, gen_ai.client.operation.time_to_first_chunk and
gen_ai.client.token.usage.

No text of the call is recorded: not the prompt or the answer, and not the provider's error
message, which may quote the prompt; a failed call's status says only its kind (`error.type`).

Nothing is recorded unless a tracer or meter provider is set: `pi-proto serve` sets them from the
standard OTEL_* environment (`configure`), tests set `providers` to in-memory ones.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import metrics, propagate, trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from .._gen.types.pi.ai.v1 import AssistantMessage, GenerationOptions, Model, ModelEvent, StopReason
from ..transcripts.pi_json import STOP_REASON_NAMES

SCOPE = "pi_proto"
# gen_ai.provider.name of each API (the conventions' well-known names); pi-messages and the
# OpenAI-compatible servers name their provider as the catalog does.
PROVIDER_NAMES = {
    "anthropic-messages": "anthropic",
    "openai-responses": "openai",
    "azure-openai-responses": "azure.ai.openai",
    "google-generative-ai": "gcp.gemini",
    "google-vertex": "gcp.vertex_ai",
    "mistral-conversations": "mistral_ai",
    "bedrock-converse-stream": "aws.bedrock",
}
# Events that bring the first chunk of the answer.
CONTENT_EVENTS = ("text_delta", "thinking_delta", "toolcall_start", "toolcall_delta")
# Where the conventions say OTLP export is asked for.
EXPORT_SETTINGS = ("OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT")


@dataclass
class Providers:
    """The tracer and meter providers calls record to; None for OpenTelemetry's global ones."""

    tracer: trace.TracerProvider | None = None
    meter: metrics.MeterProvider | None = None


providers = Providers()


def provider_name(model: Model) -> str:
    if model.api == "openai-completions" and model.provider != "openai":
        return model.provider  # an OpenAI-compatible server: its own name
    return PROVIDER_NAMES.get(model.api, model.provider)


class CallTrace:
    """One provider call's span and measurements, from its start to its terminal event."""

    def __init__(self, model: Model, options: GenerationOptions | None, monotonic: Callable[[], float]) -> None:
        self.monotonic = monotonic
        self.started = monotonic()
        self.first_chunk: float | None = None
        self.ended = False
        self.attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": provider_name(model),
            "gen_ai.request.model": model.id,
        }
        request = dict(self.attributes)
        if options is not None:
            if options.max_tokens is not None:
                request["gen_ai.request.max_tokens"] = options.max_tokens
            if options.temperature is not None:
                request["gen_ai.request.temperature"] = options.temperature
        tracer = trace.get_tracer(SCOPE, tracer_provider=providers.tracer)
        self.span = tracer.start_span(f"chat {model.id}", kind=SpanKind.CLIENT, attributes=request)

    def event(self, event: ModelEvent) -> None:
        """Note what an event says: the first chunk, or the end."""
        if self.first_chunk is None and any(getattr(event, name) is not None for name in CONTENT_EVENTS):
            self.first_chunk = self.monotonic() - self.started
        terminal = event.done if event.done is not None else event.error
        if terminal is not None and terminal.message is not None:
            self.end(terminal.message)

    def end(self, message: AssistantMessage) -> None:
        """The call ended with `message`: the span gets the response and ends; the metrics record."""
        if self.ended:
            return
        self.ended = True
        span, (duration, first_chunk, tokens) = self.span, instruments(providers.meter)
        response: dict[str, Any] = {}
        if message.response_id:
            response["gen_ai.response.id"] = message.response_id
        response["gen_ai.response.model"] = message.response_model or message.model
        reason = message.raw_stop_reason or STOP_REASON_NAMES.get(message.stop_reason, "")
        if reason:
            response["gen_ai.response.finish_reasons"] = [reason]
        if self.first_chunk is not None:
            response["gen_ai.response.time_to_first_chunk"] = self.first_chunk
        if (usage := message.usage) is not None:
            # The conventions count the whole prompt as input, the cached part too.
            prompt = (usage.input or 0) + (usage.cache_read or 0) + (usage.cache_write or 0)
            response["gen_ai.usage.input_tokens"] = prompt
            response["gen_ai.usage.output_tokens"] = usage.output or 0
            response["gen_ai.usage.cache_read.input_tokens"] = usage.cache_read or 0
            response["gen_ai.usage.cache_creation.input_tokens"] = usage.cache_write or 0
            if usage.reasoning is not None:
                response["gen_ai.usage.reasoning.output_tokens"] = usage.reasoning
        failed = message.stop_reason in (StopReason.ERROR, StopReason.ABORTED)
        measured = {**self.attributes, "gen_ai.response.model": response["gen_ai.response.model"]}
        if failed:
            error_type = "aborted" if message.stop_reason == StopReason.ABORTED else "provider_error"
            response["error.type"] = measured["error.type"] = error_type
            # The kind only: a provider's error text may quote the prompt, and spans leave the
            # server for whatever collector OTEL_* names.
            span.set_status(Status(StatusCode.ERROR, error_type))
        span.set_attributes(response)
        span.end()
        duration.record(self.monotonic() - self.started, measured)
        if self.first_chunk is not None:
            first_chunk.record(self.first_chunk, measured)
        if usage is not None:
            tokens.record(response["gen_ai.usage.input_tokens"], {**measured, "gen_ai.token.type": "input"})
            tokens.record(usage.output or 0, {**measured, "gen_ai.token.type": "output"})


Histograms = tuple[metrics.Histogram, metrics.Histogram, metrics.Histogram]
_instruments: dict[metrics.MeterProvider | None, Histograms] = {}


def instruments(provider: metrics.MeterProvider | None) -> Histograms:
    """The call's histograms (duration, time to first chunk, tokens), made once per meter provider."""
    if provider not in _instruments:
        meter = metrics.get_meter(SCOPE, meter_provider=provider)
        _instruments[provider] = (
            meter.create_histogram("gen_ai.client.operation.duration", unit="s", description="A provider call's time"),
            meter.create_histogram(
                "gen_ai.client.operation.time_to_first_chunk", unit="s", description="Time to the answer's first chunk"
            ),
            meter.create_histogram("gen_ai.client.token.usage", unit="{token}", description="Tokens of a call"),
        )
    return _instruments[provider]


@contextmanager
def extracted(carrier: Mapping[str, str] | None) -> Iterator[None]:
    """The trace context a client's request carried (its traceparent), current within."""
    if not carrier:
        yield
        return
    token = otel_context.attach(propagate.extract(carrier))
    try:
        yield
    finally:
        otel_context.detach(token)


def inject(headers: MutableMapping[str, str]) -> None:
    """The current trace context into a provider request's headers, where there is one."""
    if trace.get_current_span().get_span_context().is_valid:
        propagate.inject(headers)


def configure(environ: Mapping[str, str] = os.environ) -> bool:
    """Set OpenTelemetry's global providers from the standard OTEL_* settings: OTLP (over HTTP)
    or console exporters for traces and metrics, as OTEL_TRACES_EXPORTER and OTEL_METRICS_EXPORTER
    say (otlp when only an OTLP endpoint is given). Nothing without them, or with OTEL_SDK_DISABLED;
    returns whether anything was set."""
    if environ.get("OTEL_SDK_DISABLED", "").lower() == "true" or not any(environ.get(n) for n in EXPORT_SETTINGS):
        return False
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import ConsoleMetricExporter, PeriodicExportingMetricReader
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter

    resource = Resource.create({"service.name": environ.get("OTEL_SERVICE_NAME", "pi-proto")})
    default = "otlp" if environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") else "none"
    traces = environ.get("OTEL_TRACES_EXPORTER", default)
    if traces != "none":
        tracer = TracerProvider(resource=resource)
        if traces == "console":
            tracer.add_span_processor(BatchSpanProcessor(ConsoleSpanExporter()))
        else:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            tracer.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        trace.set_tracer_provider(tracer)
    measured = environ.get("OTEL_METRICS_EXPORTER", default)
    if measured != "none":
        if measured == "console":
            reader = PeriodicExportingMetricReader(ConsoleMetricExporter())
        else:
            from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

            reader = PeriodicExportingMetricReader(OTLPMetricExporter())
        metrics.set_meter_provider(MeterProvider(resource=resource, metric_readers=[reader]))
    return traces != "none" or measured != "none"
