"""A provider's error may quote the user's prompt: its text stays out of the spans a server
exports (their status, their attributes, their events), which say the error's kind only."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import pi_proto as pp
from pi_proto.grpc.client import ModelClient
from pi_proto.models import telemetry

from ..helpers import serve_process
from . import test_openai_responses
from .harness import SECRET, call_through_server, served_model
from .replay import ReplayServer

PROMPT = "my bank PIN is 4821, please remember it"
# An answer as OpenAI's moderation gives one: the offending input quoted back.
ECHOING = f"""HTTP/1.1 400 Bad Request
content-type: application/json

{{"error": {{"message": "Invalid prompt: '{PROMPT}' was flagged as violating our usage policy.",
  "type": "invalid_request_error", "param": null, "code": "invalid_prompt"}}}}
"""


@pytest.fixture
def spans(monkeypatch: pytest.MonkeyPatch) -> Iterator[InMemorySpanExporter]:
    """Calls record their spans here, for this test only."""
    exporter = InMemorySpanExporter()
    tracer = TracerProvider()
    tracer.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(telemetry, "providers", telemetry.Providers(tracer))
    yield exporter
    tracer.shutdown()


def prompted() -> pp.AgentContext:
    return pp.AgentContext(messages=[pp.agent_message(pp.user_message(PROMPT, timestamp=1))])


async def test_a_provider_error_quoting_the_prompt_leaves_it_out_of_the_span(
    spans: InMemorySpanExporter, tmp_path: Path
) -> None:
    recording = tmp_path / "echoing.http"
    recording.write_text(ECHOING, encoding="utf-8")
    async with ReplayServer() as replay:
        replay.reply(recording)
        info = dataclasses.replace(test_openai_responses.INFO, base_url=replay.base_url)
        events = await call_through_server(served_model(info), prompted())
    failed = events[-1].error
    assert failed is not None
    assert failed.message is not None
    assert PROMPT in (failed.message.error_message or "")  # the caller is told what the provider said
    (span,) = spans.get_finished_spans()
    assert span.status.status_code == trace.StatusCode.ERROR
    assert span.status.description == "provider_error"
    exported = json.dumps(
        {
            "attributes": dict(span.attributes or {}),
            "events": [[event.name, dict(event.attributes or {})] for event in span.events],
        },
        default=str,
    )
    assert "4821" not in exported
    assert "Invalid prompt" not in exported


async def test_serve_exports_no_provider_error_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "console")
    monkeypatch.setenv("OTEL_METRICS_EXPORTER", "none")
    recording = tmp_path / "echoing.http"
    recording.write_text(ECHOING, encoding="utf-8")
    async with ReplayServer() as replay:
        replay.reply(recording)
        catalog = tmp_path / "models.json"
        openai = {
            "baseUrl": replay.base_url,
            "api": "openai-responses",
            "apiKey": SECRET,
            "models": [{"id": "gpt-5.2"}],
        }
        catalog.write_text(json.dumps({"providers": {"openai": openai}}), encoding="utf-8")
        with serve_process("--models", str(catalog)) as (process, target):
            async with ModelClient(target) as client:
                message = await client.stream(prompted(), options=pp.GenerationOptions(max_retries=0)).result()
            process.terminate()
            stdout, _ = process.communicate(timeout=120)
    assert message.stop_reason == pp.StopReason.ERROR
    assert PROMPT in (message.error_message or "")
    assert '"name": "chat gpt-5.2"' in stdout  # the span was exported
    assert '"description": "provider_error"' in stdout
    assert "4821" not in stdout
