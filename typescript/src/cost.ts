/** What a call costs: its token counts at a model's rates, as pi's calculateCost computes it. */

import { create } from "@bufbuild/protobuf";
import { type Cost, CostSchema, type Usage } from "./gen/pi/ai/v1/message_pb.js";
import type { Model, ModelCost, ModelCostTier } from "./gen/pi/ai/v1/model_pb.js";

const PER_MILLION = 1_000_000;

/**
 * The cost of `usage` at `rates` (a model, or its rates in dollars per million tokens); the usage's
 * own cost is ignored, and a count it lacks is 0. The rates are those of the tier with the largest
 * `inputTokensAbove` that the prompt (input + cacheRead + cacheWrite tokens) exceeds, else the base
 * rates. Input, output and cache read are each the rate divided by 1,000,000, times the tokens.
 * Cache writes with one-hour retention (`cacheWrite1h`, a part of `cacheWrite`) cost twice the input
 * rate and the rest the cacheWrite rate: (cacheWrite rate * rest + input rate * 2 * one-hour) /
 * 1,000,000. The total adds the four parts in that order and `totalFromProvider` is false: pi's
 * operations in pi's order, so the doubles are pi's to the bit. A model without rates costs
 * nothing: every amount is 0.
 */
export function calculateCost(rates: Model | ModelCost, usage: Usage): Cost {
  const base = rates.$typeName === "pi.ai.v1.Model" ? rates.cost : rates;
  // A cost built for a call sets every amount, as pi's Cost requires them.
  if (base === undefined) {
    return create(CostSchema, { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0, totalFromProvider: false });
  }
  // A count the usage lacks (a pi-JSON object left it out) is 0.
  const inputTokens = Number(usage.input ?? 0n);
  const outputTokens = Number(usage.output ?? 0n);
  const cacheReadTokens = Number(usage.cacheRead ?? 0n);
  const cacheWriteTokens = Number(usage.cacheWrite ?? 0n);
  const prompt = inputTokens + cacheReadTokens + cacheWriteTokens;
  let chosen: ModelCost | ModelCostTier = base;
  let threshold = -1;
  for (const tier of base.tiers) {
    const above = Number(tier.inputTokensAbove);
    // Strictly above, and the first of equal thresholds wins, as in pi.
    if (prompt > above && above > threshold) {
      chosen = tier;
      threshold = above;
    }
  }
  const longWrite = Number(usage.cacheWrite1h ?? 0n);
  const shortWrite = cacheWriteTokens - longWrite;
  const input = (chosen.input / PER_MILLION) * inputTokens;
  const output = (chosen.output / PER_MILLION) * outputTokens;
  const cacheRead = (chosen.cacheRead / PER_MILLION) * cacheReadTokens;
  const cacheWrite = (chosen.cacheWrite * shortWrite + chosen.input * 2 * longWrite) / PER_MILLION;
  const total = input + output + cacheRead + cacheWrite;
  return create(CostSchema, { input, output, cacheRead, cacheWrite, total, totalFromProvider: false });
}
