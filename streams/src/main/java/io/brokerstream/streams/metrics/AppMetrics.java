package io.brokerstream.streams.metrics;

import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import io.prometheus.metrics.instrumentation.jvm.JvmMetrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.Unit;
import java.io.IOException;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;

/**
 * What the app tells Prometheus, on its own port (never the members' gateway port): answers by
 * route and status, the accept latency of orders, results by status and how long after its write
 * each became readable here, the Kafka clients' own metrics (lag, process rates) and the JVM's
 * (process_cpu_seconds_total among them). Every label takes values from a fixed set (route names,
 * the statuses the gateway answers, the order statuses), never from a request.
 */
public final class AppMetrics implements AutoCloseable {
  /** Accept and visible latency buckets: a few ms to seconds, the range the SLO speaks of. */
  private static final double[] LATENCY_BOUNDS = {
    0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 1, 2, 5, 10
  };

  private final PrometheusRegistry registry;
  private final Counter responses;
  private final Histogram accept;
  private final Counter results;
  private final Histogram visible;
  private HTTPServer server;

  public AppMetrics() {
    this(new PrometheusRegistry());
  }

  AppMetrics(PrometheusRegistry registry) {
    this.registry = registry;
    responses =
        Counter.builder()
            .name("brokerstream_gateway_responses_total")
            .help("Answers the gateway wrote, by route and HTTP status")
            .labelNames("route", "status")
            .register(registry);
    accept =
        Histogram.builder()
            .name("brokerstream_gateway_accept_seconds")
            .help(
                "From an order request read to its answer (the order written to Kafka), for"
                    + " orders placed without waiting for their result")
            .unit(Unit.SECONDS)
            .classicOnly()
            .classicUpperBounds(LATENCY_BOUNDS)
            .register(registry);
    results =
        Counter.builder()
            .name("brokerstream_order_results_total")
            .help("Order results materialized on this instance, by final status")
            .labelNames("status")
            .register(registry);
    visible =
        Histogram.builder()
            .name("brokerstream_order_visible_seconds")
            .help(
                "From Kafka's acknowledgement of an order this gateway wrote to its result"
                    + " readable here (orders still pending, within the gateway's pending TTL)")
            .unit(Unit.SECONDS)
            .classicOnly()
            .classicUpperBounds(LATENCY_BOUNDS)
            .register(registry);
    registry.register(new DeadLetterCount());
  }

  /** The JVM's and the Kafka clients' metrics beside the app's own. */
  public AppMetrics withJvmAndKafka(Supplier<Map<MetricName, ? extends Metric>> kafka) {
    JvmMetrics.builder().register(registry);
    registry.register(new KafkaMetricsBridge(kafka));
    return this;
  }

  /** Serves GET /metrics on host:port; port 0 leaves the metrics unserved. */
  public void serve(String host, int port) throws IOException {
    if (port > 0) {
      server = HTTPServer.builder().hostname(host).port(port).registry(registry).buildAndStart();
    }
  }

  public void answered(String route, int status) {
    responses.labelValues(route, Integer.toString(status)).inc();
  }

  public void accepted(long nanos) {
    accept.observe(nanos / 1e9);
  }

  public void result(String status, long msSinceWrite) {
    results.labelValues(status).inc();
    if (msSinceWrite >= 0) {
      visible.observe(msSinceWrite / 1e3);
    }
  }

  PrometheusRegistry registry() {
    return registry;
  }

  @Override
  public void close() {
    if (server != null) {
      server.close();
    }
  }
}
