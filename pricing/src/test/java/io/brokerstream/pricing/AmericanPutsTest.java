package io.brokerstream.pricing;

import static io.brokerstream.pricing.ExerciseStyle.AMERICAN;
import static io.brokerstream.pricing.OptionType.PUT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class AmericanPutsTest {
  static final double RATE = 0.05;
  private final AmericanPuts puts = new AmericanPuts(RATE, 5);

  /** A fine CRR tree, odd and even step counts averaged: their oscillations cancel. */
  static double reference(double spot, double strike, double years, double rate, double sigma) {
    return 0.5
        * (BinomialTree.price(PUT, AMERICAN, spot, strike, years, rate, sigma, 3000)
            + BinomialTree.price(PUT, AMERICAN, spot, strike, years, rate, sigma, 3001));
  }

  @Test
  void everyRandomContractIsWithinATenthOfAPercentOrACentOfAFineTree() {
    SplittableRandom rnd = new SplittableRandom(7);
    for (int i = 0; i < 120; i++) {
      double spot = 100 * (0.5 + 1.5 * rnd.nextDouble());
      double sigma = 0.05 + 0.95 * rnd.nextDouble();
      double years = 1.0 / 365 + (3.0 - 1.0 / 365) * rnd.nextDouble();
      double reference = reference(spot, 100, years, RATE, sigma);
      // the tree this replaced (100 steps) misses this on about 4 contracts in 10
      assertThat(puts.price(spot, 100, years, sigma))
          .as("S=%s T=%s sigma=%s", spot, years, sigma)
          .isCloseTo(reference, within(Math.max(0.001 * reference, 0.01)));
    }
  }

  @Test
  void theContractsTheSmoothedTreeMissedAreWithinTolerance() {
    // long in-the-money puts at low volatility, where the 84-step smoothed, extrapolated tree was
    // off
    double[][] contracts = {
      {90.56, 1.783, 0.13}, {87.25, 2.788, 0.15}, {68.60, 2.991, 0.31}, {92.47, 2.037, 0.13}
    };
    for (double[] c : contracts) {
      double reference = reference(c[0], 100, c[1], RATE, c[2]);
      assertThat(puts.price(c[0], 100, c[1], c[2]))
          .isCloseTo(reference, within(0.25 * Math.max(0.001 * reference, 0.01)));
    }
  }

  @Test
  void textbookValue() {
    // S = K = 100, T = 1, r = 0.05, sigma = 0.2: 6.09037 (CRR trees of 10,000 and 20,000 steps,
    // extrapolated)
    assertThat(puts.price(100, 100, 1, 0.2)).isCloseTo(6.09037, within(5e-4));
  }

  @Test
  void worthAtLeastItsExerciseAndEuropeanValuesAndFallingWithSpot() {
    double previous = Double.MAX_VALUE;
    for (double s = 40; s <= 200; s += 2.5) {
      double american = puts.price(s, 100, 0.75, 0.3);
      assertThat(american).isGreaterThanOrEqualTo(Math.max(100 - s, 0));
      assertThat(american)
          .isGreaterThanOrEqualTo(BlackScholes.price(PUT, s, 100, 0.75, RATE, 0.3) - 1e-12);
      assertThat(american).isLessThanOrEqualTo(previous);
      previous = american;
    }
    // deep in the money with a high rate, early exercise is worth something
    AmericanPuts highRate = new AmericanPuts(0.1, 5);
    assertThat(highRate.price(70, 100, 1, 0.2))
        .isGreaterThan(BlackScholes.price(PUT, 70, 100, 1, 0.1, 0.2) + 1);
  }

  @Test
  void edges() {
    assertThat(puts.price(80, 100, 0, 0.2)).isEqualTo(20.0);
    assertThat(puts.price(80, 100, 1, 0.0)).isEqualTo(20.0);
    assertThat(puts.price(80, 100, 1e-9, 0.2)).isCloseTo(20.0, within(1e-6));
    assertThat(puts.price(1e6, 1, 1, 0.2)).isCloseTo(0.0, within(1e-12));
    assertThat(puts.price(10, 100, 1, 0.2)).isEqualTo(90.0); // deep in the exercise region
    // without interest to earn, waiting never costs: the European value
    assertThat(new AmericanPuts(0.0, 5).price(90, 100, 1, 0.3))
        .isEqualTo(BlackScholes.price(PUT, 90, 100, 1, 0.0, 0.3));
    assertThat(new AmericanPuts(-0.01, 5).price(90, 100, 1, 0.3))
        .isEqualTo(BlackScholes.price(PUT, 90, 100, 1, -0.01, 0.3));
  }

  @Test
  void maturitiesBeyondTheHorizonAndExtremeVolatilities() {
    double[][] contracts = {
      {80, 12, 0.25}, {95, 7.5, 0.1}, {100, 0.5, 2.5}, {100, 2, 0.02}, {120, 30, 0.4}
    };
    for (double[] c : contracts) {
      double reference = reference(c[0], 100, c[1], RATE, c[2]);
      assertThat(puts.price(c[0], 100, c[1], c[2]))
          .as("S=%s T=%s sigma=%s", c[0], c[1], c[2])
          .isCloseTo(reference, within(Math.max(0.001 * reference, 0.01)));
    }
  }

  @Test
  void aPriceDoesNotDependOnWhichPutsWerePricedBefore() {
    double fresh = new AmericanPuts(RATE, 5).price(90, 100, 2, 0.3);
    AmericanPuts used = new AmericanPuts(RATE, 5);
    used.price(90, 100, 9, 0.3); // a longer put first: its boundary covers a longer horizon
    used.price(70, 100, 0.1, 0.3);
    assertThat(used.price(90, 100, 2, 0.3)).isEqualTo(fresh);
    assertThat(used.cachedBoundaries()).isEqualTo(2); // one per volatility and horizon
  }

  @Test
  void theCacheIsBounded() {
    AmericanPuts many = new AmericanPuts(RATE, 5);
    for (int i = 0; i <= AmericanPuts.MAX_BOUNDARIES + 10; i++) {
      many.price(90, 100, 1, 0.1 + i * 1e-5);
    }
    assertThat(many.cachedBoundaries()).isLessThanOrEqualTo(AmericanPuts.MAX_BOUNDARIES);
  }

  @Test
  void theBoundaryStartsAtTheStrikeAndFallsTowardThePerpetualPuts() {
    ExerciseBoundary b = ExerciseBoundary.solve(RATE, 0.3, 5);
    double perpetual = 2 * RATE / (2 * RATE + 0.09);
    assertThat(b.ratio(0)).isEqualTo(1.0);
    double previous = 1.0;
    for (double t = 0.01; t <= 5; t += 0.05) {
      double r = b.ratio(t);
      assertThat(r).isLessThan(previous).isGreaterThan(perpetual);
      previous = r;
    }
  }
}
