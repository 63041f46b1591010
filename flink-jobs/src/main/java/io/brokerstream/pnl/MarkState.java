package io.brokerstream.pnl;

/**
 * An instrument's mark as last computed, and what each output was last told of it. Not state: after
 * a restore every mark is unknown, so the first window recomputes them and writes each once more
 * (readers keep the latest per instrument).
 */
final class MarkState {
  static final long UNKNOWN = Long.MIN_VALUE;

  long micros = UNKNOWN;
  long underlyingMicros;
  long windowEnd = UNKNOWN;
  long computedTs;
  long firstTickTs;

  /** What pnl.equity-marks was last given. */
  long emitted = UNKNOWN;
}
