package io.brokerstream.rules;

import io.brokerstream.avro.ReasonCode;

/** What the broker decided for one order. */
public sealed interface Decision {

  record Rejected(ReasonCode reason, String detail) implements Decision {}

  /**
   * A fill: its price per unit, the position and member risk after it, the P&L it realized (with
   * the quantity it closed and their average cost) and how it moves the account's cash (all
   * micros); whether its opening leg adds exposure (opens, adds to or flips the position), which is
   * what buying power bounds.
   */
  record Filled(
      long fillPrice,
      int multiplier,
      String underlyingId,
      PositionState position,
      RiskState risk,
      long realized,
      long closedQuantity,
      long closedAvgCost,
      long cashDelta,
      boolean addsExposure)
      implements Decision {}
}
