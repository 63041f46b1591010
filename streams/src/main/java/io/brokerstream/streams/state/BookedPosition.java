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

  /** The stored position's figures; none stored is flat with no cash moved. */
  public static BookedPosition of(Position p) {
    if (p == null) {
      return NONE;
    }
    return new BookedPosition(
        new PositionState(
            p.getQuantity(),
            Micros.of(p.getAvgCost()),
            Micros.of(p.getRealizedPnl()),
            p.getVersion()),
        Micros.of(p.getCash()));
  }
}
