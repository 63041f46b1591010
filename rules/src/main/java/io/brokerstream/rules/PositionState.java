package io.brokerstream.rules;

import io.brokerstream.money.Micros;

/**
 * A position as the order flow keeps it: signed quantity, the cost of its open units (micros, the
 * sum of what each open unit was bought or sold at, exact: never re-rounded), realized P&L
 * (micros), a version that grows by one per fill, and the multiplier it was booked with (0 while it
 * never traded).
 *
 * <p>The average cost is derived from the cost basis, rounded half-even to the micro, for display
 * and for readers; the books keep the exact cost, so no sequence of adds can accumulate rounding
 * into realized P&L.
 */
public record PositionState(
    long quantity, long costBasis, long realized, long version, int multiplier) {
  public static final PositionState FLAT = new PositionState(0, 0, 0, 0, 0);

  public PositionState {
    if (quantity == 0 && costBasis != 0) {
      throw new IllegalArgumentException("a flat position has no cost basis, got " + costBasis);
    }
  }

  /**
   * A position known by its average cost only (records written before the cost basis was kept, and
   * tables of cases): its cost basis is average x |quantity|.
   */
  public static PositionState atAverage(
      long quantity, long avgCost, long realized, long version, int multiplier) {
    return new PositionState(
        quantity,
        quantity == 0 ? 0 : Micros.times(avgCost, Math.abs(quantity)),
        realized,
        version,
        multiplier);
  }

  /** The cost basis per open unit, rounded half-even to the micro; 0 when flat. */
  public long avgCost() {
    return quantity == 0 ? 0 : Micros.divide(costBasis, Math.abs(quantity));
  }
}
