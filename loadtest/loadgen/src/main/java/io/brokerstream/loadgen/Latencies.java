package io.brokerstream.loadgen;

import java.util.LinkedHashMap;
import java.util.Map;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;

/** Named latency histograms in microseconds, safe to record into from any thread; printed in ms. */
final class Latencies {
  private static final long MAX_MICROS = 3_600_000_000L;
  private final Map<String, Histogram> byName = new LinkedHashMap<>();

  Latencies(String... names) {
    for (String name : names) {
      byName.put(name, new ConcurrentHistogram(MAX_MICROS, 3));
    }
  }

  void record(String name, long micros) {
    Histogram h = byName.get(name);
    if (h == null) {
      throw new IllegalArgumentException("no histogram " + name);
    }
    // clocks of different processes may disagree by a few microseconds: a negative hop is zero
    h.recordValue(Math.min(MAX_MICROS, Math.max(0, micros)));
  }

  Histogram histogram(String name) {
    return byName.get(name);
  }

  long count(String name) {
    return byName.get(name).getTotalCount();
  }

  static Map<String, Object> summary(Histogram h) {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("count", h.getTotalCount());
    if (h.getTotalCount() == 0) {
      return out;
    }
    out.put("mean", round(h.getMean() / 1000));
    for (double p : new double[] {50, 90, 95, 99, 99.9}) {
      out.put(
          "p" + (p == 99.9 ? "999" : String.valueOf((int) p)),
          round(h.getValueAtPercentile(p) / 1000.0));
    }
    out.put("max", round(h.getMaxValue() / 1000.0));
    return out;
  }

  Map<String, Object> summaries() {
    Map<String, Object> out = new LinkedHashMap<>();
    byName.forEach((name, h) -> out.put(name, summary(h)));
    return out;
  }

  private static double round(double ms) {
    return Math.round(ms * 1000) / 1000.0;
  }
}
