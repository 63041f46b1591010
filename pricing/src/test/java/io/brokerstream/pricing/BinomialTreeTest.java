package io.brokerstream.pricing;

import static io.brokerstream.pricing.ExerciseStyle.AMERICAN;
import static io.brokerstream.pricing.ExerciseStyle.EUROPEAN;
import static io.brokerstream.pricing.OptionType.CALL;
import static io.brokerstream.pricing.OptionType.PUT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class BinomialTreeTest {
  @Test
  void europeanTreeConvergesToBlackScholes() {
    for (OptionType type : OptionType.values()) {
      double bs = BlackScholes.price(type, 100, 100, 1, 0.05, 0.2);
      assertThat(BinomialTree.price(type, EUROPEAN, 100, 100, 1, 0.05, 0.2, 2000))
          .isCloseTo(bs, within(2e-3));
      assertThat(BinomialTree.price(type, EUROPEAN, 100, 100, 1, 0.05, 0.2, 100))
          .isCloseTo(bs, within(3e-2));
    }
  }

  @Test
  void americanPutReferenceValue() {
    // S=100, K=100, T=1, r=0.05, sigma=0.2: American put 6.0904 (a 10,000-step tree)
    assertThat(BinomialTree.price(PUT, AMERICAN, 100, 100, 1, 0.05, 0.2, 2000))
        .isCloseTo(6.0904, within(2e-3));
    // Hull, example 21.1: S=50, K=50, T=5/12, r=0.10, sigma=0.40, 5 steps: 4.49
    assertThat(BinomialTree.price(PUT, AMERICAN, 50, 50, 5.0 / 12, 0.10, 0.40, 5))
        .isCloseTo(4.49, within(5e-3));
  }

  @Test
  void americanIsWorthAtLeastEuropeanAndItsIntrinsicValue() {
    for (double s = 40; s <= 160; s += 10) {
      for (OptionType type : OptionType.values()) {
        double american = BinomialTree.price(type, AMERICAN, s, 100, 0.75, 0.05, 0.3, 200);
        double european = BinomialTree.price(type, EUROPEAN, s, 100, 0.75, 0.05, 0.3, 200);
        assertThat(american).isGreaterThanOrEqualTo(european - 1e-12);
        assertThat(american)
            .isGreaterThanOrEqualTo(type == CALL ? Math.max(s - 100, 0) : Math.max(100 - s, 0));
      }
    }
    // Deep in the money with a high rate, early exercise is worth something.
    assertThat(BinomialTree.price(PUT, AMERICAN, 60, 100, 1, 0.1, 0.2, 200))
        .isGreaterThan(BinomialTree.price(PUT, EUROPEAN, 60, 100, 1, 0.1, 0.2, 200) + 1);
  }

  @Test
  void americanCallWithoutDividendsEqualsEuropean() {
    double american = BinomialTree.price(CALL, AMERICAN, 100, 90, 1, 0.05, 0.25, 500);
    double european = BinomialTree.price(CALL, EUROPEAN, 100, 90, 1, 0.05, 0.25, 500);
    assertThat(american).isCloseTo(european, within(1e-9));
  }

  @Test
  void stableAtTheEdges() {
    assertThat(BinomialTree.price(PUT, AMERICAN, 80, 100, 0, 0.05, 0.2, 100)).isEqualTo(20.0);
    assertThat(BinomialTree.price(PUT, AMERICAN, 80, 100, 1, 0.05, 0.0, 100)).isEqualTo(20.0);
    assertThat(BinomialTree.price(PUT, AMERICAN, 80, 100, 1e-9, 0.05, 0.2, 100))
        .isCloseTo(20.0, within(1e-6));
    assertThat(BinomialTree.price(PUT, AMERICAN, 1e6, 1, 1, 0.05, 0.2, 100))
        .isCloseTo(0.0, within(1e-12));
  }

  /** The textbook roll-back, node prices from pow and intrinsic values from the enum. */
  static double textbook(
      OptionType type,
      ExerciseStyle style,
      double spot,
      double strike,
      double years,
      double rate,
      double sigma,
      int n) {
    double dt = years / n;
    double up = Math.exp(sigma * Math.sqrt(dt));
    double down = 1.0 / up;
    double growth = Math.exp(rate * dt);
    double p = (growth - down) / (up - down);
    double[] v = new double[n + 1];
    for (int i = 0; i <= n; i++) {
      v[i] = type.intrinsic(spot * Math.pow(up, i) * Math.pow(down, n - i), strike);
    }
    for (int step = n - 1; step >= 0; step--) {
      for (int i = 0; i <= step; i++) {
        double held = (p * v[i + 1] + (1 - p) * v[i]) / growth;
        double node = spot * Math.pow(up, i) * Math.pow(down, step - i);
        v[i] = style == AMERICAN ? Math.max(held, type.intrinsic(node, strike)) : held;
      }
    }
    return v[0];
  }

  @Test
  void theFastRollBackAgreesWithTheTextbookOne() {
    java.util.Random rnd = new java.util.Random(17);
    for (int k = 0; k < 2000; k++) {
      OptionType type = rnd.nextBoolean() ? CALL : PUT;
      ExerciseStyle style = rnd.nextBoolean() ? AMERICAN : EUROPEAN;
      double spot = 1 + rnd.nextDouble() * 500;
      double strike = spot * (0.3 + rnd.nextDouble() * 1.4);
      double years = 0.001 + rnd.nextDouble() * 3;
      double rate = rnd.nextDouble() * 0.1;
      double sigma = 0.05 + rnd.nextDouble() * 0.9;
      int steps = 1 + rnd.nextInt(200);
      double expected = textbook(type, style, spot, strike, years, rate, sigma, steps);
      assertThat(BinomialTree.price(type, style, spot, strike, years, rate, sigma, steps))
          .as(
              "%s %s S=%f K=%f T=%f r=%f sigma=%f n=%d",
              type, style, spot, strike, years, rate, sigma, steps)
          .isCloseTo(expected, within(1e-9 * Math.max(1.0, spot)));
    }
  }
}
