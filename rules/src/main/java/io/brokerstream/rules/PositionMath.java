package io.brokerstream.rules;

import io.brokerstream.money.Micros;

/**
 * Position arithmetic for one fill, exact in micros. A fill in the direction of the position (or on
 * a flat one) opens or adds: the average cost becomes the quantity-weighted mean, rounded half-even
 * to the micro. A fill against it reduces, closes or flips it: the closed units realize closed x
 * (fill - average cost) x multiplier for a long (the negative for a short); a flipped position's
 * new side costs the fill price.
 */
public final class PositionMath {
  private PositionMath() {}

  public record Trade(
      PositionState after, long realized, long closedQuantity, long closedAvgCost) {}

  /**
   * @param signedQuantity positive for a buy, negative for a sell
   */
  public static Trade apply(
      PositionState before, long signedQuantity, long fillPrice, int multiplier) {
    long q0 = before.quantity();
    long q1 = Math.addExact(q0, signedQuantity);
    long version = before.version() + 1;
    if (q0 == 0 || Long.signum(q0) == Long.signum(signedQuantity)) {
      long cost =
          Math.addExact(
              Micros.times(before.avgCost(), Math.abs(q0)),
              Micros.times(fillPrice, Math.abs(signedQuantity)));
      long avg = Micros.divide(cost, Math.abs(q1));
      return new Trade(new PositionState(q1, avg, before.realized(), version), 0, 0, 0);
    }
    long closed = Math.min(Math.abs(signedQuantity), Math.abs(q0));
    long perUnit = q0 > 0 ? fillPrice - before.avgCost() : before.avgCost() - fillPrice;
    long realized = Math.multiplyExact(Micros.times(perUnit, closed), multiplier);
    long avg = q1 == 0 ? 0 : Long.signum(q1) == Long.signum(q0) ? before.avgCost() : fillPrice;
    PositionState after =
        new PositionState(q1, avg, Math.addExact(before.realized(), realized), version);
    return new Trade(after, realized, closed, before.avgCost());
  }

  /** |quantity| x average cost x multiplier: the value a position commits. */
  public static long exposure(PositionState p, int multiplier) {
    return Math.multiplyExact(Micros.times(p.avgCost(), Math.abs(p.quantity())), multiplier);
  }
}
