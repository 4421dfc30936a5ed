package io.github.piproto;

import static io.github.piproto.Fixtures.TEST_TIMEOUT_SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.piproto.ai.v1.Cost;
import io.github.piproto.ai.v1.Model;
import io.github.piproto.ai.v1.ModelCost;
import io.github.piproto.ai.v1.ModelCostTier;
import io.github.piproto.ai.v1.Usage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** calculateCost, to the bit as pi computes it: tiers, one-hour cache writes, pi's order. */
class CostsTest {
  private static final ModelCost RATES =
      ModelCost.newBuilder()
          .setInput(0.1)
          .setOutput(0.3)
          .setCacheRead(0.03)
          .setCacheWrite(0.7)
          .build();

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void eachPartDividesTheRateFirstThenMultiplies() {
    Usage usage =
        Usage.newBuilder().setInput(3).setOutput(7).setCacheRead(11).setCacheWrite(13).build();
    Cost cost = Costs.calculateCost(RATES, usage);
    assertEquals(3.0000000000000004e-07, cost.getInput());
    assertEquals(2.1e-06, cost.getOutput()); // 0.3 * 7 / 1e6 would be 2.1000000000000002e-06
    assertEquals(3.2999999999999996e-07, cost.getCacheRead());
    assertEquals(9.1e-06, cost.getCacheWrite());
    assertEquals(1.1829999999999999e-05, cost.getTotal());
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void aModelsRatesAreItsCost() {
    Usage usage = Usage.newBuilder().setInput(1).setOutput(114).setCacheWrite(33637).build();
    Model model =
        Model.newBuilder()
            .setId("claude-opus-4-5")
            .setProvider("anthropic")
            .setCost(
                ModelCost.newBuilder()
                    .setInput(5)
                    .setOutput(25)
                    .setCacheRead(0.5)
                    .setCacheWrite(6.25))
            .build();
    Cost cost = Costs.calculateCost(model, usage);
    assertEquals(0.21308625, cost.getTotal());
    assertEquals(Costs.calculateCost(model.getCost(), usage), cost);
    assertEquals(
        // Every amount is set, as pi's Cost has them all.
        Cost.newBuilder()
            .setInput(0)
            .setOutput(0)
            .setCacheRead(0)
            .setCacheWrite(0)
            .setTotal(0)
            .setTotalFromProvider(false)
            .build(),
        Costs.calculateCost(Model.getDefaultInstance(), usage));
  }

  private static ModelCostTier tier(double input, double output, long above) {
    return ModelCostTier.newBuilder()
        .setInput(input)
        .setOutput(output)
        .setCacheRead(input / 10)
        .setCacheWrite(input * 1.25)
        .setInputTokensAbove(above)
        .build();
  }

  private static Usage counts(long input, long cacheRead, long cacheWrite) {
    return Usage.newBuilder()
        .setInput(input)
        .setOutput(1000)
        .setCacheRead(cacheRead)
        .setCacheWrite(cacheWrite)
        .build();
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void aPromptAboveAThresholdTakesTheLargestTierItExceedsInAnyOrder() {
    ModelCost rates =
        ModelCost.newBuilder()
            .setInput(3)
            .setOutput(15)
            .setCacheRead(0.3)
            .setCacheWrite(3.75)
            .addTiers(tier(6, 22.5, 200_000))
            .addTiers(tier(4, 18, 128_000))
            .build();
    // The prompt is input + cache read + cache write; strictly above 200,000 takes the 6 tier.
    Cost above = Costs.calculateCost(rates, counts(150_001, 40_000, 10_000));
    assertEquals(0.900006, above.getInput());
    assertEquals(0.022500000000000003, above.getOutput());
    assertEquals(1.021506, above.getTotal());
    assertFalse(above.getTotalFromProvider());
    assertTrue(above.hasTotalFromProvider());
    // Exactly 200,000 does not exceed it: the 128,000 tier, given after it.
    Cost at = Costs.calculateCost(rates, counts(150_000, 40_000, 10_000));
    assertEquals(0.6, at.getInput());
    assertEquals(0.018000000000000002, at.getOutput());
    // Below every threshold: the base rates.
    Cost below = Costs.calculateCost(rates, counts(100_000, 0, 0));
    assertEquals(0.3, below.getInput());
    assertEquals(0.015000000000000001, below.getOutput());
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void oneHourCacheWritesCostTwiceTheInputRateOfTheChosenRates() {
    ModelCost opus =
        ModelCost.newBuilder()
            .setInput(5)
            .setOutput(25)
            .setCacheRead(0.5)
            .setCacheWrite(6.25)
            .build();
    Usage absent = counts(1, 0, 33_637);
    Cost split = Costs.calculateCost(opus, absent.toBuilder().setCacheWrite1H(20_000).build());
    assertEquals(0.28523125, split.getCacheWrite());
    // Absent and 0 are the same: every write at the cache write rate.
    assertEquals(0.21023125, Costs.calculateCost(opus, absent).getCacheWrite());
    assertEquals(
        Costs.calculateCost(opus, absent),
        Costs.calculateCost(opus, absent.toBuilder().setCacheWrite1H(0).build()));
    // Above a threshold, twice the tier's input rate: (7.5 * 6000 + 6 * 2 * 4000) / 1e6.
    ModelCost tiered = opus.toBuilder().addTiers(tier(6, 22.5, 200_000)).build();
    Usage usage = counts(150_001, 40_000, 10_000).toBuilder().setCacheWrite1H(4000).build();
    assertEquals(0.093, Costs.calculateCost(tiered, usage).getCacheWrite());
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void theCacheWritePartAddsBothProductsBeforeDividing() {
    ModelCost rates =
        ModelCost.newBuilder()
            .setInput(0.1)
            .setOutput(0.2)
            .setCacheRead(0.3)
            .setCacheWrite(0.7)
            .build();
    Usage usage =
        Usage.newBuilder()
            .setInput(3)
            .setOutput(1)
            .setCacheRead(11)
            .setCacheWrite(5)
            .setCacheWrite1H(2)
            .build();
    Cost cost = Costs.calculateCost(rates, usage);
    assertEquals(2.4999999999999994e-06, cost.getCacheWrite()); // each divided first: ...98e-06
    assertEquals(6.299999999999999e-06, cost.getTotal());
  }
}
