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
    PositionState position = PositionState.atAverage(before, Micros.parse(avgBefore), 7, 3, 1);

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
            PositionMath.exposure(
                PositionState.atAverage(quantity, Micros.parse(avg), 0, 0, 1), multiplier))
        .as(what)
        .isEqualTo(Micros.parse(expected));
  }

  /**
   * The cost basis is kept exact, so adds never round: what a position realizes over its life is
   * exactly what its fills received minus what they paid, however the member picks its quantities.
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '#',
      value = {
        // what                                                         # fills (qty@price, ...)
        //   # realized
        "two adds whose average is half a micro, sold out               # 1@0.000001 1@0.000002 -2@0.000002 # 0.000001",
        "the same rounded the other way                                 # 1@0.000003 1@0.000002 -2@0.000002 # -0.000001",
        "three adds at a third of a micro each, sold one at a time      # 1@0.000001 1@0.000001 1@0.000002 -1@0.000002 -1@0.000002 -1@0.000002 # 0.000002",
        "a short built and covered the same way                         # -1@0.000001 -1@0.000002 2@0.000001 # 0.000001",
        "a flip closes the exact cost and opens at the fill              # 1@0.000001 1@0.000002 -3@0.000002 1@0.000002 # 0.000001",
      })
  void aPositionRealizesExactlyWhatItsFillsMovedOnceItIsFlat(
      String what, String fills, String expected) {
    PositionState p = PositionState.FLAT;
    long realized = 0;
    long cash = 0;
    for (String fill : fills.trim().split("\\s+")) {
      String[] qp = fill.split("@");
      long q = Long.parseLong(qp[0]);
      long price = Micros.parse(qp[1]);
      PositionMath.Trade t = PositionMath.apply(p, q, price, 1);
      realized += t.realized();
      cash -= Micros.times(price, q);
      p = t.after();
    }
    assertThat(p.quantity()).as(what).isZero();
    assertThat(p.costBasis()).as(what).isZero();
    assertThat(realized).as(what).isEqualTo(Micros.parse(expected)).isEqualTo(cash);
  }

  /**
   * Random lives of a position (adds, partial closes, flips) at prices of a few micros, where every
   * average rounds: whenever it is flat its realized P&L equals the cash its fills moved, and no
   * single close is more than half a micro from the exact share of the cost it closed.
   */
  @Test
  void noSequenceOfFillsAccumulatesRounding() {
    java.util.Random rng = new java.util.Random(20261207);
    for (int life = 0; life < 2_000; life++) {
      PositionState p = PositionState.FLAT;
      long realized = 0;
      long cash = 0;
      for (int step = 0; step < 40; step++) {
        long q = rng.nextInt(7) - 3;
        if (q == 0) {
          q = -p.quantity(); // back to flat now and then
          if (q == 0) {
            continue;
          }
        }
        long price = 1 + rng.nextInt(9);
        PositionMath.Trade t = PositionMath.apply(p, q, price, 1);
        if (t.closedQuantity() > 0) {
          // the exact share, as a fraction: cost x closed / open
          java.math.BigDecimal exactShare =
              java.math.BigDecimal.valueOf(p.costBasis())
                  .multiply(java.math.BigDecimal.valueOf(t.closedQuantity()))
                  .divide(
                      java.math.BigDecimal.valueOf(Math.abs(p.quantity())),
                      12,
                      java.math.RoundingMode.HALF_EVEN);
          java.math.BigDecimal proceeds = java.math.BigDecimal.valueOf(price * t.closedQuantity());
          java.math.BigDecimal exact =
              p.quantity() > 0 ? proceeds.subtract(exactShare) : exactShare.subtract(proceeds);
          assertThat(exact.subtract(java.math.BigDecimal.valueOf(t.realized())).abs())
              .isLessThanOrEqualTo(new java.math.BigDecimal("0.5"));
        }
        realized += t.realized();
        cash -= price * q;
        p = t.after();
        if (p.quantity() == 0) {
          assertThat(realized).isEqualTo(cash);
        }
      }
    }
  }

  @Test
  void aPositionBeyondWhatALongHoldsFailsInsteadOfWrapping() {
    PositionState huge = PositionState.atAverage(Long.MAX_VALUE - 1, 1, 0, 0, 1);
    assertThatThrownBy(() -> PositionMath.apply(huge, 2, 1, 1))
        .isInstanceOf(ArithmeticException.class);
  }
}
