package io.brokerstream.streams.state;

import io.brokerstream.avro.Position;
import io.brokerstream.money.Micros;
import io.brokerstream.rules.PositionState;

/**
 * What a member's task decides with, read from the position it stores: the position, and the cash
 * its fills moved (micros, negative after buying). An account's cash is its deposit plus the cash
 * of its positions, so a fill writes one record (the position) instead of a position and an account
 * balance.
 */
public record BookedPosition(PositionState state, long cash) {
  public static final BookedPosition NONE = new BookedPosition(PositionState.FLAT, 0);

  /**
   * The stored position's figures; none stored is flat with no cash moved. A record written before
   * positions carried their cost basis is taken at its average cost.
   */
  public static BookedPosition of(Position p) {
    if (p == null) {
      return NONE;
    }
    long quantity = p.getQuantity();
    long cost = p.getCostBasis() == null ? 0 : Micros.of(p.getCostBasis());
    PositionState state =
        cost == 0 && quantity != 0
            ? PositionState.atAverage(
                quantity,
                Micros.of(p.getAvgCost()),
                Micros.of(p.getRealizedPnl()),
                p.getVersion(),
                p.getMultiplier())
            : new PositionState(
                quantity,
                quantity == 0 ? 0 : cost,
                Micros.of(p.getRealizedPnl()),
                p.getVersion(),
                p.getMultiplier());
    return new BookedPosition(state, Micros.of(p.getCash()));
  }
}
