package io.brokerstream.baseline;

import static org.assertj.core.api.Assertions.assertThat;

import io.brokerstream.money.Micros;
import io.brokerstream.pricing.BlackScholes;
import io.brokerstream.pricing.ExerciseStyle;
import io.brokerstream.pricing.MarketModel;
import io.brokerstream.pricing.OptionPricer;
import io.brokerstream.pricing.OptionType;
import java.time.LocalDate;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;

class RevaluationTest {
  private final OptionPricer pricer = MarketModel.load().pricer();
  private final long now =
      LocalDate.of(2026, 6, 1).atStartOfDay(ZoneOffset.UTC).toInstant().toEpochMilli();
  private final long spot = Micros.parse("100");
  private final long strike = Micros.parse("95");

  @Test
  void aLiveOptionIsMarkedAtTheModelsValueRoundedOnceToTheMicro() {
    long maturity = LocalDate.of(2026, 9, 18).toEpochDay();
    long mark =
        Revaluation.optionMark(
            pricer, OptionType.CALL, ExerciseStyle.EUROPEAN, strike, maturity, spot, 0.3, now);
    double model =
        BlackScholes.price(
            OptionType.CALL, 100, 95, pricer.yearsToExpiry(maturity, now), pricer.rate(), 0.3);
    assertThat(mark).isEqualTo(Micros.ofModel(model)).isGreaterThan(Micros.parse("5"));
  }

  @Test
  void anExpiredOptionIsWorthItsIntrinsicValueExactly() {
    long expired = LocalDate.of(2026, 5, 15).toEpochDay();
    assertThat(
            Revaluation.optionMark(
                pricer, OptionType.CALL, ExerciseStyle.AMERICAN, strike, expired, spot, null, now))
        .isEqualTo(Micros.parse("5"));
    assertThat(
            Revaluation.optionMark(
                pricer, OptionType.PUT, ExerciseStyle.EUROPEAN, strike, expired, spot, 0.3, now))
        .isZero();
  }

  @Test
  void aLiveOptionWithoutVolatilityKeepsItsLastMark() {
    long maturity = LocalDate.of(2026, 9, 18).toEpochDay();
    assertThat(
            Revaluation.optionMark(
                pricer, OptionType.PUT, ExerciseStyle.EUROPEAN, strike, maturity, spot, null, now))
        .isEqualTo(-1);
  }
}
