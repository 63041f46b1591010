package io.brokerstream.pnl;

import java.util.Arrays;
import java.util.Objects;

/**
 * The marks of every held instrument of one equity at a window's end, all at the same equity price:
 * one record per equity per window in which any of them moved, instead of one per instrument, so a
 * tick costs one record downstream however many options on the equity are held. Each carries the
 * whole set, so the latest per equity is enough to value every position in it. A Flink POJO.
 */
public class EquityMarksRecord {
  public String underlyingId;
  public long underlyingPriceMicros;
  public long windowEnd;
  public long computedTs;

  /** The earliest tick event time of the window (0: none). */
  public long firstTickTs;

  /** The held instruments (the equity under its own id) and their marks, index for index. */
  public String[] instrumentIds;

  public long[] markMicros;

  public EquityMarksRecord() {}

  EquityMarksRecord(
      String underlyingId,
      long underlyingPriceMicros,
      long windowEnd,
      long computedTs,
      long firstTickTs,
      String[] instrumentIds,
      long[] markMicros) {
    this.underlyingId = underlyingId;
    this.underlyingPriceMicros = underlyingPriceMicros;
    this.windowEnd = windowEnd;
    this.computedTs = computedTs;
    this.firstTickTs = firstTickTs;
    this.instrumentIds = instrumentIds;
    this.markMicros = markMicros;
  }

  int size() {
    return instrumentIds.length;
  }

  /** The mark of `instrumentId` in this record, or null. */
  Long markOf(String instrumentId) {
    for (int i = 0; i < instrumentIds.length; i++) {
      if (instrumentIds[i].equals(instrumentId)) {
        return markMicros[i];
      }
    }
    return null;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof EquityMarksRecord r
        && Objects.equals(underlyingId, r.underlyingId)
        && underlyingPriceMicros == r.underlyingPriceMicros
        && windowEnd == r.windowEnd
        && computedTs == r.computedTs
        && firstTickTs == r.firstTickTs
        && Arrays.equals(instrumentIds, r.instrumentIds)
        && Arrays.equals(markMicros, r.markMicros);
  }

  @Override
  public int hashCode() {
    return Objects.hash(underlyingId, windowEnd);
  }

  @Override
  public String toString() {
    StringBuilder s =
        new StringBuilder("Marks{")
            .append(underlyingId)
            .append(" at ")
            .append(underlyingPriceMicros)
            .append(" w")
            .append(windowEnd);
    for (int i = 0; i < instrumentIds.length; i++) {
      s.append(' ').append(instrumentIds[i]).append('=').append(markMicros[i]);
    }
    return s.append('}').toString();
  }
}
