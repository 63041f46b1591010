package io.brokerstream.pnl;

import java.util.Objects;

/**
 * Unrealized P&L of one position, or rolled up for an account or a member. Money in micros (scale
 * 6): market value = quantity x mark x multiplier, cost basis = quantity x average cost x
 * multiplier, unrealized = market value - cost basis; all exact long arithmetic. A Flink POJO.
 */
public class PnlRecord {
  public enum Scope {
    POSITION,
    ACCOUNT,
    MEMBER
  }

  public Scope scope;
  public String memberId;
  public String accountId; // POSITION, ACCOUNT
  public String instrumentId; // POSITION
  public String underlyingId; // POSITION
  public long quantity; // POSITION; 0 once closed
  public long underlyingPriceMicros = -1; // POSITION; -1: none
  public long markPriceMicros = -1; // POSITION; -1: none
  public long marketValueMicros;
  public long costBasisMicros;
  public long unrealizedMicros;

  /** The positions' unrealized P&L where it is a loss, summed (0 or negative). */
  public long unrealizedLossMicros;

  public int positions;
  public long windowEnd;
  public long computedTs;

  /** The earliest tick event time this result covers (0: none, e.g. a position change only). */
  public long firstTickTs;

  /**
   * The Kafka key's bytes when the producer of the record has them at hand (not part of the
   * record).
   */
  public transient byte[] keyBytes;

  public PnlRecord() {}

  /** The Kafka key: account|instrument, account, or member. */
  public String key() {
    return switch (scope) {
      case POSITION -> accountId + "|" + instrumentId;
      case ACCOUNT -> accountId;
      case MEMBER -> memberId;
    };
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof PnlRecord r)) {
      return false;
    }
    return scope == r.scope
        && Objects.equals(memberId, r.memberId)
        && Objects.equals(accountId, r.accountId)
        && Objects.equals(instrumentId, r.instrumentId)
        && Objects.equals(underlyingId, r.underlyingId)
        && quantity == r.quantity
        && underlyingPriceMicros == r.underlyingPriceMicros
        && markPriceMicros == r.markPriceMicros
        && marketValueMicros == r.marketValueMicros
        && costBasisMicros == r.costBasisMicros
        && unrealizedMicros == r.unrealizedMicros
        && unrealizedLossMicros == r.unrealizedLossMicros
        && positions == r.positions
        && windowEnd == r.windowEnd
        && computedTs == r.computedTs
        && firstTickTs == r.firstTickTs;
  }

  @Override
  public int hashCode() {
    // from the ids' own (cached) hashes: no key string built per record
    return Objects.hash(scope, memberId, accountId, instrumentId, windowEnd);
  }

  @Override
  public String toString() {
    return scope
        + "{"
        + key()
        + " q="
        + quantity
        + " mark="
        + markPriceMicros
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
