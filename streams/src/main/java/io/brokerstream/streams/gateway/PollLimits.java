package io.brokerstream.streams.gateway;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * How many long polls may wait at once, in all and per member: a waiting poll holds a connection
 * and a waiter, and a member that opens thousands of them must not starve the others. Beyond a
 * limit the answer is 429; every granted slot is given back exactly once, however its poll ends.
 */
final class PollLimits {
  private final int maxTotal;
  private final int maxPerMember;
  private final AtomicInteger total = new AtomicInteger();
  private final ConcurrentHashMap<String, AtomicInteger> byMember = new ConcurrentHashMap<>();

  PollLimits(int maxTotal, int maxPerMember) {
    this.maxTotal = maxTotal;
    this.maxPerMember = maxPerMember;
  }

  /** A slot for one waiting poll, or 429; the returned action gives it back (idempotent). */
  Runnable acquire(String member) {
    AtomicInteger mine = byMember.computeIfAbsent(member, m -> new AtomicInteger());
    if (mine.incrementAndGet() > maxPerMember) {
      release(member, mine, false);
      throw new HttpError(
          429,
          "too many waiting polls for member "
              + member
              + " (at most "
              + maxPerMember
              + "); poll with a shorter wait_ms or fewer at once");
    }
    if (total.incrementAndGet() > maxTotal) {
      release(member, mine, true);
      throw new HttpError(429, "the gateway has " + maxTotal + " polls waiting; try again shortly");
    }
    AtomicBoolean released = new AtomicBoolean();
    return () -> {
      if (released.compareAndSet(false, true)) {
        release(member, mine, true);
      }
    };
  }

  private void release(String member, AtomicInteger mine, boolean counted) {
    if (counted) {
      total.decrementAndGet();
    }
    if (mine.decrementAndGet() == 0) {
      byMember.remove(member, mine);
    }
  }

  int waiting() {
    return total.get();
  }
}
