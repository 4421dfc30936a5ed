// calculateCost prices a usage as pi's calculateCost does, to the bit. (The corpus's cost cases
// pin the values across runtimes.)

import assert from "node:assert/strict";
import { test } from "node:test";
import { create } from "@bufbuild/protobuf";
import { ModelCostSchema, ModelSchema, UsageSchema, calculateCost } from "pi-proto";
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

test("the rate is divided before it is multiplied, and the parts added in pi's order", { timeout: TEST_TIMEOUT }, () => {
  // 3 / 1e6 * 7 and 3 * 7 / 1e6 differ in the last bit; pi divides first.
  const rates = create(ModelCostSchema, { input: 3, output: 0.1, cacheRead: 0.2, cacheWrite: 0.3 });
  const usage = create(UsageSchema, { input: 7n, output: 1n, cacheRead: 1n, cacheWrite: 1n });
  const cost = calculateCost(rates, usage);
  assert.equal(cost.input, (3 / 1_000_000) * 7);
  assert.notEqual(cost.input, (3 * 7) / 1_000_000);
  assert.equal(cost.total, cost.input + cost.output + cost.cacheRead + cost.cacheWrite);
});

test("a model is priced by its rates; one without rates costs nothing", { timeout: TEST_TIMEOUT }, () => {
  const usage = create(UsageSchema, { input: 1n, output: 114n, cacheWrite: 33637n, cost: { total: 99 } });
  const model = create(ModelSchema, { id: "claude-opus-4-5", provider: "anthropic", cost: RATES });
  assert.equal(calculateCost(model, usage).total, 0.21308625); // the usage's own cost is ignored
  assert.equal(calculateCost(create(ModelSchema, { id: "free", provider: "x" }), usage).total, 0);
});
