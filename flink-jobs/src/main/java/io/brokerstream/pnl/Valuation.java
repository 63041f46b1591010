package io.brokerstream.pnl;

import io.brokerstream.money.Micros;
import io.brokerstream.pricing.ExerciseStyle;
import io.brokerstream.pricing.OptionPricer;
import io.brokerstream.pricing.OptionType;
import java.io.Serializable;

/**
 * Marks and money of a revaluation. The option model works in doubles; its result is rounded to the
 * micro once, and everything after that (market value, cost basis, P&L, roll-ups) is exact long
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
      long intrinsic = terms.call ? underlyingMicros - terms.strikeMicros : terms.strikeMicros - underlyingMicros;
      return Math.max(0L, intrinsic); // exact: no model involved
    }
    double value = pricer.price(type, terms.american ? ExerciseStyle.AMERICAN : ExerciseStyle.EUROPEAN, spot, strike,
        years, volatility);
    return Micros.ofModel(value);
  }

  /** Fills the money fields of a position record from its quantity, cost and mark. */
  public static PnlRecord position(PnlInput position, long underlyingMicros, long markMicros, long windowEnd,
      long computedTs, long firstTickTs) {
    PnlRecord r = new PnlRecord();
    r.scope = PnlRecord.Scope.POSITION;
    r.memberId = position.memberId;
    r.accountId = position.accountId;
    r.instrumentId = position.instrumentId;
    r.underlyingId = position.underlyingId;
    r.quantity = position.quantity;
    r.underlyingPriceMicros = underlyingMicros;
    r.markPriceMicros = markMicros;
    long units = Math.multiplyExact(position.quantity, (long) position.multiplier);
    r.marketValueMicros = Math.multiplyExact(units, markMicros);
    r.costBasisMicros = Math.multiplyExact(units, position.avgCostMicros);
    r.unrealizedMicros = Math.subtractExact(r.marketValueMicros, r.costBasisMicros);
    r.positions = position.quantity == 0 ? 0 : 1;
    r.windowEnd = windowEnd;
    r.computedTs = computedTs;
    r.firstTickTs = firstTickTs;
    return r;
  }

  /** The record of a position that was closed: nothing held, nothing to gain or lose, no price. */
  public static PnlRecord closed(PnlInput position, long at) {
    return position(position, -1, -1, at, at, 0L); // quantity 0: every amount is 0
  }
}
