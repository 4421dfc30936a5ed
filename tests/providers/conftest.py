"""Fixtures every provider test shares."""

from __future__ import annotations

import pytest

from pi_proto.models.providers import bedrock_converse_stream, call, http
from pi_proto.models.providers.catalog import ModelConfig


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """Retries without a delay from the provider wait 1 s per attempt; these tests need not."""
    monkeypatch.setattr(call, "BACKOFF_SECONDS", 0.0)


@pytest.fixture
def patient_connect(monkeypatch: pytest.MonkeyPatch) -> None:
    """Connecting may take 300 s, a hang guard, with the idle timeout as set. A test's servers
    share one event loop with every call's SDK, which a loaded machine can hold for longer than
    a connect timeout (10 s, or a short `timeoutMs` such as 300 ms, which sets it too) while it
    connects to a server that is listening; connecting is not what these tests check."""
    configured = http.timeouts

    def patient(model: ModelConfig) -> tuple[float, float]:
        return 300.0, configured(model)[1]

    for module in (http, bedrock_converse_stream):  # each looks `timeouts` up where it imported it
        monkeypatch.setattr(module, "timeouts", patient)
