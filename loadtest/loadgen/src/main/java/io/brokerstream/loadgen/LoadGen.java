package io.brokerstream.loadgen;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.brokerstream.avro.EquityMarks;
import io.brokerstream.avro.Order;
import io.brokerstream.avro.OrderResult;
import io.brokerstream.serde.AvroCodec;
import io.brokerstream.serde.RestSchemaRegistry;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The system benchmark's load client, driven step by step by {@code ./brokerstream bench system}.
 *
 * <pre>
 *   java -jar loadgen.jar PLAN.json
 *   stdin:  step http|http1|kafka RATE SECONDS TAG [SETTLE_SECONDS]    (one line per step;
 *           http1: one request per order, POST /orders?wait_ms)
 *           quit
 *   stdout: one JSON object per step
 * </pre>
 *
 * One JVM for the whole run, so later steps do not pay for warm-up. The Python driver samples the
 * stack (CPU, lag) while a step runs and adds what happens after it (Postgres).
 */
public final class LoadGen {
  private static final int MAX_SAMPLES = 5000;

  private final Plan plan;
  private final OrderMix mix;
  private final ResultWatcher results;
  private final PnlWatcher pnl;
  private final AvroCodec<Order> orderCodec;
  private HttpDriver http;
  private HttpDriver http1;
  private KafkaDriver kafka;

  LoadGen(Plan plan) {
    this.plan = plan;
    this.mix = new OrderMix(plan);
    RestSchemaRegistry registry = new RestSchemaRegistry(plan.registryUrl());
    this.orderCodec = AvroCodec.specific(Order.class, registry, false);
    this.results =
        new ResultWatcher(
            plan.bootstrap(),
            plan.watcherKafka(),
            plan.resultsFetchWaitMs(),
            AvroCodec.specific(OrderResult.class, registry, false));
    this.pnl =
        new PnlWatcher(
            plan.bootstrap(),
            plan.watcherKafka(),
            plan.pnlFetchWaitMs(),
            AvroCodec.specific(EquityMarks.class, registry, false),
            plan.pnlPartitionStride(),
            plan.pnlSampleOneIn());
    daemon(results, "results-watcher").start();
    daemon(pnl, "pnl-watcher").start();
  }

  public static void main(String[] args) throws Exception {
    if (args.length != 1) {
      System.err.println("usage: java -jar loadgen.jar PLAN.json   (then step lines on stdin)");
      System.exit(2);
    }
    ObjectMapper json = new ObjectMapper();
    LoadGen gen = new LoadGen(json.readValue(Path.of(args[0]).toFile(), Plan.class));
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    System.out.println(json.writeValueAsString(Map.of("ready", true)));
    System.out.flush();
    for (String line; (line = in.readLine()) != null; ) {
      String[] w = line.trim().split("\\s+");
      if (w[0].equals("quit")) {
        break;
      }
      if (!w[0].equals("step") || w.length < 5) {
        System.out.println(
            json.writeValueAsString(
                Map.of("error", "expected: step MODE RATE SECONDS TAG [SETTLE]")));
        System.out.flush();
        continue;
      }
      double settle = w.length > 5 ? Double.parseDouble(w[5]) : 30;
      Map<String, Object> out =
          gen.step(w[1], Double.parseDouble(w[2]), Double.parseDouble(w[3]), w[4], settle);
      System.out.println(json.writeValueAsString(out));
      System.out.flush();
    }
    gen.close();
  }

  Map<String, Object> step(
      String mode, double rate, double seconds, String tag, double settleSeconds) {
    Driver driver = driver(mode);
    int count = (int) Math.round(rate * seconds);
    Schedule schedule = new Schedule(rate);
    StepState step = new StepState(tag, schedule, count);
    results.watch(step);
    pnl.swap();
    long cpu0 = cpuNanos();
    long maxLate = 0;
    for (int i = 0; i < count; i++) {
      OrderMix.Next order = mix.next();
      maxLate = Math.max(maxLate, schedule.awaitDue(i));
      driver.send(step, i, order);
    }
    double sendSeconds = (schedule.nowMicros() - schedule.dueMicros(0)) / 1e6;
    Latencies pnlLatencies = pnl.swap();
    long cpuSending = cpuNanos() - cpu0;
    // answers and results still on their way: wait for them, but not for ever
    long deadline = System.nanoTime() + (long) (settleSeconds * 1e9);
    while (System.nanoTime() < deadline && (driver.inFlight() > 0 || step.seenCount() < count)) {
      sleep(50);
    }
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("tag", tag);
    out.put("mode", mode);
    out.put("rate", rate);
    out.put("seconds", seconds);
    out.put("sent", count);
    out.put("send_seconds", sendSeconds);
    out.put("achieved_rate", count / Math.max(sendSeconds, 1e-9));
    out.put("max_late_ms", maxLate / 1000.0);
    out.put("client_cpu_seconds", cpuSending / 1e9);
    out.put("accept_ms", Latencies.summary(histogram(step.client, "accept")));
    out.put(
        "visible_ms",
        Latencies.summary(
            histogram(
                mode.startsWith("http") ? step.client : step.committed,
                mode.startsWith("http") ? "visible" : "committed")));
    out.put("committed_ms", Latencies.summary(histogram(step.committed, "committed")));
    out.put("errors", step.errorCounts());
    Map<String, Object> outcome = new LinkedHashMap<>();
    outcome.put("accepted", step.accepted.get());
    outcome.put("rejected", step.rejected.get());
    outcome.put("duplicates", step.duplicates.get());
    outcome.put("missing", count - step.seenCount());
    outcome.put("in_flight", driver.inFlight());
    out.put("results", outcome);
    out.put("hops_ms", step.hops.summaries());
    out.put("pnl_ms", pnlLatencies.summaries());
    List<Object[]> samples = new ArrayList<>();
    for (long[] s : step.sampled()) {
      if (samples.size() >= MAX_SAMPLES) {
        break;
      }
      samples.add(new Object[] {step.orderId(s[0]), s[1], s[2]});
    }
    out.put("samples", samples);
    results.watch(null);
    return out;
  }

  private static org.HdrHistogram.Histogram histogram(Latencies l, String name) {
    return l.histogram(name);
  }

  private Driver driver(String mode) {
    return switch (mode) {
      case "http" -> http != null ? http : (http = new HttpDriver(plan, false));
      case "http1" -> http1 != null ? http1 : (http1 = new HttpDriver(plan, true));
      case "kafka" -> kafka != null ? kafka : (kafka = new KafkaDriver(plan, orderCodec));
      default -> throw new IllegalArgumentException("mode is http, http1 or kafka, got " + mode);
    };
  }

  private static long cpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
        .getProcessCpuTime();
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static Thread daemon(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }

  void close() {
    results.close();
    pnl.close();
    if (http != null) {
      http.close();
    }
    if (http1 != null) {
      http1.close();
    }
    if (kafka != null) {
      kafka.close();
    }
  }
}
