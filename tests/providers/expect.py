"""What the provider tests expect a call to end with, built from the model's rates and names.

The cost is computed here, as pi's calculateCost computes it, and not by pi_proto's own
calculate_cost: the tests check the provider code's sums against their own.
"""

from __future__ import annotations

from dataclasses import dataclass

import pi_proto as pp

from .harness import CLOCK_MS, DURATION_MS

# The usage of a call whose provider reported none, as pi's createEmptyUsage: zeros, and a cost
# never computed (so not marked as an estimate either).
NO_USAGE = pp.zero_usage()  # pi counts nothing before the provider does


@dataclass(frozen=True)
class Expected:
    """The usage and final message a call to `info` should end with."""

    info: pp.Model

    def cost(
        self,
        input: int = 0,
        output: int = 0,
        cache_read: int = 0,
        cache_write: int = 0,
        factor: float = 1.0,
        cache_write_1h: int = 0,
    ) -> pp.Cost:
        """What the tokens cost at the model's base rates, as pi 1.6 prices them: input, output and
        cache reads the rate / 1e6 times the tokens; cache writes at their rate, the one-hour part
        of them at twice the input rate, over 1e6; each part then times the service tier's
        `factor`. The total adds the parts in pi's order, an estimate, not the provider's bill."""
        rates = self.info.cost or pp.ModelCost()
        short_write = cache_write - cache_write_1h
        parts = [
            rates.input / 1e6 * input * factor,
            rates.output / 1e6 * output * factor,
            rates.cache_read / 1e6 * cache_read * factor,
            (rates.cache_write * short_write + rates.input * 2 * cache_write_1h) / 1e6 * factor,
        ]
        return pp.Cost(
            input=parts[0],
            output=parts[1],
            cache_read=parts[2],
            cache_write=parts[3],
            total=parts[0] + parts[1] + parts[2] + parts[3],
            total_from_provider=False,
        )

    def usage(
        self,
        input: int,
        output: int,
        cache_read: int = 0,
        cache_write: int = 0,
        factor: float = 1.0,
        *,
        reasoning: int | None = None,
        cache_write_1h: int | None = None,
    ) -> pp.Usage:
        """The usage of the counts; `reasoning` and `cache_write_1h` are parts of `output` and
        `cache_write`, absent unless the provider reports them."""
        return pp.Usage(
            input=input,
            output=output,
            cache_read=cache_read,
            cache_write=cache_write,
            total_tokens=input + output + cache_read + cache_write,
            cost=self.cost(input, output, cache_read, cache_write, factor, cache_write_1h or 0),
            reasoning=reasoning,
            cache_write_1h=cache_write_1h,
        )

    def message(
        self,
        *content: pp.AssistantContent,
        usage: pp.Usage,
        stop: pp.StopReason,
        error: str | None = None,
        response: Response | None = None,
    ) -> pp.AssistantMessage:
        """The final message, as the model's provider code stamps it at the pinned clocks."""
        said = response or Response()
        return pp.AssistantMessage(
            content=list(content),
            api=self.info.api,
            provider=self.info.provider,
            model=self.info.id,
            usage=usage,
            stop_reason=stop,
            error_message=error,
            timestamp=CLOCK_MS,
            duration_ms=DURATION_MS,
            response_id=said.id,
            response_model=said.model,
            raw_stop_reason=said.raw_stop_reason,
            provider_thinking_level=said.thinking_level,
        )


@dataclass(frozen=True)
class Response:
    """What a recording's provider said of its response: its id, the model that answered (when
    not the one asked for), its stop reason as it wrote it, and the effort it used."""

    id: str | None = None
    model: str | None = None
    raw_stop_reason: str | None = None
    thinking_level: str | None = None


def text(value: str, signature: str | None = None) -> pp.AssistantContent:
    return pp.AssistantContent(text=pp.TextContent(text=value, text_signature=signature))


def thinking(value: str, signature: str) -> pp.AssistantContent:
    return pp.AssistantContent(thinking=pp.ThinkingContent(thinking=value, thinking_signature=signature))


def tool_call(
    call_id: str, name: str, arguments: str, raw: str | None = None, thought_signature: str | None = None
) -> pp.AssistantContent:
    call = pp.ToolCall(
        id=call_id, name=name, arguments_json=arguments, raw_arguments=raw, thought_signature=thought_signature
    )
    return pp.AssistantContent(tool_call=call)
