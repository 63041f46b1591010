package io.brokerstream.pricing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class GaussLegendreTest {
  @Test
  void anNPointRuleIntegratesPolynomialsUpToDegree2nMinus1Exactly() {
    GaussLegendre rule = GaussLegendre.of(8);
    for (int degree = 0; degree <= 15; degree++) {
      double sum = 0;
      for (int i = 0; i < 8; i++) {
        sum += rule.weights()[i] * Math.pow(rule.nodes()[i], degree);
      }
      double exact = degree % 2 == 1 ? 0.0 : 2.0 / (degree + 1);
      assertThat(sum).as("x^%d", degree).isCloseTo(exact, within(1e-13));
    }
  }

  @Test
  void andNotBeyond() {
    GaussLegendre rule = GaussLegendre.of(4);
    double sum = 0;
    for (int i = 0; i < 4; i++) {
      sum += rule.weights()[i] * Math.pow(rule.nodes()[i], 8);
    }
    assertThat(Math.abs(sum - 2.0 / 9)).isGreaterThan(1e-3);
  }
}
