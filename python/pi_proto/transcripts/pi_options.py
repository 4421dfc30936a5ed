"""pi's stream options (`options` of a pi-messages or streamProxy request) and GenerationOptions:
`options_from_pi` reads them, `options_to_pi` writes them.

The keys taken are those of pi's StreamOptions and SimpleStreamOptions that shape a model call
(its callbacks, abort signal and API key do not travel): what pi-messages sends (temperature,
maxTokens, reasoning, cacheRetention, sessionId, toolChoice), what streamProxy sends (also
samplingParams, disableContinuation, headers, metadata, transport, thinkingBudgets,
maxRetryDelayMs), and timeoutMs and maxRetries. Each value must have pi's type; another key, or a
value of another type, raises PiJsonError naming its path (`options.maxTokens`), so that a
client's mistake is reported rather than dropped. `deferred` is refused too: neither protocol's
`done` event can carry the handle of a deferred call. The ranges (a temperature from 0 to 2, at
least one token) are the schema's rules, which the server checks after.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

from .._gen.types.pi.ai.v1 import (
    GenerationOptions,
    ThinkingBudgets,
    ToolChoice,
    ToolChoiceMode,
)
from ..ir.messages import dump_json
from .pi_json import (
    CACHE_RETENTION_NAMES,
    CACHE_RETENTIONS,
    REASONING_LEVEL_NAMES,
    REASONING_LEVELS,
    TOOL_CHOICE_NAMES,
    TOOL_CHOICES,
    TRANSPORT_NAMES,
    TRANSPORTS,
    PiJsonError,
)

E = TypeVar("E")
INT64 = range(-(2**63), 2**63)

BUDGET_LEVELS = ("minimal", "low", "medium", "high")


def options_from_pi(value: Any, where: str = "options") -> GenerationOptions:
    """The GenerationOptions of pi's stream options; raises PiJsonError naming a bad value's path."""
    fields: dict[str, Any] = {}
    for key, item in _object(value, where).items():
        if key not in _READERS:
            raise PiJsonError(f"{where}.{key}", f"not an option this server takes: expected {', '.join(_READERS)}")
        name, read = _READERS[key]
        fields[name] = read(item, f"{where}.{key}")
    return GenerationOptions(**fields)


def _object(value: Any, where: str) -> dict[str, Any]:
    if type(value) is not dict:
        raise _wrong(where, "an object", value)
    return value


def _number(value: Any, where: str) -> float:
    if type(value) not in (int, float):
        raise _wrong(where, "a number", value)
    return float(value)


def _integer(value: Any, where: str) -> int:
    if type(value) is not int or value not in INT64:  # JSON's 5.0 is no integer pi would send
        raise _wrong(where, "a 64-bit integer", value)
    return int(value)


def _string(value: Any, where: str) -> str:
    if type(value) is not str:
        raise _wrong(where, "a string", value)
    return value


def _boolean(value: Any, where: str) -> bool:
    if type(value) is not bool:
        raise _wrong(where, "a boolean", value)
    return value


def _json_text(value: Any, where: str) -> str:
    """An object passed on as it is (metadata, samplingParams), as the text of its JSON."""
    return dump_json(_object(value, where))


def _choice(names: dict[str, E]) -> Callable[[Any, str], E]:
    """A reader of one of `names`."""

    def read(value: Any, where: str) -> E:
        if type(value) is not str or value not in names:
            raise _wrong(where, f"one of {', '.join(map(repr, names))}", value)
        return names[value]

    return read


def _tool_choice(value: Any, where: str) -> ToolChoice:
    """pi-messages' toolChoice: "auto", "none", "required", or {type: "function", function: {name}}."""
    if type(value) is str and value in TOOL_CHOICES:
        return ToolChoice(mode=TOOL_CHOICES[value])
    expected = f"one of {', '.join(map(repr, TOOL_CHOICES))}, or {{type: 'function', function: {{name}}}}"
    if type(value) is not dict:
        raise _wrong(where, expected, value)
    if value.get("type") != "function" or set(value) != {"type", "function"}:
        raise _wrong(where, expected, value)
    function = _object(value["function"], f"{where}.function")
    if set(function) != {"name"}:
        raise _wrong(f"{where}.function", "an object with only a `name`", function)
    return ToolChoice(mode=ToolChoiceMode.TOOL, tool=_string(function["name"], f"{where}.function.name"))


