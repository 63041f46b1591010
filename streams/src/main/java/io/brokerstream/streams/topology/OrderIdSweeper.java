package io.brokerstream.streams.topology;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Forgets order ids past their retention, a slice per call, and walks the store only when something
 * can have expired.
 *
 * <p>Walking the whole store every second cost the stream thread a scan per task per second however
 * little traffic there was (a tenth of the streams process's CPU at 1,000 orders/s with ids of
 * earlier runs in the stores). After a full pass the oldest id left is known, so the next pass
 * waits until it can expire, and at least {@code retention / 24}. Only ids older than the retention
 * are deleted, so waiting can only make an id remembered longer, never shorter; and since a task
 * reads one partition, whose append times do not go back, an id written after the pass is not older
 * than the oldest kept, so it is remembered at most a twenty-fourth of the retention longer (plus
 * the task's processing lag when the store was empty).
 */
final class OrderIdSweeper {
  /** Ids visited per call: a slice the stream thread walks in milliseconds. */
  static final int SLICE = 20_000;

  private final KeyValueStore<String, Long> ids;
  private final Predicate<String> inUse;
  private final long retentionMs;
  private final long slackMs;
  private final int slice;
  private String resumeFrom; // null: the next call starts a pass, when one is due
  private long passStart;
  private long passOldest;
  private long nextPassAt = Long.MIN_VALUE;

  OrderIdSweeper(KeyValueStore<String, Long> ids, long retentionMs, int slice) {
    this(ids, retentionMs, slice, id -> false);
  }

  /**
   * With {@code inUse}: an expired id it names is kept (a working order may outlive the retention,
   * and its id must stay taken while it works). Asked only of expired ids, so no order pays for it
   * on arrival.
   */
  OrderIdSweeper(
      KeyValueStore<String, Long> ids, long retentionMs, int slice, Predicate<String> inUse) {
    if (retentionMs <= 0 || slice <= 0) {
      throw new IllegalArgumentException("retention and slice must be positive");
    }
    this.ids = ids;
    this.inUse = inUse;
    this.retentionMs = retentionMs;
    this.slackMs = retentionMs / 24;
    this.slice = slice;
  }

  /**
   * Deletes up to a slice's worth of expired ids if a pass is due or under way; returns the ids
   * visited.
   */
  int sweep(long now) {
    if (resumeFrom == null) {
      if (now < nextPassAt) {
        return 0;
      }
      passStart = now;
      passOldest = Long.MAX_VALUE;
    }
    long oldestKept = now - retentionMs;
    int seen = 0;
    List<String> expired = new ArrayList<>();
    try (KeyValueIterator<String, Long> it =
        resumeFrom == null ? ids.all() : ids.range(resumeFrom, null)) {
      while (seen < slice && it.hasNext()) {
        KeyValue<String, Long> kv = it.next();
        seen++;
        if (kv.value < oldestKept && !inUse.test(kv.key)) {
          expired.add(kv.key);
        } else {
          passOldest = Math.min(passOldest, kv.value);
        }
      }
      resumeFrom = it.hasNext() ? it.next().key : null;
    }
    expired.forEach(ids::delete);
    if (resumeFrom == null) {
      long base = passOldest == Long.MAX_VALUE ? passStart : passOldest;
      nextPassAt = Math.max(base + retentionMs + 1, now + slackMs);
    }
    return seen;
  }

  /** When the next pass starts (epoch ms), or Long.MIN_VALUE before the first. */
  long nextPassAt() {
    return nextPassAt;
  }
}
