package io.brokerstream.pnl;

/**
 * How much a roll-up's totals move: the change in market value, cost basis, P&L and open positions
 * of one account (from its positions) or one member (from its accounts), in micros. Stages pass
 * deltas up instead of their full records, so the revaluation of a hundred positions of one account
 * in one window crosses the network as one record, and a roll-up needs no copy of its children. A
 * Flink POJO.
 */
public class PnlDelta {
  public String memberId;
  public String accountId;
  public long marketValueMicros;
  public long costBasisMicros;
  public long unrealizedMicros;
  public int positions;
  public long windowEnd;

  /** The earliest tick event time the change covers (0: none). */
  public long firstTickTs;

  public PnlDelta() {}

  static PnlDelta of(String memberId, String accountId) {
    PnlDelta d = new PnlDelta();
    d.memberId = memberId;
    d.accountId = accountId;
    return d;
  }

  /** Adds the move from {@code before} to {@code after} (either may be all zeros). */
  void add(
      long marketValueAfter,
      long marketValueBefore,
      long costAfter,
      long costBefore,
      int positionsAfter,
      int positionsBefore) {
    long mv = Math.subtractExact(marketValueAfter, marketValueBefore);
    long cost = Math.subtractExact(costAfter, costBefore);
    marketValueMicros = Math.addExact(marketValueMicros, mv);
    costBasisMicros = Math.addExact(costBasisMicros, cost);
    unrealizedMicros = Math.addExact(unrealizedMicros, Math.subtractExact(mv, cost));
    positions += positionsAfter - positionsBefore;
  }

  /** Adds another delta of the same account (or member) to this one. */
  void merge(PnlDelta o) {
    marketValueMicros = Math.addExact(marketValueMicros, o.marketValueMicros);
    costBasisMicros = Math.addExact(costBasisMicros, o.costBasisMicros);
    unrealizedMicros = Math.addExact(unrealizedMicros, o.unrealizedMicros);
    positions += o.positions;
    cover(o.windowEnd, o.firstTickTs);
  }

  void cover(long windowEnd, long firstTickTs) {
    this.windowEnd = Math.max(this.windowEnd, windowEnd);
    if (firstTickTs > 0 && (this.firstTickTs == 0 || firstTickTs < this.firstTickTs)) {
      this.firstTickTs = firstTickTs;
    }
  }

  @Override
  public String toString() {
    return "Delta{"
        + (accountId != null ? accountId : memberId)
        + " mv="
        + marketValueMicros
        + " cost="
        + costBasisMicros
        + " pnl="
        + unrealizedMicros
        + " n="
        + positions
        + " w="
        + windowEnd
        + "}";
  }
}
