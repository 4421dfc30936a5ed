package io.github.piproto;

import io.github.piproto.ai.v1.Cost;
import io.github.piproto.ai.v1.Model;
import io.github.piproto.ai.v1.ModelCost;
import io.github.piproto.ai.v1.Usage;

/**
 * What a call's usage costs at a model's rates, computed as pi's calculateCost computes it, so the
 * doubles are pi's to the bit: each part is the rate (dollars per million tokens) divided by
 * 1,000,000, then times the token count, and the total adds input, output, cache read and cache
 * write in that order.
 */
public final class Costs {
  private Costs() {}

  /** The cost of {@code usage} at {@code model}'s rates; nothing when the model has no rates. */
  public static Cost calculateCost(Model model, Usage usage) {
    return model.hasCost() ? calculateCost(model.getCost(), usage) : Cost.getDefaultInstance();
  }

  /** The cost of {@code usage} at {@code rates}; the usage's own cost is ignored. */
  public static Cost calculateCost(ModelCost rates, Usage usage) {
    double input = rates.getInput() / 1_000_000 * usage.getInput();
    double output = rates.getOutput() / 1_000_000 * usage.getOutput();
    double cacheRead = rates.getCacheRead() / 1_000_000 * usage.getCacheRead();
    double cacheWrite = rates.getCacheWrite() / 1_000_000 * usage.getCacheWrite();
    return Cost.newBuilder()
        .setInput(input)
        .setOutput(output)
        .setCacheRead(cacheRead)
        .setCacheWrite(cacheWrite)
        .setTotal(input + output + cacheRead + cacheWrite)
        .build();
  }
}
