package io.brokerstream.streams.gateway;

import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * Orders this gateway wrote to Kafka whose result it has not seen yet: a status poll for one of
 * them answers "pending" rather than "unknown". Only this gateway's own acknowledgement puts an
 * order here (never anything a client says), keyed like the results (member|order id), so a member
 * cannot learn of another's orders. Bounded: an entry leaves when the result is materialized here,
 * or after {@code ttlMillis}; past {@code capacity} entries new ones are not remembered (such an
 * order then reads as unknown until its result exists, as every order did before). A full table is
 * swept for expired entries at most once per tenth of the TTL: sweeping on every accepted order
 * would cost a pass over the whole table per order exactly when the gateway is busiest.
 */
public final class PendingOrders {
  private final Map<String, Long> acceptedAt = new ConcurrentHashMap<>();
  private final int capacity;
  private final long ttlMillis;
  private final LongSupplier clock;
  private final long sweepEveryMillis;
  private final AtomicLong nextSweep = new AtomicLong(Long.MIN_VALUE);
  private final AtomicLong sweeps = new AtomicLong();

  public PendingOrders(int capacity, long ttlMillis, LongSupplier clock) {
    if (capacity < 0 || ttlMillis <= 0) {
      throw new IllegalArgumentException("capacity >= 0 and ttl > 0 required");
    }
    this.capacity = capacity;
    this.ttlMillis = ttlMillis;
    this.clock = clock;
    this.sweepEveryMillis = Math.max(1, ttlMillis / 10);
  }

  /** Called once Kafka acknowledged the order's write. */
  public void accepted(String resultKey) {
    long now = clock.getAsLong();
    if (acceptedAt.size() >= capacity) {
      long due = nextSweep.get();
      if (now >= due && nextSweep.compareAndSet(due, now + sweepEveryMillis)) {
        sweeps.incrementAndGet();
        expire(now);
      }
      if (acceptedAt.size() >= capacity) {
        return;
      }
    }
    acceptedAt.put(resultKey, now);
  }

  /**
   * Called for every result materialized on this instance: milliseconds since Kafka acknowledged
   * the order's write here, or -1 for an order this gateway did not write or no longer remembers.
   */
  public long decided(String resultKey) {
    Long at = acceptedAt.remove(resultKey);
    if (at == null) {
      return -1;
    }
    long since = clock.getAsLong() - at;
    return since <= ttlMillis ? since : -1;
  }

  public boolean isPending(String resultKey) {
    Long at = acceptedAt.get(resultKey);
    if (at == null) {
      return false;
    }
    if (clock.getAsLong() - at > ttlMillis) {
      acceptedAt.remove(resultKey, at);
      return false;
    }
    return true;
  }

  /** What a status poll answers: the stored result; else pending or, neither, unknown. */
  public record Status<R>(R result, boolean pending) {}

  /**
   * The order's status from {@code stored} (a read of the results store) and this table. A result
   * is stored before its order leaves this table, so an order found neither stored nor pending may
   * have been decided between the two looks: the store is read once more, and only an order absent
   * from that read too is unknown.
   */
  public <R> Status<R> status(String resultKey, Supplier<R> stored) {
    R result = stored.get();
    if (result != null) {
      return new Status<>(result, false);
    }
    if (isPending(resultKey)) {
      return new Status<>(null, true);
    }
    return new Status<>(stored.get(), false);
  }

  int size() {
    return acceptedAt.size();
  }

  long sweeps() {
    return sweeps.get();
  }

  private void expire(long now) {
    for (Iterator<Long> it = acceptedAt.values().iterator(); it.hasNext(); ) {
      if (now - it.next() > ttlMillis) {
        it.remove();
      }
    }
  }
}
