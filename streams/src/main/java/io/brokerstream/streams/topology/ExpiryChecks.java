package io.brokerstream.streams.topology;

import java.time.Instant;

/**
 * When a member task next looks for DAY orders past their close. Under exactly-once every
 * punctuation makes Kafka Streams commit the task, a transaction of its own when nothing else is
 * committing: a check every second in each task kept an idle stack committing about three
 * transactions a second. So the next check is at the soonest moment anything can be due, the
 * earliest expiry stored or the next close of any exchange (an order placed from now on expires at
 * its exchange's close, not before), but at least {@code minMs} and at most {@code maxMs} away. The
 * upper bound covers an order decided after its close had already passed (a backlog read late),
 * which rests already due: it expires at the next check.
 */
record ExpiryChecks(MarketCalendar calendar, long minMs, long maxMs) {
  ExpiryChecks {
    if (minMs < 1 || maxMs < minMs) {
      throw new IllegalArgumentException(
          "expiry checks: need 1 <= min <= max, got " + minMs + " and " + maxMs + " ms");
    }
  }

  /**
   * Milliseconds from {@code nowMs} to the next check, given the earliest expiry the task holds
   * ({@code earliestStoredMs}, or a negative number when it holds none).
   */
  long delayMs(long nowMs, long earliestStoredMs) {
    long due = calendar.nextAnyClose(Instant.ofEpochMilli(nowMs)).toEpochMilli();
    if (earliestStoredMs >= 0) {
      due = Math.min(due, earliestStoredMs);
    }
    return Math.max(minMs, Math.min(maxMs, due - nowMs));
  }
}
