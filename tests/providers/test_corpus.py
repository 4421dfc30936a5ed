"""The provider cases of the conformance corpus are what the providers stream today."""

from __future__ import annotations

import pytest

from pi_proto.providers import call

from .corpus import CORPUS, corpus_text


async def test_the_provider_cases_of_the_corpus_are_current(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(call, "BACKOFF_SECONDS", 0.0)
    expected = await corpus_text()
    assert CORPUS.read_text(encoding="utf-8") == expected, "run: python -m tests.providers.corpus"
