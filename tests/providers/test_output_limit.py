"""The output limit a call asks for, as pi 1.6 computes it: the call's max_tokens, else the model's,
fitted into the context window after pi's estimate of the input (estimate.py); for a reasoning
budget, the budget on top of it, fitted with it. The differential suite checks the same cases
against pi's own code; here the numbers are worked out by hand."""

from __future__ import annotations

import dataclasses
from types import ModuleType

import pytest

import pi_proto as pp
from pi_proto.models.providers.call import Call
from pi_proto.models.providers.catalog import ModelConfig
from pi_proto.models.providers.estimate import context_tokens, js_length, message_tokens
from pi_proto.models.providers.system import normalize
from pi_proto.stream.event_stream import AssistantMessageEventStream

from . import (
    test_anthropic_messages,
    test_azure_openai_responses,
    test_bedrock_converse_stream,
    test_google_generative_ai,
    test_google_vertex,
    test_mistral_conversations,
    test_openai_completions,
    test_openai_responses,
)
from .harness import CLOCK_MS, SECRET, after_usage, by_name, crowded, play

# Where each API puts the limit in its request body.
FIELDS = {
    test_anthropic_messages: ("max_tokens",),
    test_azure_openai_responses: ("max_output_tokens",),
    test_bedrock_converse_stream: ("inferenceConfig", "maxTokens"),
    test_google_generative_ai: ("generationConfig", "maxOutputTokens"),
    test_google_vertex: ("generationConfig", "maxOutputTokens"),
    test_mistral_conversations: ("max_tokens",),
    test_openai_completions: ("max_completion_tokens",),
    test_openai_responses: ("max_output_tokens",),
}
PROVIDERS = pytest.mark.parametrize("provider", list(FIELDS), ids=lambda module: module.API)

# pi's estimate of crowded(): the prompt (14 characters, 4 tokens) and its tool's JSON (136, 39);
# the question (14, 4); the other model's turn, its reasoning counted though it is not sent (26 +
# 13 + the call's name and arguments, 4 + 19: 18); the result (648, 186); the last question (15
# characters and a crab of two units, and an image of 4800: 1377).
CROWDED_TOKENS = 43 + 4 + 18 + 186 + 1377
# For a window of 8000: a margin of 4096 (15% of the input is less), which leaves less than 32768.
FITTED = 8_000 - CROWDED_TOKENS - 4096
# after_usage(): the first answer's 30000 tokens, then five messages of 8, 6, 8, 11 and 6 characters.
AFTER_USAGE_TOKENS = 30_000 + 3 + 2 + 3 + 4 + 2
# For a window of 80000: a margin of 15% of the input (4503), which leaves more than 32768.
AFTER_USAGE = 80_000 - AFTER_USAGE_TOKENS - 4503


def limit_sent(body: dict[str, object], path: tuple[str, ...]) -> object:
    value: object = body
    for key in path:
        assert isinstance(value, dict)
        value = value.get(key)
    return value


@PROVIDERS
@pytest.mark.parametrize(
    ("name", "expected"), [("output-limit-fitted", FITTED), ("output-limit-after-usage", AFTER_USAGE)]
)
async def test_the_models_limit_is_fitted_into_the_context_window(
    provider: ModuleType, name: str, expected: int
) -> None:
    _, replay = await play(by_name(provider.CASES)[name], provider.INFO)
    assert limit_sent(replay.requests[0].body, FIELDS[provider]) == expected


async def test_a_reasoning_budget_is_fitted_into_the_window_with_the_answer() -> None:
    _, replay = await play(
        by_name(test_anthropic_messages.CASES)["thinking-budget-fitted"], test_anthropic_messages.INFO
    )
    body = replay.requests[0].body
    # 8192 on top of the fitted limit is fitted again; the budget leaves the answer 1024 tokens.
    assert body["max_tokens"] == FITTED
    assert body["thinking"] == {"type": "enabled", "budget_tokens": FITTED - 1024, "display": "summarized"}


# --- the estimate ---------------------------------------------------------------------------------


def test_the_estimate_counts_each_message_of_the_transcript() -> None:
    messages = normalize(crowded())
    inner = [pp.unwrap(message) for message in messages]
    tokens = [message_tokens(message) for message in inner if not isinstance(message, pp.CustomMessage)]
    assert tokens == [43, 4, 18, 186, 1377]
    assert context_tokens(messages) == CROWDED_TOKENS


def test_the_last_usable_usage_counts_what_came_before_it() -> None:
    assert context_tokens(normalize(after_usage())) == AFTER_USAGE_TOKENS


def test_a_usage_without_a_total_is_the_sum_of_its_parts() -> None:
    usage = pp.Usage(input=900, output=100, cache_read=50, cache_write=50, total_tokens=0)
    answer = pp.assistant_message("ok", usage=usage, timestamp=CLOCK_MS)
    assert context_tokens([pp.agent_message(answer)]) == 1100


def test_lengths_are_javascripts_utf_16_units() -> None:
    assert js_length("a\U0001f980é") == 4


# --- the limit each call asks for ------------------------------------------------------------------


def call(context: pp.AgentContext, **model: object) -> Call:
    info = dataclasses.replace(test_anthropic_messages.INFO, **model)  # type: ignore[arg-type]
    options = pp.GenerationOptions(reasoning=pp.ThinkingLevel.MEDIUM)
    return Call(ModelConfig(info=info, api_key=SECRET), context, options, AssistantMessageEventStream())


def test_a_window_of_0_fits_anything() -> None:
    assert call(crowded(), context_window=0, max_tokens=64_000).max_tokens() == 64_000
    assert call(crowded(), context_window=0, max_tokens=0).max_tokens() == 1  # pi asks for at least 1


def test_a_budget_above_the_models_limit_leaves_the_answer_its_room() -> None:
    # 4000 + 8192 is over the model's 4000: the budget shrinks to leave 1024 for the answer.
    assert call(crowded(), max_tokens=4000).thinking_budget() == (4000, 4000 - 1024)


def test_a_window_that_leaves_no_room_still_asks_for_one_token() -> None:
    assert call(crowded(), context_window=2000).max_tokens() == 1
    assert call(crowded(), context_window=2000).thinking_budget() == (1, 0)


@pytest.mark.parametrize(("given", "sent"), [(5, 16), (1000, 1000)])
async def test_responses_asks_for_at_least_16_tokens_as_openai_requires(given: int, sent: int) -> None:
    case = dataclasses.replace(
        by_name(test_openai_responses.CASES)["text"], options=pp.GenerationOptions(max_tokens=given)
    )
    _, replay = await play(case, test_openai_responses.INFO)
    assert replay.requests[0].body["max_output_tokens"] == sent


async def test_no_limit_goes_where_the_model_has_none_or_compat_refuses_it() -> None:
    none = dataclasses.replace(test_openai_completions.INFO, max_tokens=0)
    _, replay = await play(by_name(test_openai_completions.CASES)["text"], none)
    assert "max_completion_tokens" not in replay.requests[0].body
    refused = {"compat": {"supportsMaxOutputTokens": False}}
    case = dataclasses.replace(by_name(test_openai_responses.CASES)["text"], config=refused)
    _, replay = await play(case, test_openai_responses.INFO)
    assert "max_output_tokens" not in replay.requests[0].body
