package io.brokerstream.streams.metrics;

import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot.GaugeDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import io.prometheus.metrics.model.snapshots.PrometheusNaming;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Supplier;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;

/**
 * The Kafka clients' metrics (Kafka Streams' threads, its consumers and producers), read at each
 * scrape: gauge {@code kafka_<group>_<name>} with the metric's tags as labels, e.g. {@code
 * kafka_consumer_fetch_manager_records_lag_max{client_id=...}}, the name the JMX exporter gives the
 * same metric in Connect and Flink (platform/metrics/), so one query reads lag across services.
 * Only the groups an operator reads are bridged: a task or store per partition would make a scrape
 * grow with partitions.
 */
final class KafkaMetricsBridge implements MultiCollector {
  static final Set<String> GROUPS =
      Set.of(
          "stream-metrics",
          "stream-thread-metrics",
          "consumer-fetch-manager-metrics",
          "consumer-coordinator-metrics",
          "producer-metrics");

  private final Supplier<Map<MetricName, ? extends Metric>> source;

  KafkaMetricsBridge(Supplier<Map<MetricName, ? extends Metric>> source) {
    this.source = source;
  }

  @Override
  public MetricSnapshots collect() {
    Map<String, GaugeSnapshot.Builder> byName = new TreeMap<>();
    Map<String, Set<Labels>> seen = new TreeMap<>();
    for (Map.Entry<MetricName, ? extends Metric> e : source.get().entrySet()) {
      MetricName name = e.getKey();
      if (!GROUPS.contains(name.group()) || !(e.getValue().metricValue() instanceof Number value)) {
        continue;
      }
      String prom = name(name);
      Labels labels = labels(name.tags());
      // a metric registered twice under one name and tags (two clients sharing an id) is read once
      if (!seen.computeIfAbsent(prom, k -> new HashSet<>()).add(labels)) {
        continue;
      }
      byName
          .computeIfAbsent(
              prom,
              k ->
                  GaugeSnapshot.builder()
                      .name(k)
                      .help(name.description().isEmpty() ? name.name() : name.description()))
          .dataPoint(
              GaugeDataPointSnapshot.builder().value(value.doubleValue()).labels(labels).build());
    }
    MetricSnapshots.Builder out = MetricSnapshots.builder();
    byName.values().forEach(b -> out.metricSnapshot(b.build()));
    return out.build();
  }

  static String name(MetricName name) {
    String group =
        name.group().endsWith("-metrics")
            ? name.group().substring(0, name.group().length() - "-metrics".length())
            : name.group();
    return PrometheusNaming.sanitizeMetricName("kafka_" + group + "_" + name.name())
        .replace('.', '_');
  }

  static Labels labels(Map<String, String> tags) {
    Labels.Builder b = Labels.builder();
    new TreeMap<>(tags)
        .forEach((k, v) -> b.label(PrometheusNaming.sanitizeLabelName(k).replace('.', '_'), v));
    return b.build();
  }
}
