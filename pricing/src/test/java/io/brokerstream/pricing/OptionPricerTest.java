package io.brokerstream.pricing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class OptionPricerTest {
  private final OptionPricer pricer = new OptionPricer(0.05, 5, 365);

  @Test
  void europeanUsesTheClosedForm() {
    assertThat(pricer.price(OptionType.CALL, ExerciseStyle.EUROPEAN, 100, 100, 1, 0.2))
        .isEqualTo(BlackScholes.price(OptionType.CALL, 100, 100, 1, 0.05, 0.2));
  }

  @Test
  void americanCallIsItsEuropeanValueAndAmericanPutHasAnExercisePremium() {
    assertThat(pricer.price(OptionType.CALL, ExerciseStyle.AMERICAN, 100, 100, 1, 0.2))
        .isEqualTo(BlackScholes.price(OptionType.CALL, 100, 100, 1, 0.05, 0.2));
    assertThat(pricer.price(OptionType.PUT, ExerciseStyle.AMERICAN, 100, 100, 1, 0.2))
        .isCloseTo(6.0904, within(1e-3))
        .isGreaterThan(BlackScholes.price(OptionType.PUT, 100, 100, 1, 0.05, 0.2));
  }

  @Test
  void timeToMaturityRunsToTheEndOfTheMaturityDayInTheModelsYears() {
    long maturity = java.time.LocalDate.of(2026, 12, 31).toEpochDay();
    long newYear = java.time.LocalDate.of(2026, 1, 1).toEpochDay() * 86_400_000L;
    assertThat(pricer.yearsToExpiry(maturity, newYear)).isEqualTo(1.0); // 365 days
    assertThat(pricer.yearsToExpiry(maturity, newYear + 182 * 86_400_000L + 43_200_000L))
        .isEqualTo(182.5 / 365);
    assertThat(pricer.yearsToExpiry(maturity, (maturity + 1) * 86_400_000L)).isEqualTo(0.0);
    assertThat(pricer.yearsToExpiry(maturity, (maturity + 9) * 86_400_000L)).isEqualTo(0.0);
    assertThat(new OptionPricer(0.05, 5, 360).yearsToExpiry(maturity, newYear))
        .isEqualTo(365.0 / 360);
  }

  @Test
  void aPricerSurvivesSerializationAsAFlinkJobShipsIt() throws Exception {
    var bytes = new java.io.ByteArrayOutputStream();
    try (var out = new java.io.ObjectOutputStream(bytes)) {
      out.writeObject(pricer);
    }
    OptionPricer copy;
    try (var in =
        new java.io.ObjectInputStream(new java.io.ByteArrayInputStream(bytes.toByteArray()))) {
      copy = (OptionPricer) in.readObject();
    }
    assertThat(copy.price(OptionType.PUT, ExerciseStyle.AMERICAN, 90, 100, 2, 0.3))
        .isEqualTo(pricer.price(OptionType.PUT, ExerciseStyle.AMERICAN, 90, 100, 2, 0.3));
  }
}