def _thinking_budgets(value: Any, where: str) -> ThinkingBudgets:
    budgets: dict[str, int] = {}
    for level, budget in _object(value, where).items():
        if level not in BUDGET_LEVELS:
            raise PiJsonError(f"{where}.{level}", f"not a level with a budget: expected {', '.join(BUDGET_LEVELS)}")
        budgets[level] = _integer(budget, f"{where}.{level}")
    return ThinkingBudgets(**budgets)


def _headers(value: Any, where: str) -> dict[str, str]:
    headers: dict[str, str] = {}
    for name, text in _object(value, where).items():
        at = f"{where}[{json.dumps(name, ensure_ascii=False)}]"
        if text is None:
            # pi's null removes a default header of the provider's; the call here has no way to say it.
            raise PiJsonError(at, "expected a string: a null, which removes a provider's default header, is not served")
        headers[name] = _string(text, at)
    return headers


_READERS: dict[str, tuple[str, Callable[[Any, str], Any]]] = {
    "temperature": ("temperature", _number),
    "maxTokens": ("max_tokens", _integer),
    "reasoning": ("reasoning", _choice(REASONING_LEVELS)),
    "thinkingBudgets": ("thinking_budgets", _thinking_budgets),
    "toolChoice": ("tool_choice", _tool_choice),
    "cacheRetention": ("cache_retention", _choice(CACHE_RETENTIONS)),
    "sessionId": ("session_id", _string),
    "maxRetryDelayMs": ("max_retry_delay_ms", _integer),
    "metadata": ("metadata_json", _json_text),
    "headers": ("headers", _headers),
    "samplingParams": ("sampling_params_json", _json_text),
    "timeoutMs": ("timeout_ms", _integer),
    "maxRetries": ("max_retries", _integer),
    "transport": ("transport", _choice(TRANSPORTS)),
    "disableContinuation": ("disable_continuation", _boolean),
}


def _wrong(where: str, expected: str, value: Any) -> PiJsonError:
    return PiJsonError(where, f"expected {expected}, got {json.dumps(value, ensure_ascii=False)[:60]}")


def options_to_pi(options: GenerationOptions) -> dict[str, Any]:
    """pi's stream options for GenerationOptions: each option that is set, under pi's key, in the
    order options_from_pi reads them."""
    out = {}
    for key, write in _WRITERS.items():
        if (value := write(options)) is not None:
            out[key] = value
    return out


def _tool_choice_to_pi(choice: ToolChoice | None) -> Any:
    if choice is None:
        return None
    if choice.mode == ToolChoiceMode.TOOL:
        return {"type": "function", "function": {"name": choice.tool}}
    return TOOL_CHOICE_NAMES[choice.mode]


def _budgets_to_pi(budgets: ThinkingBudgets | None) -> dict[str, int] | None:
    if budgets is None:
        return None
    return {level: budget for level in BUDGET_LEVELS if (budget := getattr(budgets, level)) is not None}


_WRITERS: dict[str, Callable[[GenerationOptions], Any]] = {
    "temperature": lambda options: options.temperature,
    "maxTokens": lambda options: options.max_tokens,
    "reasoning": lambda options: REASONING_LEVEL_NAMES.get(options.reasoning),
    "thinkingBudgets": lambda options: _budgets_to_pi(options.thinking_budgets),
    "toolChoice": lambda options: _tool_choice_to_pi(options.tool_choice),
    "cacheRetention": lambda options: CACHE_RETENTION_NAMES.get(options.cache_retention),
    "sessionId": lambda options: options.session_id,
    "maxRetryDelayMs": lambda options: options.max_retry_delay_ms,
    "metadata": lambda options: json.loads(options.metadata_json) if options.metadata_json else None,
    "headers": lambda options: dict(options.headers) if options.headers else None,
    "samplingParams": lambda options: (
        json.loads(options.sampling_params_json) if options.sampling_params_json else None
    ),
    "timeoutMs": lambda options: options.timeout_ms,
    "maxRetries": lambda options: options.max_retries,
    "transport": lambda options: TRANSPORT_NAMES.get(options.transport),
    "disableContinuation": lambda options: options.disable_continuation,
}
