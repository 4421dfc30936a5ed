"""OpenTelemetry spans and metrics of provider calls: the GenAI conventions' attributes, the trace
context from the client's request to the provider's, and nothing recorded unless configured."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry import trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import pi_proto as pp
from pi_proto.grpc.client import ModelClient
from pi_proto.grpc.server import ModelServer
from pi_proto.models import telemetry
from pi_proto.web import HttpModelClient, HttpServer

from ..helpers import serve_process
from ..test_http_service import sse_post
from . import test_openai_responses
from .harness import RETRYING, SECRET, hi, play, provider_case, served_model
from .replay import RECORDINGS, ReplayServer

INFO = test_openai_responses.INFO
TRACE_ID = "0af7651916cd43dd8448eb211c80319c"
PARENT_ID = "b7ad6b7169203331"


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[InMemorySpanExporter, InMemoryMetricReader]]:
    """Calls record to in-memory providers, for this test only (the process's global ones stay unset)."""
    spans = InMemorySpanExporter()
    tracer = TracerProvider()
    tracer.add_span_processor(SimpleSpanProcessor(spans))
    reader = InMemoryMetricReader()
    monkeypatch.setattr(telemetry, "providers", telemetry.Providers(tracer, MeterProvider(metric_readers=[reader])))
    yield spans, reader
    tracer.shutdown()


def only_span(spans: InMemorySpanExporter) -> ReadableSpan:
    (span,) = spans.get_finished_spans()
    return span


async def test_a_call_is_a_client_span_with_the_genai_attributes(
    recorded: tuple[InMemorySpanExporter, InMemoryMetricReader],
) -> None:
    spans, reader = recorded
    options = pp.GenerationOptions(max_tokens=1000, temperature=0.5)
    events, _ = await play(provider_case("openai-responses", "cache-usage", options=options), INFO)
    assert events[-1].done is not None
    span = only_span(spans)
    assert span.name == "chat gpt-5.2"
    assert span.kind == trace.SpanKind.CLIENT
    attributes = dict(span.attributes or {})
    first_chunk = attributes.pop("gen_ai.response.time_to_first_chunk")
    assert isinstance(first_chunk, float)
    assert first_chunk >= 0
    assert attributes == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-5.2",
        "gen_ai.request.max_tokens": 1000,
        "gen_ai.request.temperature": 0.5,
        "gen_ai.response.id": test_openai_responses.RESPONSE_ID,
        "gen_ai.response.model": "gpt-5.2",
        "gen_ai.response.finish_reasons": ("completed",),
        "gen_ai.usage.input_tokens": 24012,  # the whole prompt: 12 new, 24000 read from the cache
        "gen_ai.usage.output_tokens": 9,
        "gen_ai.usage.cache_read.input_tokens": 24000,
        "gen_ai.usage.cache_creation.input_tokens": 0,
        "gen_ai.usage.reasoning.output_tokens": 0,
    }
    assert span.status.status_code == trace.StatusCode.UNSET
    data = reader.get_metrics_data()
    assert data is not None
    measured = {
        metric.name: metric.data.data_points
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
    }
    assert set(measured) == {
        "gen_ai.client.operation.duration",
        "gen_ai.client.operation.time_to_first_chunk",
        "gen_ai.client.token.usage",
    }
    tokens = {point.attributes["gen_ai.token.type"]: point.sum for point in measured["gen_ai.client.token.usage"]}  # type: ignore[index,union-attr]
    assert tokens == {"input": 24012, "output": 9}


async def test_a_failed_call_ends_its_span_with_an_error(
    recorded: tuple[InMemorySpanExporter, InMemoryMetricReader],
) -> None:
    events, _ = await play(provider_case("openai-responses", "error-401"), INFO)
    assert events[-1].error is not None
    span = only_span(spans=recorded[0])
    assert span.status.status_code == trace.StatusCode.ERROR
    assert span.status.description == "provider_error"  # its kind, never the provider's text
    assert (span.attributes or {})["error.type"] == "provider_error"


