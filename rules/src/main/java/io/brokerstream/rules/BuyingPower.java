package io.brokerstream.rules;

/**
 * The broker's one risk rule, in one place: what the decision checks (in both architectures) and
 * what a member reads back (the gateway's {@code /members/{id}/risk}).
 *
 * <p>A member's buying power is its deposited cash (all its accounts) + its credit limit + the P&L
 * its positions realized + the unrealized loss its open positions carry at their marks (a negative
 * number or zero: an unrealized gain gives no credit, since a mark can fall back before the gain is
 * realized). Against it stand the value committed to open positions at cost (|quantity| x cost x
 * multiplier, shorts and written options too) and what the member's working orders reserve.
 *
 * <p>A fill whose opening leg adds exposure (it opens, adds to, or flips a position) must leave
 * committed + reserved within the buying power that remains after the P&L the fill itself realizes
 * (a flip at a loss pays for its loss first). A fill that only reduces or closes a position is
 * always allowed: refusing it would keep the member in the risk the rule is there to bound.
 */
public record BuyingPower(long deposited, long credit, long realized, long unrealizedLoss) {
  public BuyingPower {
    if (unrealizedLoss > 0) {
      throw new IllegalArgumentException("an unrealized loss is <= 0, got " + unrealizedLoss);
    }
  }

  /** Deposited + credit + realized + unrealized loss (micros). */
  public long total() {
    return Math.addExact(Math.addExact(Math.addExact(deposited, credit), realized), unrealizedLoss);
  }

  /** What is left for new exposure after {@code committed} and {@code reserved} (micros). */
  public long available(long committed, long reserved) {
    return Math.subtractExact(Math.subtractExact(total(), committed), reserved);
  }

  /** The same member after a fill that realized {@code realizedByFill}. */
  public BuyingPower afterRealizing(long realizedByFill) {
    return new BuyingPower(
        deposited, credit, Math.addExact(realized, realizedByFill), unrealizedLoss);
  }

  /**
   * What a working order holds of the buying power while it works: what its fill at its level would
   * take from what is available (committed value it adds, less the P&L it realizes), or 0 for an
   * order whose fill would only reduce.
   */
  public static long hold(boolean addsExposure, long committedDelta, long realizedByFill) {
    return addsExposure ? Math.max(0, Math.subtractExact(committedDelta, realizedByFill)) : 0;
  }
}
