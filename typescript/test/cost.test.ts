// calculateCost prices a usage as pi's calculateCost does, to the bit. (The corpus's cost cases
// pin the values across runtimes.)

import assert from "node:assert/strict";
import { test } from "node:test";
import { create } from "@bufbuild/protobuf";
import { calculateCost, ModelCostSchema, ModelCostTierSchema, ModelSchema, UsageSchema } from "pi-proto";
import { TEST_TIMEOUT } from "./support/messages.js";

const RATES = create(ModelCostSchema, { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 });

test("each part is the rate per million times the tokens, the total their sum", { timeout: TEST_TIMEOUT }, () => {
  const usage = create(UsageSchema, { input: 1n, output: 27n, cacheRead: 49030n, cacheWrite: 135n, totalTokens: 9n });
  const cost = calculateCost(RATES, usage);
  // What pi wrote for this line of a real session.
  assert.deepEqual(
    [cost.input, cost.output, cost.cacheRead, cost.cacheWrite, cost.total],
    [0.000005, 0.000675, 0.024515, 0.00084375, 0.02603875],
  );
});

test("the rate is divided before it is multiplied, and the parts added in pi's order", {
  timeout: TEST_TIMEOUT,
}, () => {
  // 3 / 1e6 * 7 and 3 * 7 / 1e6 differ in the last bit; pi divides first.
  const rates = create(ModelCostSchema, { input: 3, output: 0.1, cacheRead: 0.2, cacheWrite: 0.3 });
  const usage = create(UsageSchema, { input: 7n, output: 1n, cacheRead: 1n, cacheWrite: 1n });
  const cost = calculateCost(rates, usage);
  assert.equal(cost.input, (3 / 1_000_000) * 7);
  assert.notEqual(cost.input, (3 * 7) / 1_000_000);
  assert.equal(cost.total, cost.input! + cost.output! + cost.cacheRead! + cost.cacheWrite!);
});

test("a model is priced by its rates; one without rates costs nothing", { timeout: TEST_TIMEOUT }, () => {
  const usage = create(UsageSchema, { input: 1n, output: 114n, cacheWrite: 33637n, cost: { total: 99 } });
  const model = create(ModelSchema, { id: "claude-opus-4-5", provider: "anthropic", cost: RATES });
  assert.equal(calculateCost(model, usage).total, 0.21308625); // the usage's own cost is ignored
  assert.equal(calculateCost(create(ModelSchema, { id: "free", provider: "x" }), usage).total, 0);
});

const BASE = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };
const tier = (input: number, output: number, above: bigint) =>
  create(ModelCostTierSchema, {
    input,
    output,
    cacheRead: input / 10,
    cacheWrite: input * 1.25,
    inputTokensAbove: above,
  });
const counts = (input: bigint, cacheRead: bigint, cacheWrite: bigint, cacheWrite1h?: bigint) =>
  create(UsageSchema, { input, output: 1000n, cacheRead, cacheWrite, cacheWrite1h });

test("a prompt above a threshold takes the largest tier it exceeds, in any order", { timeout: TEST_TIMEOUT }, () => {
  const rates = create(ModelCostSchema, { ...BASE, tiers: [tier(6, 22.5, 200_000n), tier(4, 18, 128_000n)] });
  // The prompt is input + cacheRead + cacheWrite; strictly above 200,000 takes the 6 tier.
  const above = calculateCost(rates, counts(150_001n, 40_000n, 10_000n));
  assert.deepEqual([above.input, above.output, above.total], [0.900006, 0.022500000000000003, 1.021506]);
  assert.equal(above.totalFromProvider, false);
  // Exactly 200,000 does not exceed it: the 128,000 tier, given after it.
  const at = calculateCost(rates, counts(150_000n, 40_000n, 10_000n));
  assert.deepEqual([at.input, at.output], [0.6, 0.018000000000000002]);
  // Below every threshold: the base rates.
  const below = calculateCost(rates, counts(100_000n, 0n, 0n));
  assert.deepEqual([below.input, below.output], [0.3, 0.015000000000000001]);
});

test("one-hour cache writes cost twice the input rate of the chosen rates", { timeout: TEST_TIMEOUT }, () => {
  assert.equal(calculateCost(RATES, counts(1n, 0n, 33637n, 20000n)).cacheWrite, 0.28523125);
  // Absent and 0 are the same: every write at the cacheWrite rate.
  const absent = calculateCost(RATES, counts(1n, 0n, 33637n));
  assert.equal(absent.cacheWrite, 0.21023125);
  assert.deepEqual(calculateCost(RATES, counts(1n, 0n, 33637n, 0n)), absent);
  // Above a threshold, twice the tier's input rate: (7.5 * 6000 + 6 * 2 * 4000) / 1e6.
  const tiered = create(ModelCostSchema, { ...BASE, tiers: [tier(6, 22.5, 200_000n)] });
  assert.equal(calculateCost(tiered, counts(150_001n, 40_000n, 10_000n, 4000n)).cacheWrite, 0.093);
});

test("the cache write part adds both products before dividing", { timeout: TEST_TIMEOUT }, () => {
  const rates = create(ModelCostSchema, { input: 0.1, output: 0.2, cacheRead: 0.3, cacheWrite: 0.7 });
  const usage = create(UsageSchema, { input: 3n, output: 1n, cacheRead: 11n, cacheWrite: 5n, cacheWrite1h: 2n });
  const cost = calculateCost(rates, usage);
  assert.equal(cost.cacheWrite, 2.4999999999999994e-6); // each divided first: ...98e-6
  assert.equal(cost.total, 6.299999999999999e-6);
});
