package io.brokerstream.money;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import org.junit.jupiter.api.Test;

class MicrosTest {
  @Test
  void decimalsConvertExactly() {
    assertThat(Micros.parse("101.25")).isEqualTo(101_250_000L);
    assertThat(Micros.parse("-0.000001")).isEqualTo(-1L);
    assertThat(Micros.toDecimal(101_250_000L)).isEqualTo(new BigDecimal("101.250000"));
    assertThat(Micros.format(-1)).isEqualTo("-0.000001");
  }

  @Test
  void moreThanSixPlacesIsAnErrorNotARounding() {
    assertThatThrownBy(() -> Micros.parse("0.0000001")).isInstanceOf(ArithmeticException.class);
  }

  @Test
  void productsFailOnOverflowInsteadOfWrapping() {
    assertThat(Micros.times(Micros.parse("10.5"), 3)).isEqualTo(Micros.parse("31.5"));
    assertThatThrownBy(() -> Micros.times(Long.MAX_VALUE / 2, 3))
        .isInstanceOf(ArithmeticException.class);
  }

  @Test
  void averagesRoundHalfEvenToTheMicro() {
    assertThat(Micros.divide(10, 4)).isEqualTo(2); // 2.5 -> 2
    assertThat(Micros.divide(14, 4)).isEqualTo(4); // 3.5 -> 4
    assertThat(Micros.divide(-10, 4)).isEqualTo(-2);
    assertThat(Micros.divide(Micros.parse("100"), 3)).isEqualTo(33_333_333L);
  }

  @Test
  void modelValuesRoundHalfEven() {
    assertThat(Micros.ofModel(10.450583572185565)).isEqualTo(10_450_584L);
    assertThat(Micros.ofModel(0.0000005)).isEqualTo(0L); // binary 5e-7 is just below half
    assertThatThrownBy(() -> Micros.ofModel(Double.NaN)).isInstanceOf(ArithmeticException.class);
  }
}
