package io.brokerstream.pnl;

import io.brokerstream.money.Micros;
import io.brokerstream.pricing.ExerciseStyle;
import io.brokerstream.pricing.OptionPricer;
import io.brokerstream.pricing.OptionType;
import java.io.Serializable;

/**
 * An option's mark. The option model works in doubles; its result is rounded to the micro once, and
 * everything after that (market value, cost basis, P&L, roll-ups: the Revaluer's) is exact long
 * arithmetic that fails loudly rather than overflow.
 */
public final class Valuation implements Serializable {
  private static final long serialVersionUID = 1L;
  private final OptionPricer pricer;

  public Valuation(OptionPricer pricer) {
    this.pricer = pricer;
  }

  /** An option's mark in micros: the model's value, or intrinsic value once expired. */
  public long optionMark(PnlInput terms, long underlyingMicros, double volatility, long atMillis) {
    OptionType type = terms.call ? OptionType.CALL : OptionType.PUT;
    double spot = Micros.toModel(underlyingMicros);
    double strike = Micros.toModel(terms.strikeMicros);
    double years = pricer.yearsToExpiry(terms.maturityEpochDay, atMillis);
    if (years <= 0.0) {
      long intrinsic =
          terms.call
              ? underlyingMicros - terms.strikeMicros
              : terms.strikeMicros - underlyingMicros;
      return Math.max(0L, intrinsic); // exact: no model involved
    }
    double value =
        pricer.price(
            type,
            terms.american ? ExerciseStyle.AMERICAN : ExerciseStyle.EUROPEAN,
            spot,
            strike,
            years,
            volatility);
    return Micros.ofModel(value);
  }
}
