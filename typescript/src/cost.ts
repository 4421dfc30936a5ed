/** What a call costs: its token counts at a model's rates, as pi's calculateCost computes it. */

import { create } from "@bufbuild/protobuf";
import { type Cost, CostSchema, type Usage } from "./gen/pi/ai/v1/message_pb.js";
import type { Model, ModelCost } from "./gen/pi/ai/v1/model_pb.js";

const PER_MILLION = 1_000_000;

/**
 * The cost of `usage` at `rates` (a model, or its rates in dollars per million tokens); the usage's
 * own cost is ignored. Each part is the rate divided by 1,000,000, times the token count, and the
 * total adds the parts in pi's order, so the doubles are pi's to the bit. A model without rates
 * costs nothing.
 */
export function calculateCost(rates: Model | ModelCost, usage: Usage): Cost {
  const cost = rates.$typeName === "pi.ai.v1.Model" ? rates.cost : rates;
  if (cost === undefined) return create(CostSchema);
  const input = (cost.input / PER_MILLION) * Number(usage.input);
  const output = (cost.output / PER_MILLION) * Number(usage.output);
  const cacheRead = (cost.cacheRead / PER_MILLION) * Number(usage.cacheRead);
  const cacheWrite = (cost.cacheWrite / PER_MILLION) * Number(usage.cacheWrite);
  const total = input + output + cacheRead + cacheWrite;
  return create(CostSchema, { input, output, cacheRead, cacheWrite, total });
}
