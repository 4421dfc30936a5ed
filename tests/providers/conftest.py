"""Fixtures every provider test shares."""

from __future__ import annotations

import pytest

from pi_proto.models.providers import call, http


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """Retries without a delay from the provider wait 1 s per attempt; these tests need not."""
    monkeypatch.setattr(call, "BACKOFF_SECONDS", 0.0)


@pytest.fixture
def patient_connect(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where many cases play at once, their replay servers share one event loop with every call's
    SDK, which a loaded machine can hold for longer than the 10 s a connection may take: there the
    connect timeout is a hang guard, as it is not what those tests compare."""
    monkeypatch.setattr(http, "CONNECT_TIMEOUT_SECONDS", 300.0)
