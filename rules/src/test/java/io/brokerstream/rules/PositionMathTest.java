package io.brokerstream.rules;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.brokerstream.money.Micros;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** One fill against a position, every way it can go, exact to the micro. */
class PositionMathTest {

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '#',
      value = {
        // what                                  # qty0 # avg0  # fill # mult # after # avg after  #
        // realized # closed
        "opening a long                          # 0    # 0     # 10   # 1    # 5     # 10         # 0        # 0",
        "opening a short                         # 0    # 0     # 10   # 1    # -5    # 10         # 0        # 0",
        "adding at another price averages        # 10   # 10    # 20   # 1    # 30    # 16.666667  # 0        # 0",
        "an average rounds half-even (up to even)# 1    # 0.000001# 0.000002# 1 # 2   # 0.000002   # 0        # 0",
        "an average rounds half-even (down to even)# 1  # 0.000003# 0.000002# 1 # 2   # 0.000002   # 0        # 0",
        "reducing a long realizes its gain       # 10   # 10    # 12   # 1    # 6     # 10         # 8        # 4",
        "reducing a long realizes its loss       # 10   # 10    # 7    # 1    # 6     # 10         # -12      # 4",
        "closing a long flattens its cost        # 10   # 10    # 12   # 1    # 0     # 0          # 20       # 10",
        "covering a short at a lower price gains # -10  # 10    # 8    # 1    # -4    # 10         # 12       # 6",
        "flipping a long costs the new side fill # 10   # 10    # 12   # 1    # -5    # 12         # 20       # 10",
        "flipping a short                        # -10  # 10    # 9    # 1    # 5     # 9          # 10       # 10",
        "options realize per contract x 100      # 2    # 1.5   # 2    # 100  # 1     # 1.5        # 50       # 1",
      })
  void aFill(
      String what,
      long before,
      String avgBefore,
      String fill,
      int multiplier,
      long after,
      String avgAfter,
      String realized,
      long closed) {
    PositionState position = new PositionState(before, Micros.parse(avgBefore), 7, 3);

    PositionMath.Trade trade =
        PositionMath.apply(position, after - before, Micros.parse(fill), multiplier);

    assertThat(trade.after().quantity()).as(what).isEqualTo(after);
    assertThat(trade.after().avgCost()).as(what).isEqualTo(Micros.parse(avgAfter));
    assertThat(trade.realized()).as(what).isEqualTo(Micros.parse(realized));
    assertThat(trade.after().realized()).as(what).isEqualTo(7 + Micros.parse(realized));
    assertThat(trade.closedQuantity()).as(what).isEqualTo(closed);
    assertThat(trade.closedAvgCost()).as(what).isEqualTo(closed == 0 ? 0 : Micros.parse(avgBefore));
    assertThat(trade.after().version()).as(what).isEqualTo(4);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '#',
      value = {
        "flat commits nothing # 0   # 0   # 1   # 0",
        "a long               # 5   # 10  # 1   # 50",
        "a short commits too  # -5  # 10  # 1   # 50",
        "per contract         # 2   # 1.5 # 100 # 300",
      })
  void exposure(String what, long quantity, String avg, int multiplier, String expected) {
    assertThat(
            PositionMath.exposure(new PositionState(quantity, Micros.parse(avg), 0, 0), multiplier))
        .as(what)
        .isEqualTo(Micros.parse(expected));
  }

  @Test
  void aPositionBeyondWhatALongHoldsFailsInsteadOfWrapping() {
    PositionState huge = new PositionState(Long.MAX_VALUE - 1, 1, 0, 0);
    assertThatThrownBy(() -> PositionMath.apply(huge, 2, 1, 1))
        .isInstanceOf(ArithmeticException.class);
  }
}
