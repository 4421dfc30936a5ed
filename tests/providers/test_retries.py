"""Every provider API that pi retries is retried as pi does: after the delay a 429 asks for, and
twice after a 500.

Each such provider's recordings hold the same two retried cases, `error-429-then-text` (a 429
asking for a short delay in the provider's own way: Anthropic's retry-after, OpenAI's
retry-after-ms, Gemini's RetryInfo retryDelay, then the `text` reply) and `error-500` (three 500s).
A test module with `RETRIED = False` (pi-messages, whose backend retries) has its own test that
it sends one request.
"""

from __future__ import annotations

from types import ModuleType

import pytest

from .corpus import provider_modules
from .harness import by_name, final_message, leaks, outline, play, run

RETRIED = [module for module in provider_modules() if getattr(module, "RETRIED", True)]
PROVIDERS = pytest.mark.parametrize("provider", RETRIED, ids=lambda module: module.API)


@PROVIDERS
async def test_a_short_retry_delay_is_waited_for_and_the_call_retried_as_it_was(provider: ModuleType) -> None:
    cases = by_name(provider.CASES)
    events, replay = await play(cases["error-429-then-text"], provider.INFO)
    assert len(replay.requests) == 2
    assert replay.requests[0].body == replay.requests[1].body
    assert not leaks(events)
    assert outline(events)[-1] == "done STOP"
    _, answered = await run(cases["text"], provider.INFO)  # what the `text` test expects, to the bit
    assert final_message(events) == answered


@PROVIDERS
async def test_a_500_is_retried_twice_before_it_fails(provider: ModuleType) -> None:
    _, replay = await play(by_name(provider.CASES)["error-500"], provider.INFO)
    assert len(replay.requests) == 3
