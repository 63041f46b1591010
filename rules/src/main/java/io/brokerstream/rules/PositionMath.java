package io.brokerstream.rules;

import io.brokerstream.money.Micros;

/**
 * Position arithmetic for one fill, exact in micros. The books keep each position's cost basis
 * (what its open units cost, summed), never an average re-rounded per fill:
 *
 * <ul>
 *   <li>a fill in the direction of the position (or on a flat one) opens or adds: its cost (fill x
 *       quantity) is added to the cost basis, exactly;
 *   <li>a fill against it reduces, closes or flips it: the closed units take their share of the
 *       cost basis (all of it when the position closes; else closed / open of it, rounded
 *       half-even), and realize (fill x closed - that share) x multiplier for a long, the negative
 *       for a short; a flipped position's new side costs the fill price.
 * </ul>
 *
 * So however a member picks its quantities, the P&L a position realizes over its life, from open to
 * flat, is exactly what its fills received minus what they paid; a partial close can move at most
 * half a micro (times the multiplier) between that close and the next.
 */
public final class PositionMath {
  private PositionMath() {}

  public record Trade(
      PositionState after, long realized, long closedQuantity, long closedAvgCost) {}

  /**
   * @param signedQuantity positive for a buy, negative for a sell
   * @param multiplier the position's multiplier: the one it was booked with while it is open
   */
  public static Trade apply(
      PositionState before, long signedQuantity, long fillPrice, int multiplier) {
    long q0 = before.quantity();
    long q1 = Math.addExact(q0, signedQuantity);
    long version = before.version() + 1;
    if (q0 == 0 || Long.signum(q0) == Long.signum(signedQuantity)) {
      long cost =
          Math.addExact(before.costBasis(), Micros.times(fillPrice, Math.abs(signedQuantity)));
      return new Trade(
          new PositionState(q1, cost, before.realized(), version, multiplier), 0, 0, 0);
    }
    long open = Math.abs(q0);
    long closed = Math.min(Math.abs(signedQuantity), open);
    long closedCost = Micros.share(before.costBasis(), closed, open);
    long proceeds = Micros.times(fillPrice, closed);
    long perMultiplier =
        q0 > 0
            ? Math.subtractExact(proceeds, closedCost)
            : Math.subtractExact(closedCost, proceeds);
    long realized = Math.multiplyExact(perMultiplier, multiplier);
    long cost =
        q1 == 0
            ? 0
            : Long.signum(q1) == Long.signum(q0)
                ? before.costBasis() - closedCost
                : Micros.times(fillPrice, Math.abs(q1));
    PositionState after =
        new PositionState(
            q1, cost, Math.addExact(before.realized(), realized), version, multiplier);
    return new Trade(after, realized, closed, Micros.divide(closedCost, closed));
  }

  /** The cost basis x multiplier: the value a position commits (a short's too). */
  public static long exposure(PositionState p, int multiplier) {
    return Math.multiplyExact(p.costBasis(), multiplier);
  }

  /** The value a position commits at the multiplier it was booked with. */
  public static long exposure(PositionState p) {
    return exposure(p, p.multiplier());
  }

  /**
   * Whether a fill of {@code signedQuantity} against a position of {@code quantity} adds exposure:
   * it opens a flat position, adds to an open one, or closes one and opens the other side. A fill
   * that only reduces or closes never does.
   */
  public static boolean addsExposure(long quantity, long signedQuantity) {
    return quantity == 0
        || Long.signum(quantity) == Long.signum(signedQuantity)
        || Math.abs(signedQuantity) > Math.abs(quantity);
  }
}
