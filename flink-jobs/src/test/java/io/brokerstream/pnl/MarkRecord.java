package io.brokerstream.pnl;

import java.util.Objects;

/**
 * One held instrument's mark from an equity's marks record, flattened with the record's window
 * fields: what the tests assert on, one instrument at a time.
 */
class MarkRecord {
  public String instrumentId;
  public String underlyingId;
  public long underlyingPriceMicros;
  public long markMicros;
  public long windowEnd;
  public long computedTs;

  /** The earliest tick event time of the window (0: none). */
  public long firstTickTs;

  public MarkRecord() {}

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
