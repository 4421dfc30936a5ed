package io.github.piproto;

import io.github.piproto.ai.v1.Cost;
import io.github.piproto.ai.v1.Model;
import io.github.piproto.ai.v1.ModelCost;
import io.github.piproto.ai.v1.ModelCostTier;
import io.github.piproto.ai.v1.Usage;

/**
 * What a call's usage costs at a model's rates, computed as pi's calculateCost computes it, so the
 * doubles are pi's to the bit. The rates are those of the tier with the largest {@code
 * inputTokensAbove} that the prompt (input + cache read + cache write tokens) exceeds, else the
 * base rates. Input, output and cache read are each the rate (dollars per million tokens) divided
 * by 1,000,000, then times the tokens. Cache writes with one-hour retention ({@code cacheWrite1h},
 * a part of {@code cacheWrite}; absent is 0) cost twice the input rate and the rest the cache write
 * rate: (cache write rate * rest + input rate * 2 * one-hour) / 1,000,000. The total adds input,
 * output, cache read and cache write in that order, and {@code totalFromProvider} is false.
 */
public final class Costs {
  private Costs() {}

  /** The cost of {@code usage} at {@code model}'s rates; nothing when the model has no rates. */
  public static Cost calculateCost(Model model, Usage usage) {
    return model.hasCost()
        ? calculateCost(model.getCost(), usage)
        : ZERO_COST.toBuilder().setTotalFromProvider(false).build();
  }

  /** Every amount 0, each set: pi's Cost has them all, so absent would not be pi's cost. */
  static final Cost ZERO_COST =
      Cost.newBuilder()
          .setInput(0)
          .setOutput(0)
          .setCacheRead(0)
          .setCacheWrite(0)
          .setTotal(0)
          .build();

  /** pi's usage before anything is counted: every count and amount 0, each set. */
  public static Usage zeroUsage() {
    return Usage.newBuilder()
        .setInput(0)
        .setOutput(0)
        .setCacheRead(0)
        .setCacheWrite(0)
        .setTotalTokens(0)
        .setCost(ZERO_COST)
        .build();
  }

  /** The cost of {@code usage} at {@code rates}; the usage's own cost is ignored. */
  public static Cost calculateCost(ModelCost rates, Usage usage) {
    // Token counts are doubles in pi, so the prompt is summed and compared as doubles too; an
    // absent count reads as 0 (the generated getter's default).
    double inputTokens = usage.getInput();
    double outputTokens = usage.getOutput();
    double cacheReadTokens = usage.getCacheRead();
    double cacheWriteTokens = usage.getCacheWrite();
    double prompt = inputTokens + cacheReadTokens + cacheWriteTokens;
    double inputRate = rates.getInput();
    double outputRate = rates.getOutput();
    double cacheReadRate = rates.getCacheRead();
    double cacheWriteRate = rates.getCacheWrite();
    double threshold = -1;
    for (ModelCostTier tier : rates.getTiersList()) {
      double above = tier.getInputTokensAbove();
      // Strictly above, and the first of equal thresholds wins, as in pi.
      if (prompt > above && above > threshold) {
        inputRate = tier.getInput();
        outputRate = tier.getOutput();
        cacheReadRate = tier.getCacheRead();
        cacheWriteRate = tier.getCacheWrite();
        threshold = above;
      }
    }
    double longWrite = usage.getCacheWrite1H(); // 0 when absent
    double shortWrite = cacheWriteTokens - longWrite;
    double input = inputRate / 1_000_000 * inputTokens;
    double output = outputRate / 1_000_000 * outputTokens;
    double cacheRead = cacheReadRate / 1_000_000 * cacheReadTokens;
    double cacheWrite = (cacheWriteRate * shortWrite + inputRate * 2 * longWrite) / 1_000_000;
    return Cost.newBuilder()
        .setInput(input)
        .setOutput(output)
        .setCacheRead(cacheRead)
        .setCacheWrite(cacheWrite)
        .setTotal(input + output + cacheRead + cacheWrite)
        .setTotalFromProvider(false)
        .build();
  }
}
