package io.brokerstream.streams.state;

import io.brokerstream.rules.PositionState;

/**
 * A position as its member's task stores it: the position, and the cash its fills moved (micros,
 * negative after buying). An account's cash is its deposit plus the cash of its positions, so a
 * fill writes one record (the position) instead of a position and an account balance.
 */
public record BookedPosition(PositionState state, long cash) {
  public static final BookedPosition NONE = new BookedPosition(PositionState.FLAT, 0);
}
