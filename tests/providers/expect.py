"""What the provider tests expect a call to end with, built from the model's rates and names.

The cost is computed here, as pi's calculateCost computes it, and not by pi_proto's own
calculate_cost: the tests check the provider code's sums against their own.
"""

from __future__ import annotations

from dataclasses import dataclass

import pi_proto as pp

from .harness import CLOCK_MS


@dataclass(frozen=True)
class Expected:
    """The usage and final message a call to `info` should end with."""

    info: pp.Model

    def cost(
        self, input: int = 0, output: int = 0, cache_read: int = 0, cache_write: int = 0, factor: float = 1.0
    ) -> pp.Cost:
        """What the tokens cost at the model's rates: for each part the rate / 1e6 times the tokens,
        then times the service tier's `factor`; the total adds the parts in pi's order."""
        rates = self.info.cost or pp.ModelCost()
        parts = [
            rates.input / 1e6 * input * factor,
            rates.output / 1e6 * output * factor,
            rates.cache_read / 1e6 * cache_read * factor,
            rates.cache_write / 1e6 * cache_write * factor,
        ]
        return pp.Cost(
            input=parts[0],
            output=parts[1],
            cache_read=parts[2],
            cache_write=parts[3],
            total=parts[0] + parts[1] + parts[2] + parts[3],
        )

    def usage(
        self, input: int, output: int, cache_read: int = 0, cache_write: int = 0, factor: float = 1.0
    ) -> pp.Usage:
        return pp.Usage(
            input=input,
            output=output,
            cache_read=cache_read,
            cache_write=cache_write,
            total_tokens=input + output + cache_read + cache_write,
            cost=self.cost(input, output, cache_read, cache_write, factor),
        )

    def message(
        self, *content: pp.AssistantContent, usage: pp.Usage, stop: pp.StopReason, error: str | None = None
    ) -> pp.AssistantMessage:
        """The final message, as the model's provider code stamps it at the pinned clock."""
        return pp.AssistantMessage(
            content=list(content),
            api=self.info.api,
            provider=self.info.provider,
            model=self.info.id,
            usage=usage,
            stop_reason=stop,
            error_message=error,
            timestamp=CLOCK_MS,
        )


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
