/** How numbers of the protocol read on the page: token counts, dollars, rates and stop reasons. */

import { type Cost, type Model, type ModelCost, StopReason, type Usage } from "../../typescript/src/index.ts";

const COUNT = new Intl.NumberFormat("en");

/** A count of tokens: "12,345"; "0" for one that is absent. */
export function tokens(count: bigint | undefined): string {
  return COUNT.format(count ?? 0n);
}

/** Dollars, to the cent and as many more digits as a small amount needs (at most 6): "$0.0042". */
export function dollars(amount: number | undefined): string {
  const value = amount ?? 0;
  const digits = value !== 0 && Math.abs(value) < 0.01 ? 6 : 2;
  return `$${value.toFixed(digits).replace(/(\.\d\d\d*?)0+$/, "$1")}`;
}

/** The stop reason's name, as the protocol spells it: "TOOL_USE", "ABORTED". */
export function stopReasonName(reason: StopReason): string {
  return StopReason[reason] ?? `STOP_REASON_${reason}`;
}

/** The usage's token counts: input, output, cache read, cache write and total. */
export function usageText(usage: Usage | undefined): string {
  const parts = [
    `input ${tokens(usage?.input)}`,
    `output ${tokens(usage?.output)}`,
    `cache read ${tokens(usage?.cacheRead)}`,
    `cache write ${tokens(usage?.cacheWrite)}`,
    `total ${tokens(usage?.totalTokens)}`,
  ];
  if (usage?.reasoning !== undefined) parts.splice(2, 0, `reasoning ${tokens(usage.reasoning)}`);
  return parts.join(" · ");
}

/** A cost: its total, then its parts. */
export function costText(cost: Cost | undefined): string {
  if (cost === undefined) return "no cost recorded";
  const parts = [
    `input ${dollars(cost.input)}`,
    `output ${dollars(cost.output)}`,
    `cache read ${dollars(cost.cacheRead)}`,
    `cache write ${dollars(cost.cacheWrite)}`,
  ];
  return `${dollars(cost.total)} (${parts.join(" · ")})`;
}

/** A model's rates, in dollars per million tokens. */
export function ratesText(cost: ModelCost | undefined): string {
  if (cost === undefined) return "no rates";
  const rate = (value: number): string => `$${COUNT.format(value)}`;
  const base = `${rate(cost.input)} input · ${rate(cost.output)} output · ${rate(cost.cacheRead)} cache read · ${rate(cost.cacheWrite)} cache write per million tokens`;
  if (cost.tiers.length === 0) return base;
  return `${base} (${cost.tiers.length} higher tier${cost.tiers.length === 1 ? "" : "s"} for long prompts)`;
}

/** What the model picker says of a model: provider, context window and rates. */
export function modelText(model: Model): string {
  const window =
    model.contextWindow > 0n ? `${tokens(model.contextWindow)} tokens of context` : "context window not given";
  return `${model.name || model.id} · ${model.provider} · ${window} · ${ratesText(model.cost)}`;
}