async def test_the_trace_context_goes_from_the_clients_request_to_the_providers(
    recorded: tuple[InMemorySpanExporter, InMemoryMetricReader],
) -> None:
    traceparent = f"00-{TRACE_ID}-{PARENT_ID}-01"
    async with ReplayServer() as replay:
        replay.reply(RECORDINGS / "openai-responses" / "error-429-short.http")
        replay.reply(RECORDINGS / "openai-responses" / "text.http")
        model = served_model(dataclasses.replace(INFO, base_url=replay.base_url))
        async with ModelServer(model) as server, ModelClient(server.target) as client:
            stream = client.stream(hi(), options=RETRYING, metadata=(("traceparent", traceparent),))
            message = await stream.result()
    assert message.stop_reason == pp.StopReason.STOP
    span = only_span(recorded[0])
    assert span.parent is not None
    assert f"{span.parent.trace_id:032x}" == TRACE_ID
    assert f"{span.parent.span_id:016x}" == PARENT_ID
    # Both attempts of the call carry the call's span as their parent.
    sent = [request.headers.get("traceparent") for request in replay.requests]
    assert sent == [f"00-{TRACE_ID}-{span.context.span_id:016x}-01"] * 2


@pytest.mark.parametrize("protocol", ["connect", "grpc-web"])
async def test_over_http_too_the_request_s_trace_context_is_the_call_s_parent(
    recorded: tuple[InMemorySpanExporter, InMemoryMetricReader], protocol: str
) -> None:
    traceparent = f"00-{TRACE_ID}-{PARENT_ID}-01"
    async with ReplayServer() as replay:
        replay.reply(RECORDINGS / "openai-responses" / "text.http")
        model = served_model(dataclasses.replace(INFO, base_url=replay.base_url))
        async with (
            ModelServer(model) as server,
            HttpServer(server) as http,
            HttpModelClient(http.url, protocol=protocol) as client,
        ):
            message = await client.stream(hi(), metadata={"traceparent": traceparent}).result()
    assert message.stop_reason == pp.StopReason.STOP
    span = only_span(recorded[0])
    assert span.parent is not None
    assert (f"{span.parent.trace_id:032x}", f"{span.parent.span_id:016x}") == (TRACE_ID, PARENT_ID)
    assert replay.requests[0].headers["traceparent"] == f"00-{TRACE_ID}-{span.context.span_id:016x}-01"


async def test_over_sse_the_request_s_trace_context_is_the_call_s_parent(
    recorded: tuple[InMemorySpanExporter, InMemoryMetricReader],
) -> None:
    async with ReplayServer() as replay:
        replay.reply(RECORDINGS / "openai-responses" / "text.http")
        model = served_model(dataclasses.replace(INFO, base_url=replay.base_url))
        async with ModelServer(model) as server, HttpServer(server) as http:
            body = {"messages": [{"role": "user", "content": "hi", "timestamp": 1}]}
            status, events = await sse_post(http.url, body, {"traceparent": f"00-{TRACE_ID}-{PARENT_ID}-01"})
    assert (status, events[-1]["type"]) == (200, "done")
    span = only_span(recorded[0])
    assert span.parent is not None
    assert f"{span.parent.trace_id:032x}" == TRACE_ID


async def test_nothing_is_recorded_or_sent_unless_configured() -> None:
    assert telemetry.providers == telemetry.Providers()  # the global, no-op ones
    _, replay = await play(provider_case("openai-responses", "text"), INFO)
    assert "traceparent" not in replay.requests[0].headers


def test_configure_reads_the_standard_settings() -> None:
    assert not telemetry.configure({})
    assert not telemetry.configure({"OTEL_TRACES_EXPORTER": "console", "OTEL_SDK_DISABLED": "true"})
    assert not telemetry.configure({"OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none"})


async def test_serve_exports_the_spans_the_otel_settings_ask_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "console")
    monkeypatch.setenv("OTEL_METRICS_EXPORTER", "none")
    monkeypatch.setenv("OTEL_SERVICE_NAME", "pi-proto-test")
    async with ReplayServer() as replay:
        replay.reply(RECORDINGS / "openai-responses" / "text.http")
        catalog = tmp_path / "models.json"
        providers = {"openai": {"baseUrl": replay.base_url, "api": "openai-responses", "apiKey": SECRET}}
        providers["openai"]["models"] = [{"id": "gpt-5.2"}]  # type: ignore[assignment]
        catalog.write_text(json.dumps({"providers": providers}), encoding="utf-8")
        with serve_process("--models", str(catalog)) as (process, target):
            async with ModelClient(target) as client:
                message = await client.stream(hi()).result()
            process.terminate()
            stdout, stderr = process.communicate(timeout=60)
    assert message.stop_reason == pp.StopReason.STOP
    assert "exporting traces and metrics" in stderr
    assert '"name": "chat gpt-5.2"' in stdout
    assert '"service.name": "pi-proto-test"' in stdout
    assert '"gen_ai.provider.name": "openai"' in stdout
    assert SECRET not in stdout
