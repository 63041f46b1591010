package io.brokerstream.rules;

/**
 * The broker's own bounds on a decision (the members' own limits are reference data):
 *
 * @param maxPrice the largest price or limit any order may name (micros)
 * @param maxQuantity the most units any order may trade
 * @param maxPriceAgeMs no fill at a price older than this: from the event time of the equity's last
 *     accepted tick to the broker's time of the order (0: no bound)
 * @param maxMarksAgeMs how old the P&L flow's word on a member's open positions may be before an
 *     order that adds exposure is refused STALE_MARKS (0: no bound)
 * @param limitBandFactor a limit price more than this factor from the price it would fill at is
 *     refused as erroneous, PRICE_OUT_OF_BAND (0: no band)
 */
public record DecisionLimits(
    long maxPrice,
    long maxQuantity,
    long maxPriceAgeMs,
    long maxMarksAgeMs,
    double limitBandFactor) {
  public DecisionLimits {
    if (limitBandFactor != 0 && !(limitBandFactor > 1)) {
      throw new IllegalArgumentException(
          "a limit band is a factor above 1, got " + limitBandFactor);
    }
    if (maxPriceAgeMs < 0 || maxMarksAgeMs < 0) {
      throw new IllegalArgumentException("ages are 0 (no bound) or positive");
    }
  }

  /** Only the price and quantity bounds. */
  public static DecisionLimits basic(long maxPrice, long maxQuantity) {
    return new DecisionLimits(maxPrice, maxQuantity, 0, 0, 0);
  }
}
