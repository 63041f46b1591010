package io.brokerstream.streams.gateway;

import io.brokerstream.avro.Member;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * How many orders, cancels and amends a second each member may send through this gateway: a token
 * bucket per member holding one second of its rate (its {@code max_orders_per_second}, else the
 * gateway's default), refilled continuously. Beyond it the member is answered 429 with the seconds
 * until its next request would pass (Retry-After), and nothing is written: one member's burst
 * cannot take the flow from the others (the market access rule's rate control). Members are
 * reference data, so the map is bounded by them; only authenticated members reach it.
 *
 * <p>Per gateway instance: with N instances behind a balancer a member gets up to N times its rate.
 */
final class MemberRates {
  private final int defaultPerSecond;
  private final LongSupplier nanos;
  private final ConcurrentHashMap<String, Bucket> buckets = new ConcurrentHashMap<>();

  MemberRates(int defaultPerSecond) {
    this(defaultPerSecond, System::nanoTime);
  }

  MemberRates(int defaultPerSecond, LongSupplier nanos) {
    if (defaultPerSecond < 1) {
      throw new IllegalArgumentException("a rate of at least 1 a second, got " + defaultPerSecond);
    }
    this.defaultPerSecond = defaultPerSecond;
    this.nanos = nanos;
  }

  /** The member's orders per second: its own limit, else the gateway's. */
  int limitOf(Member member) {
    Integer own = member == null ? null : member.getMaxOrdersPerSecond();
    return own != null && own > 0 ? own : defaultPerSecond;
  }

  /**
   * Takes {@code n} requests' worth from the member's bucket, or throws 429 (with Retry-After) and
   * takes nothing.
   */
  void take(String memberId, int n, Member member) {
    int limit = limitOf(member);
    if (n > limit) {
      // a batch larger than a second's worth never fits: waiting would not help
      throw HttpError.badField(
          "orders",
          "a batch of "
              + n
              + " is more than the "
              + limit
              + " orders a second member "
              + memberId
              + " may send; send it in smaller batches");
    }
    Bucket b = buckets.computeIfAbsent(memberId, id -> new Bucket());
    long waitNanos = b.take(limit, n, nanos);
    if (waitNanos > 0) {
      long seconds = Math.max(1, (waitNanos + 999_999_999L) / 1_000_000_000L);
      throw new HttpError(
              429,
              "member "
                  + memberId
                  + " may send "
                  + limit
                  + " orders, cancels and amends a second"
                  + (n > 1 ? " (this batch is " + n + ")" : "")
                  + "; try again in "
                  + seconds
                  + " s")
          .with("Retry-After", Long.toString(seconds));
    }
  }

  /**
   * One second of the rate, refilled in proportion to the time since the last take; the clock is
   * read under the bucket's lock, so concurrent takes see it move forward only.
   */
  private static final class Bucket {
    private boolean started;
    private double tokens;
    private long lastNanos;

    synchronized long take(int perSecond, int n, LongSupplier clock) {
      long now = clock.getAsLong();
      if (!started) {
        started = true;
        tokens = perSecond;
      } else {
        long elapsed = Math.max(0, now - lastNanos);
        tokens = Math.min(perSecond, tokens + elapsed * (perSecond / 1e9));
      }
      lastNanos = Math.max(lastNanos, now);
      if (tokens >= n) {
        tokens -= n;
        return 0;
      }
      return (long) Math.ceil((n - tokens) / perSecond * 1e9);
    }
  }
}
