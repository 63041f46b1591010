package io.brokerstream.rules;

/**
 * A position as the order flow keeps it: signed quantity, average cost per unit and realized P&L
 * (micros), and a version that grows by one per fill.
 */
public record PositionState(long quantity, long avgCost, long realized, long version) {
  public static final PositionState FLAT = new PositionState(0, 0, 0, 0);
}
