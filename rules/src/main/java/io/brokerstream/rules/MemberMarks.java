package io.brokerstream.rules;

/**
 * What the P&L flow last said of a member's open positions at their marks: the unrealized loss they
 * carry (micros, 0 or negative: each losing position's loss, no gain netted against it), how many
 * were open, and when it computed that (ms, its clock).
 */
public record MemberMarks(long unrealizedLoss, int positions, long computedMs) {
  public MemberMarks {
    if (unrealizedLoss > 0) {
      throw new IllegalArgumentException("an unrealized loss is <= 0, got " + unrealizedLoss);
    }
  }
}
