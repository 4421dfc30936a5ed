package io.github.piproto;

import static io.github.piproto.Fixtures.TEST_TIMEOUT_SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.github.piproto.ai.v1.Cost;
import io.github.piproto.ai.v1.Model;
import io.github.piproto.ai.v1.ModelCost;
import io.github.piproto.ai.v1.Usage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** calculateCost, to the bit: rate / 1,000,000 * tokens, and the parts added in pi's order. */
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
    assertEquals(Cost.getDefaultInstance(), Costs.calculateCost(Model.getDefaultInstance(), usage));
  }
}
