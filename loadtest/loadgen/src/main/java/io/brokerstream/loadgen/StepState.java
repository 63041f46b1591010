package io.brokerstream.loadgen;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * Everything one step of a run records, from the scheduler, the driver's callbacks and the results
 * watcher. Orders are numbered 0..count-1 and named {@code <tag>-<seq>}.
 */
final class StepState {
  static final String[] HOPS = {
    "client_queue", "to_gateway", "gateway", "kafka_append", "queue", "decide", "commit"
  };

  final String tag;
  final String prefix;
  final Schedule schedule;
  final int count;

  /** When each order left the client (µs, 0 until it did). */
  final AtomicLongArray clientSent;

  final Latencies client = new Latencies("accept", "visible");
  final Latencies committed = new Latencies("committed");
  final Latencies hops = new Latencies(HOPS);
  final Map<String, LongAdder> errors = new ConcurrentHashMap<>();
  final AtomicLong accepted = new AtomicLong();
  final AtomicLong rejected = new AtomicLong();
  final AtomicLong duplicates = new AtomicLong();
  private final BitSet seen = new BitSet();
  private final List<long[]> sampled = new ArrayList<>(); // seq, due, visible (µs)

  StepState(String tag, Schedule schedule, int count) {
    this.tag = tag;
    this.prefix = tag + "-";
    this.schedule = schedule;
    this.count = count;
    this.clientSent = new AtomicLongArray(count);
  }

  String orderId(long seq) {
    return prefix + seq;
  }

  void error(String what) {
    errors.computeIfAbsent(what, k -> new LongAdder()).increment();
  }

  /** Marks a result seen; false when it was seen before (a duplicate). */
  synchronized boolean firstResult(int seq) {
    if (seen.get(seq)) {
      return false;
    }
    seen.set(seq);
    return true;
  }

  synchronized int seenCount() {
    return seen.cardinality();
  }

  synchronized void sample(long seq, long due, long visible) {
    sampled.add(new long[] {seq, due, visible});
  }

  synchronized List<long[]> sampled() {
    return new ArrayList<>(sampled);
  }

  Map<String, Long> errorCounts() {
    Map<String, Long> out = new LinkedHashMap<>();
    errors.forEach((k, v) -> out.put(k, v.sum()));
    return out;
  }
}
