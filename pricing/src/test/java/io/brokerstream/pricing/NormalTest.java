package io.brokerstream.pricing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class NormalTest {
  @Test
  void cdfMatchesReferenceValues() {
    assertThat(Normal.cdf(0.0)).isCloseTo(0.5, within(1e-15));
    assertThat(Normal.cdf(1.96)).isCloseTo(0.9750021048517795, within(1e-14));
    assertThat(Normal.cdf(-1.0)).isCloseTo(0.15865525393145707, within(1e-14));
    assertThat(Normal.cdf(0.3)).isCloseTo(0.6179114221889527, within(1e-14));
    assertThat(Normal.cdf(-0.3)).isCloseTo(0.3820885778110474, within(1e-14));
    assertThat(Normal.cdf(5.0)).isCloseTo(0.9999997133484281, within(1e-14));
    assertThat(Normal.cdf(-8.0)).isCloseTo(6.22096057427178e-16, within(1e-20));
    assertThat(Normal.cdf(40)).isEqualTo(1.0);
    assertThat(Normal.cdf(-40)).isEqualTo(0.0);
  }

  @Test
  void cdfIsSymmetricAndMonotone() {
    double previous = 0;
    for (double x = -10; x <= 10; x += 0.01) {
      double c = Normal.cdf(x);
      assertThat(c + Normal.cdf(-x)).isCloseTo(1.0, within(1e-14));
      assertThat(c).isGreaterThanOrEqualTo(previous);
      previous = c;
    }
  }
}
