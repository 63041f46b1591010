package io.brokerstream.rules;

/**
 * A member's risk: the value committed to open positions (sum over positions of |quantity| x
 * average cost x multiplier) and the P&L realized so far, in micros.
 */
public record RiskState(long committed, long realized) {
  public static final RiskState NONE = new RiskState(0, 0);
}
