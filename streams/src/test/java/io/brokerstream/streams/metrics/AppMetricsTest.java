package io.brokerstream.streams.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.junit.jupiter.api.Test;

class AppMetricsTest {
  private static String scrape(AppMetrics metrics) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    PrometheusTextFormatWriter.create().write(out, metrics.registry().scrape());
    return out.toString(StandardCharsets.UTF_8);
  }

  private static Metric metric(MetricName name, Object value) {
    return new Metric() {
      @Override
      public MetricName metricName() {
        return name;
      }

      @Override
      public Object metricValue() {
        return value;
      }
    };
  }

  @Test
  void answersResultsAndLatenciesAreCountedUnderTheirNames() throws IOException {
    AppMetrics metrics = new AppMetrics();
    metrics.answered("ORDERS", 202);
    metrics.answered("ORDERS", 202);
    metrics.answered("ORDER", 404);
    metrics.accepted(3_000_000); // 3 ms
    metrics.result("ACCEPTED", 120);
    metrics.result("REJECTED", -1); // not written here: counted, not timed
    String text = scrape(metrics);
    assertThat(text)
        .contains("brokerstream_gateway_responses_total{route=\"ORDERS\",status=\"202\"} 2.0")
        .contains("brokerstream_gateway_responses_total{route=\"ORDER\",status=\"404\"} 1.0")
        .contains("brokerstream_gateway_accept_seconds_bucket{le=\"0.002\"} 0")
        .contains("brokerstream_gateway_accept_seconds_bucket{le=\"0.005\"} 1")
        .contains("brokerstream_order_results_total{status=\"ACCEPTED\"} 1.0")
        .contains("brokerstream_order_results_total{status=\"REJECTED\"} 1.0")
        .contains("brokerstream_order_visible_seconds_count 1")
        .contains("brokerstream_order_visible_seconds_bucket{le=\"0.1\"} 0")
        .contains("brokerstream_order_visible_seconds_bucket{le=\"0.2\"} 1");
  }

  @Test
  void kafkaClientMetricsAreBridgedByGroupWithTheirTagsAsLabels() throws IOException {
    Map<MetricName, Metric> kafka = new LinkedHashMap<>();
    MetricName lag =
        new MetricName(
            "records-lag-max",
            "consumer-fetch-manager-metrics",
            "max lag",
            Map.of("client-id", "brokerstream-orders-StreamThread-1-consumer"));
    MetricName rate =
        new MetricName(
            "process-rate", "stream-thread-metrics", "", Map.of("thread-id", "StreamThread-1"));
    MetricName perStore =
        new MetricName(
            "put-rate", "stream-state-metrics", "", Map.of("rocksdb-state-id", "positions"));
    MetricName text =
        new MetricName("state", "stream-metrics", "", Map.of("client-id", "brokerstream-orders"));
    kafka.put(lag, metric(lag, 42.0));
    kafka.put(rate, metric(rate, 1500.5));
    kafka.put(perStore, metric(perStore, 7.0));
    kafka.put(text, metric(text, "RUNNING"));
    AppMetrics metrics = new AppMetrics().withJvmAndKafka(() -> kafka);
    String scraped = scrape(metrics);
    assertThat(scraped)
        .contains(
            "kafka_consumer_fetch_manager_records_lag_max{client_id=\"brokerstream-orders-StreamThread-1-consumer\"} 42.0")
        .contains("kafka_stream_thread_process_rate{thread_id=\"StreamThread-1\"} 1500.5")
        .contains("process_cpu_seconds_total")
        // per-store metrics grow with partitions and are left out; so is what is not a number
        .doesNotContain("put_rate")
        .doesNotContain("kafka_stream_state");
  }
}
