package io.brokerstream.rules;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.brokerstream.money.Micros;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Prices in doubt halt their instrument, and the feed (or an operator) ends the halt. Each row is a
 * run of ticks after a last accepted price of 26.235526 (band 10x, three ticks within 5 % of each
 * other confirm a level): what each tick did, and the price trading resumed at.
 */
class PriceBandTest {
  private final PriceBand band = new PriceBand(10, 0.05, 3);

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '#',
      value = {
        // what                                   # ticks                                  #
        // verdicts                          # price after
        "ticks within the band                     # 26.5 25.9 27                           # ACCEPT ACCEPT ACCEPT              # 27",
        "ten times down is still within the band   # 2.623553                               # ACCEPT                            # 2.623553",
        "a 95 % fall halts, then the feed confirms # 1.31 1.312 1.309 1.31                  # HALT HOLD RESUME ACCEPT           # 1.31",
        "a 1:20 reverse split                      # 524.71 525 524.9                       # HALT HOLD RESUME                  # 524.9",
        "a spike that reverts to the old level     # 2623.55 26.24 26.23 26.25              # HALT HOLD HOLD RESUME             # 26.25",
        "ticks that disagree keep it halted        # 1.31 2.5 1.31 2.5 1.31 1.3 1.31        # HALT HOLD HOLD HOLD HOLD HOLD RESUME # 1.31",
        "one tick within 5 % of the one before     # 1.31 1.3755 1.44                       # HALT HOLD RESUME                  # 1.44",
        "one just outside 5 % restarts the count   # 1.31 1.3756 1.44                       # HALT HOLD HOLD                    # 26.235526",
      })
  void aRunOfTicks(String what, String ticks, String verdicts, String priceAfter) {
    Long reference = Micros.parse("26.235526");
    PriceBand.Halt halt = null;
    List<String> seen = new ArrayList<>();
    long t = 1_000;
    for (String tick : ticks.trim().split("\\s+")) {
      long price = Micros.parse(tick);
      PriceBand.Step step = band.onTick(price, t, t, reference, halt, t);
      seen.add(step.verdict().name());
      if (step.verdict() == PriceBand.Verdict.ACCEPT
          || step.verdict() == PriceBand.Verdict.RESUME) {
        reference = price;
      }
      halt = step.halt();
      t += 100;
    }
    assertThat(String.join(" ", seen)).as(what).isEqualTo(verdicts.trim());
    assertThat(reference).as(what).isEqualTo(Micros.parse(priceAfter));
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '#',
      value = {
        "an operator's halt holds every tick, even agreeing ones # 26.3 26.31 26.32 26.3 # HOLD HOLD HOLD HOLD",
      })
  void anOperatorsHaltEndsOnlyWhenTheOperatorResumesIt(String what, String ticks, String verdicts) {
    PriceBand.Halt halt = PriceBand.operatorHalt(null, "ops", "news pending", 500);
    List<String> seen = new ArrayList<>();
    long t = 1_000;
    for (String tick : ticks.trim().split("\\s+")) {
      PriceBand.Step step = band.onTick(Micros.parse(tick), t, t, Micros.parse("26.2"), halt, t);
      seen.add(step.verdict().name());
      halt = step.halt();
      t += 100;
    }
    assertThat(String.join(" ", seen)).as(what).isEqualTo(verdicts.trim());
    assertThat(halt.byOperator()).isTrue();
    assertThat(halt.heldPrice()).as("the last tick held, for the resumption").isEqualTo(26_300_000);
    assertThat(halt.sinceMs()).isEqualTo(500);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({"1, 0.05, 3", "10, -0.1, 3", "10, 1, 3", "10, 0.05, 1"})
  void refusesABandThatCouldNotHalt(double factor, double fraction, int ticks) {
    assertThatThrownBy(() -> new PriceBand(factor, fraction, ticks))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
