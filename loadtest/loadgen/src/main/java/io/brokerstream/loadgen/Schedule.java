package io.brokerstream.loadgen;

import java.util.concurrent.locks.LockSupport;

/**
 * An open-loop send schedule: order i is due at start + i / rate, whatever happened to the orders
 * before it. Latency is counted from the due time, so a slow server (or a slow client) cannot hide
 * behind a schedule that waited for it (coordinated omission).
 */
final class Schedule {
  private final long startMicros;
  private final double periodMicros;
  private final long startNanos;

  Schedule(double rate) {
    if (!(rate > 0)) {
      throw new IllegalArgumentException("rate must be positive, got " + rate);
    }
    this.periodMicros = 1e6 / rate;
    this.startNanos = System.nanoTime();
    this.startMicros = io.brokerstream.trace.Stages.nowMicros();
  }

  /** Wall-clock microseconds when order i is due. */
  long dueMicros(long i) {
    return startMicros + (long) (i * periodMicros);
  }

  /** Sleeps until order i is due; returns how late the call is in microseconds (0 when on time). */
  long awaitDue(long i) {
    long dueNanos = startNanos + (long) (i * periodMicros * 1000);
    long wait;
    while ((wait = dueNanos - System.nanoTime()) > 0) {
      LockSupport.parkNanos(wait);
    }
    return -wait / 1000;
  }

  /** Wall-clock microseconds now, on the schedule's clock. */
  long nowMicros() {
    return startMicros + (System.nanoTime() - startNanos) / 1000;
  }
}
