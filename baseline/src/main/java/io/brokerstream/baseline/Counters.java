package io.brokerstream.baseline;

import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.instrumentation.jvm.JvmMetrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the baseline has done since it started; /metrics serves each as the Prometheus counter
 * {@code brokerstream_baseline_<name>_total}, beside the JVM's metrics.
 */
public final class Counters {
  public final AtomicLong accepted = new AtomicLong();
  public final AtomicLong rejected = new AtomicLong();
  public final AtomicLong duplicates = new AtomicLong();
  public final AtomicLong deadLettered = new AtomicLong();
  public final AtomicLong orderBatches = new AtomicLong();
  public final AtomicLong ticksAccepted = new AtomicLong();
  public final AtomicLong ticksRefused = new AtomicLong();

  /** Ticks held while their instrument was halted (a price in doubt). */
  public final AtomicLong ticksHeld = new AtomicLong();

  /** Position values recomputed by the price threads: the P&L calculations. */
  public final AtomicLong positionsRevalued = new AtomicLong();

  public final AtomicLong restarts = new AtomicLong();

  /** Batches rolled back by a deadlock or serialization failure and run again. */
  public final AtomicLong retries = new AtomicLong();

  /** A registry reading these counters at each scrape, and the JVM's metrics. */
  public PrometheusRegistry registry() {
    PrometheusRegistry registry = new PrometheusRegistry();
    for (String name : snapshot().keySet()) {
      CounterWithCallback.builder()
          .name("brokerstream_baseline_" + name + "_total")
          .help("baseline " + name.replace('_', ' '))
          .callback(cb -> cb.call(snapshot().get(name)))
          .register(registry);
    }
    JvmMetrics.builder().register(registry);
    return registry;
  }

  public Map<String, Long> snapshot() {
    Map<String, Long> out = new LinkedHashMap<>();
    out.put("orders_accepted", accepted.get());
    out.put("orders_rejected", rejected.get());
    out.put("orders_duplicate", duplicates.get());
    out.put("orders_dead_lettered", deadLettered.get());
    out.put("order_batches", orderBatches.get());
    out.put("ticks_accepted", ticksAccepted.get());
    out.put("ticks_refused", ticksRefused.get());
    out.put("ticks_held", ticksHeld.get());
    out.put("positions_revalued", positionsRevalued.get());
    out.put("consumer_restarts", restarts.get());
    out.put("batch_retries", retries.get());
    return out;
  }
}
