package io.brokerstream.streams.metrics;

import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.CounterSnapshot.CounterDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Records this app dead-lettered, by the topic they came from and their cause, served as {@code
 * brokerstream_dead_letters_total{service="streams",topic,cause}} (the Postgres sink serves the
 * same name with service="connect"). Kept in one place for the whole process because Kafka Streams
 * makes its error handlers itself, from configuration, where the app's metrics cannot be handed
 * over. The count is of letters made: a letter of a transaction that is then aborted (a task moved
 * away mid-commit) is counted and made again; the topic itself (`./brokerstream reconcile`) is the
 * exact count.
 */
public final class DeadLetterCount implements MultiCollector {
  private static final Map<Labels, LongAdder> COUNTS = new ConcurrentHashMap<>();

  /** Causes longer than this are cut: a label value stays small whatever a record says. */
  static final int MAX_CAUSE = 80;

  public static void letter(String topic, String cause) {
    String c = cause == null ? "unknown" : cause;
    if (c.length() > MAX_CAUSE) {
      c = c.substring(0, MAX_CAUSE);
    }
    COUNTS
        .computeIfAbsent(
            Labels.of("service", "streams", "topic", topic, "cause", c), k -> new LongAdder())
        .increment();
  }

  public static long count(String topic, String cause) {
    LongAdder n = COUNTS.get(Labels.of("service", "streams", "topic", topic, "cause", cause));
    return n == null ? 0 : n.sum();
  }

  @Override
  public MetricSnapshots collect() {
    CounterSnapshot.Builder b =
        CounterSnapshot.builder()
            .name("brokerstream_dead_letters")
            .help(
                "Records dead-lettered for their own content, by service, source topic and cause");
    COUNTS.forEach(
        (labels, n) ->
            b.dataPoint(CounterDataPointSnapshot.builder().labels(labels).value(n.sum()).build()));
    return MetricSnapshots.builder().metricSnapshot(b.build()).build();
  }
}
