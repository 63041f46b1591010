package io.brokerstream.pnl;

import java.util.Objects;

/**
 * Everything the revaluation needs, from four topics, as one record type keyed by underlying
 * instrument (so that an equity, the positions in it and the options on it meet in one task). A
 * Flink POJO: public fields, no-argument constructor; the unused fields of a kind stay at defaults.
 */
public class PnlInput {
  public enum Kind {
    TICK,
    POSITION,
    OPTION_TERMS,
    VOLATILITY
  }

  public Kind kind;

  /** The equity this input belongs to: the key. */
  public String underlyingId;

  public String instrumentId;

  // TICK
  public long priceMicros;
  public long eventTs;
  public long sequence;

  // POSITION
  public String accountId;
  public String memberId;
  public long quantity;
  public long costMicros;
  public int multiplier;
  public long version;

  /** What the account roll-up was last told of this position (Revaluer state, not input). */
  public long reportedMarketValueMicros;

  public long reportedCostBasisMicros;
  public int reportedPositions;

  /** An option position's terms, found once rather than looked up per window (not state). */
  public transient PnlInput terms;

  /**
   * Of a position (not state): the mark it is valued at (its equity's, or its option's), found
   * once: a window reads it without touching the ids or the terms, which are elsewhere in memory.
   */
  transient MarkState valuedAt;

  // Of option terms (not state): the option's mark, computed once a window however many positions
  // hold it, and what the outputs were last told of it.
  transient MarkState mark;

  // OPTION_TERMS
  public boolean call;
  public boolean american;
  public long strikeMicros;

  /** Days since 1970-01-01 of the maturity date. */
  public int maturityEpochDay;

  // VOLATILITY
  public double volatility;

  public PnlInput() {}

  public static PnlInput tick(String instrumentId, long priceMicros, long eventTs, long sequence) {
    PnlInput in = new PnlInput();
    in.kind = Kind.TICK;
    in.underlyingId = instrumentId;
    in.instrumentId = instrumentId;
    in.priceMicros = priceMicros;
    in.eventTs = eventTs;
    in.sequence = sequence;
    return in;
  }

  public static PnlInput position(
      String accountId,
      String memberId,
      String instrumentId,
      String underlyingId,
      int multiplier,
      long quantity,
      long avgCost,
      long version) {
    return positionAtCost(
        accountId,
        memberId,
        instrumentId,
        underlyingId,
        multiplier,
        quantity,
        Math.multiplyExact(avgCost, Math.abs(quantity)),
        version);
  }

  /**
   * A position with the exact cost of its open units (micros, without the multiplier, as the order
   * flow books it).
   */
  public static PnlInput positionAtCost(
      String accountId,
      String memberId,
      String instrumentId,
      String underlyingId,
      int multiplier,
      long quantity,
      long costMicros,
      long version) {
    PnlInput in = new PnlInput();
    in.kind = Kind.POSITION;
    in.accountId = accountId;
    in.memberId = memberId;
    in.instrumentId = instrumentId;
    in.underlyingId = underlyingId;
    in.multiplier = multiplier;
    in.quantity = quantity;
    in.costMicros = costMicros;
    in.version = version;
    return in;
  }

  public static PnlInput optionTerms(
      String instrumentId,
      String underlyingId,
      boolean call,
      boolean american,
      long strikeMicros,
      int maturityEpochDay,
      int multiplier) {
    PnlInput in = new PnlInput();
    in.kind = Kind.OPTION_TERMS;
    in.instrumentId = instrumentId;
    in.underlyingId = underlyingId;
    in.call = call;
    in.american = american;
    in.strikeMicros = strikeMicros;
    in.maturityEpochDay = maturityEpochDay;
    in.multiplier = multiplier;
    return in;
  }

  public static PnlInput volatility(String instrumentId, double volatility) {
    PnlInput in = new PnlInput();
    in.kind = Kind.VOLATILITY;
    in.instrumentId = instrumentId;
    in.underlyingId = instrumentId;
    in.volatility = volatility;
    return in;
  }

  /**
   * Makes a position's ids the JVM's canonical strings: the thousands of positions of one account
   * (or instrument) then share one string instead of each holding its own copy, and a map lookup by
   * one of them matches by identity instead of comparing characters in memory no other position
   * touched. Returns this.
   */
  PnlInput canonicalIds() {
    accountId = accountId == null ? null : accountId.intern();
    memberId = memberId == null ? null : memberId.intern();
    instrumentId = instrumentId == null ? null : instrumentId.intern();
    underlyingId = underlyingId == null ? null : underlyingId.intern();
    return this;
  }

  /** A field-for-field copy (strings are immutable and shared). */
  public PnlInput copy() {
    PnlInput c = new PnlInput();
    c.kind = kind;
    c.underlyingId = underlyingId;
    c.instrumentId = instrumentId;
    c.priceMicros = priceMicros;
    c.eventTs = eventTs;
    c.sequence = sequence;
    c.accountId = accountId;
    c.memberId = memberId;
    c.quantity = quantity;
    c.costMicros = costMicros;
    c.multiplier = multiplier;
    c.version = version;
    c.reportedMarketValueMicros = reportedMarketValueMicros;
    c.reportedCostBasisMicros = reportedCostBasisMicros;
    c.reportedPositions = reportedPositions;
    c.terms = terms;
    c.valuedAt = valuedAt;
    c.call = call;
    c.american = american;
    c.strikeMicros = strikeMicros;
    c.maturityEpochDay = maturityEpochDay;
    c.volatility = volatility;
    return c;
  }

  /** Equal in every field a position keeps (its revaluation state included). */
  boolean samePosition(PnlInput o) {
    return o != null
        && kind == o.kind
        && Objects.equals(underlyingId, o.underlyingId)
        && Objects.equals(instrumentId, o.instrumentId)
        && Objects.equals(accountId, o.accountId)
        && Objects.equals(memberId, o.memberId)
        && quantity == o.quantity
        && costMicros == o.costMicros
        && multiplier == o.multiplier
        && version == o.version
        && reportedMarketValueMicros == o.reportedMarketValueMicros
        && reportedCostBasisMicros == o.reportedCostBasisMicros
        && reportedPositions == o.reportedPositions;
  }

  /** Equal in every field option terms have. */
  boolean sameTerms(PnlInput o) {
    return o != null
        && kind == o.kind
        && Objects.equals(underlyingId, o.underlyingId)
        && Objects.equals(instrumentId, o.instrumentId)
        && call == o.call
        && american == o.american
        && strikeMicros == o.strikeMicros
        && maturityEpochDay == o.maturityEpochDay
        && multiplier == o.multiplier;
  }

  public String positionKey() {
    return accountId + "|" + instrumentId;
  }

  @Override
  public String toString() {
    return kind
        + "{"
        + underlyingId
        + "/"
        + instrumentId
        + (kind == Kind.POSITION ? " " + accountId + " q=" + quantity : "")
        + (kind == Kind.TICK ? " p=" + priceMicros + " ts=" + eventTs : "")
        + "}";
  }
}
