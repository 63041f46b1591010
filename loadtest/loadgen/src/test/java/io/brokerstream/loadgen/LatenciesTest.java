package io.brokerstream.loadgen;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

class LatenciesTest {
  @Test
  void summariesAreInMillisecondsAndNegativeHopsCountAsZero() {
    Latencies l = new Latencies("a");
    for (int i = 1; i <= 100; i++) {
      l.record("a", i * 1000L); // 1..100 ms
    }
    l.record("a", -5);
    Map<String, Object> s = Latencies.summary(l.histogram("a"));
    assertThat(s.get("count")).isEqualTo(101L);
    assertThat((double) s.get("p50")).isBetween(49.9, 50.1);
    assertThat((double) s.get("p99")).isBetween(98.9, 99.1);
    assertThat((double) s.get("max")).isBetween(99.9, 100.1);
  }

  @Test
  void anEmptyHistogramSaysOnlyItsCount() {
    assertThat(Latencies.summary(new Latencies("x").histogram("x"))).containsOnlyKeys("count");
  }
}
