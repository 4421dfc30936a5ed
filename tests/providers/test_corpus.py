"""The provider cases of the conformance corpus are what the providers stream today."""

from __future__ import annotations

import pytest

from .corpus import CORPUS, corpus_text

pytestmark = pytest.mark.usefixtures("patient_connect")


async def test_the_provider_cases_of_the_corpus_are_current() -> None:
    expected = await corpus_text()  # the retried cases run without backoff (conftest.py)
    assert CORPUS.read_text(encoding="utf-8") == expected, "run: python -m tests.providers.corpus"
