package io.brokerstream.pnl;

import java.util.Objects;

/**
 * What one unit of a held instrument is worth at a window's end: the equity's price, or an option's
 * model value at it, in micros. A position's unrealized P&L follows from it and the position alone
 * (quantity x multiplier x (mark - average cost)), so the job writes one record per instrument that
 * moved, however many positions hold it. A Flink POJO.
 */
public class MarkRecord {
  public String instrumentId;
  public String underlyingId;
  public long underlyingPriceMicros;
  public long markMicros;
  public long windowEnd;
  public long computedTs;

  /** The earliest tick event time of the window (0: none). */
  public long firstTickTs;

  public MarkRecord() {}

  static MarkRecord of(String instrumentId, String underlyingId, MarkState m) {
    MarkRecord r = new MarkRecord();
    r.instrumentId = instrumentId;
    r.underlyingId = underlyingId;
    r.underlyingPriceMicros = m.underlyingMicros;
    r.markMicros = m.micros;
    r.windowEnd = m.windowEnd;
    r.computedTs = m.computedTs;
    r.firstTickTs = m.firstTickTs;
    return r;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof MarkRecord r
        && Objects.equals(instrumentId, r.instrumentId)
        && Objects.equals(underlyingId, r.underlyingId)
        && underlyingPriceMicros == r.underlyingPriceMicros
        && markMicros == r.markMicros
        && windowEnd == r.windowEnd
        && computedTs == r.computedTs
        && firstTickTs == r.firstTickTs;
  }

  @Override
  public int hashCode() {
    return Objects.hash(instrumentId, windowEnd);
  }

  @Override
  public String toString() {
    return "Mark{"
        + instrumentId
        + " "
        + markMicros
        + " on "
        + underlyingId
        + "@"
        + underlyingPriceMicros
        + " w="
        + windowEnd
        + "}";
  }
}
