package io.brokerstream.pricing;

import static io.brokerstream.pricing.OptionType.CALL;
import static io.brokerstream.pricing.OptionType.PUT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class BlackScholesTest {
  @Test
  void referenceValues() {
    // S=100, K=100, T=1, r=0.05, sigma=0.2 (Hull): call 10.4506, put 5.5735
    assertThat(BlackScholes.price(CALL, 100, 100, 1, 0.05, 0.2)).isCloseTo(10.4506, within(5e-5));
    assertThat(BlackScholes.price(PUT, 100, 100, 1, 0.05, 0.2)).isCloseTo(5.5735, within(5e-5));
    // Hull, example 15.6: S=42, K=40, T=0.5, r=0.1, sigma=0.2: call 4.76, put 0.81
    assertThat(BlackScholes.price(CALL, 42, 40, 0.5, 0.1, 0.2)).isCloseTo(4.7594, within(5e-4));
    assertThat(BlackScholes.price(PUT, 42, 40, 0.5, 0.1, 0.2)).isCloseTo(0.8086, within(5e-4));
  }

  @ParameterizedTest
  @CsvSource({
    "100,100,1,0.05,0.2",
    "50,80,0.25,0.01,0.6",
    "300,150,2,0.03,0.15",
    "10,10,0.001,0.05,0.4",
    "100,100,30,0.05,0.2",
    "1,1000,1,0.05,0.2"
  })
  void putCallParity(double s, double k, double t, double r, double sigma) {
    double call = BlackScholes.price(CALL, s, k, t, r, sigma);
    double put = BlackScholes.price(PUT, s, k, t, r, sigma);
    assertThat(call - put).isCloseTo(s - k * Math.exp(-r * t), within(1e-9 * Math.max(s, k)));
  }

  @Test
  void monotoneInSpotAndVolatility() {
    double prevCall = -1;
    double prevPut = Double.MAX_VALUE;
    for (double s = 50; s <= 150; s += 1) {
      double call = BlackScholes.price(CALL, s, 100, 0.5, 0.05, 0.3);
      double put = BlackScholes.price(PUT, s, 100, 0.5, 0.05, 0.3);
      assertThat(call).isGreaterThan(prevCall);
      assertThat(put).isLessThan(prevPut);
      prevCall = call;
      prevPut = put;
    }
    double prev = 0;
    for (double sigma = 0.05; sigma <= 1.5; sigma += 0.05) {
      double call = BlackScholes.price(CALL, 100, 110, 0.5, 0.05, sigma);
      assertThat(call).isGreaterThan(prev);
      prev = call;
    }
  }

  @Test
  void stableNearExpiryAndDeepInOrOutOfTheMoney() {
    assertThat(BlackScholes.price(CALL, 105, 100, 0, 0.05, 0.2)).isEqualTo(5.0);
    assertThat(BlackScholes.price(PUT, 105, 100, -1, 0.05, 0.2)).isEqualTo(0.0);
    assertThat(BlackScholes.price(CALL, 105, 100, 1e-9, 0.05, 0.2)).isCloseTo(5.0, within(1e-6));
    assertThat(BlackScholes.price(PUT, 95, 100, 1e-9, 0.05, 0.2)).isCloseTo(5.0, within(1e-6));
    assertThat(BlackScholes.price(CALL, 100, 100, 1e-9, 0.05, 0.2)).isBetween(0.0, 1e-3);
    assertThat(BlackScholes.price(CALL, 1e6, 1, 1, 0.05, 0.2))
        .isCloseTo(1e6 - Math.exp(-0.05), within(1e-6));
    assertThat(BlackScholes.price(CALL, 1, 1e6, 1, 0.05, 0.2)).isBetween(0.0, 1e-12);
    assertThat(BlackScholes.price(PUT, 1e6, 1, 1, 0.05, 0.2)).isBetween(0.0, 1e-12);
    assertThat(BlackScholes.price(CALL, 100, 90, 1, 0.05, 0.0))
        .isCloseTo(100 - 90 * Math.exp(-0.05), within(1e-12));
    for (double t : new double[] {1e-12, 1e-8, 1e-4, 1.0, 50.0}) {
      for (double s : new double[] {1e-6, 1, 100, 1e8}) {
        double v = BlackScholes.price(CALL, s, 100, t, 0.05, 0.8);
        assertThat(Double.isFinite(v) && v >= 0).isTrue();
      }
    }
  }
}
