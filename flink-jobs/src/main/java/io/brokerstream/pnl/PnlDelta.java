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

  /**
   * The change in the sum of the positions' losses (each position's unrealized P&L where below 0):
   * what margin counts, since no gain of one position offsets another's loss.
   */
  public long unrealizedLossMicros;

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
    unrealizedLossMicros =
        Math.addExact(
            unrealizedLossMicros,
            Math.subtractExact(
                loss(marketValueAfter, costAfter), loss(marketValueBefore, costBefore)));
  }

  /**
   * A position's loss at its mark: its unrealized P&L where below 0. Called with one position's
   * figures; for an account's (the member roll-up's input) use {@link #addLoss}.
   */
  static long loss(long marketValue, long costBasis) {
    return Math.min(0, Math.subtractExact(marketValue, costBasis));
  }

  /** Adds a change of the summed losses as it is (an account's, passed up to its member). */
  void addLoss(long lossAfter, long lossBefore) {
    unrealizedLossMicros =
        Math.addExact(unrealizedLossMicros, Math.subtractExact(lossAfter, lossBefore));
  }

  /** Adds another delta of the same account (or member) to this one. */
  void merge(PnlDelta o) {
    marketValueMicros = Math.addExact(marketValueMicros, o.marketValueMicros);
    costBasisMicros = Math.addExact(costBasisMicros, o.costBasisMicros);
    unrealizedMicros = Math.addExact(unrealizedMicros, o.unrealizedMicros);
    unrealizedLossMicros = Math.addExact(unrealizedLossMicros, o.unrealizedLossMicros);
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
        + " loss="
        + unrealizedLossMicros
        + " n="
        + positions
        + " w="
        + windowEnd
        + "}";
  }
}
