"""Fixtures every provider test shares."""

from __future__ import annotations

import pytest

from pi_proto.models.providers import call


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """Retries without a delay from the provider wait 1 s per attempt; these tests need not."""
    monkeypatch.setattr(call, "BACKOFF_SECONDS", 0.0)
