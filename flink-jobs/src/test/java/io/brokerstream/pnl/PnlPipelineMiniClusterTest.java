package io.brokerstream.pnl;

import static org.assertj.core.api.Assertions.assertThat;

import io.brokerstream.money.Micros;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.functions.FlatMapFunction;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.util.CloseableIterator;
import org.apache.flink.util.Collector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The whole dataflow (revaluation and both roll-ups) on a Flink MiniCluster, with in-memory inputs.
 */
class PnlPipelineMiniClusterTest {
  @RegisterExtension
  static final MiniClusterExtension FLINK =
      new MiniClusterExtension(
          new MiniClusterResourceConfiguration.Builder()
              .setConfiguration(loopbackOnly())
              .setNumberTaskManagers(1)
              .setNumberSlotsPerTaskManager(2)
              .build());

  static Configuration loopbackOnly() {
    Configuration conf = new Configuration();
    conf.set(RestOptions.BIND_ADDRESS, "127.0.0.1");
    conf.set(RestOptions.ADDRESS, "127.0.0.1");
    conf.setString("jobmanager.bind-host", "127.0.0.1");
    conf.setString("taskmanager.bind-host", "127.0.0.1");
    conf.setString("taskmanager.host", "127.0.0.1");
    return conf;
  }

  /**
   * Holds the bounded input open for a while after its last element: windows are in processing
   * time, and Flink does not fire processing-time timers once a bounded input has ended.
   */
  static final class LingerAtEnd implements FlatMapFunction<PnlInput, PnlInput> {
    private final int count;
    private final long lingerMs;
    private int seen;

    LingerAtEnd(int count, long lingerMs) {
      this.count = count;
      this.lingerMs = lingerMs;
    }

    @Override
    public void flatMap(PnlInput value, Collector<PnlInput> out) throws Exception {
      out.collect(value);
      if (++seen == count) {
        Thread.sleep(lingerMs); // after the last element is on its way
      }
    }
  }

  @Test
  void marksAccountsAndMembersComeOutOfTheJob() throws Exception {
    int maturity = (int) java.time.LocalDate.now().plusYears(1).toEpochDay();
    List<PnlInput> inputs =
        new ArrayList<>(
            List.of(
                PnlInput.volatility("EQ1", 0.25),
                PnlInput.optionTerms("OC1", "EQ1", true, false, Micros.parse("100"), maturity, 100),
                PnlInput.position("A1", "M1", "EQ1", "EQ1", 1, 10, Micros.parse("100"), 1),
                PnlInput.position("A1", "M1", "EQ2", "EQ2", 1, -3, Micros.parse("50"), 1),
                PnlInput.position("A2", "M1", "OC1", "EQ1", 100, 2, Micros.parse("12"), 1),
                PnlInput.position("A3", "M2", "EQ2", "EQ2", 1, 7, Micros.parse("40"), 1)));
    long now = System.currentTimeMillis();
    for (int i = 0; i < 50; i++) { // many ticks, but only the last of each instrument counts
      inputs.add(PnlInput.tick("EQ1", Micros.parse("100") + i * 10_000L, now + i, i));
      inputs.add(PnlInput.tick("EQ2", Micros.parse("45") + i * 10_000L, now + i, i));
    }
    // The ticks must land in one processing-time window to be revalued once: a window much longer
    // than the time they take to pass (a 300 ms one was sometimes crossed while the job warmed up).
    PnlSettings settings =
        PnlSettings.defaults()
            .with("window.ms", "1000")
            .with("window.phases", "1")
            .with("rollup.coalesce-ms", "100");

    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    env.setParallelism(2);
    DataStream<PnlInput> in =
        env.fromData(PnlInput.class, inputs.toArray(PnlInput[]::new))
            .setParallelism(1)
            .flatMap(new LingerAtEnd(inputs.size(), 3500))
            .setParallelism(1);
    PnlPipeline.Outputs outputs = PnlPipeline.build(in, settings);
    // one stream of both kinds, to collect: marks as PnlRecords of no scope carrying the mark's
    // fields
    DataStream<PnlRecord> all = outputs.marks().flatMap(new AsRecords()).union(outputs.rollUps());
    List<PnlRecord> out = new ArrayList<>();
    try (CloseableIterator<PnlRecord> it = all.executeAndCollect("pnl-minicluster")) {
      it.forEachRemaining(out::add);
    }

    List<PnlRecord> marks = out.stream().filter(r -> r.scope == null).toList();
    assertThat(marks).extracting(r -> r.instrumentId).containsOnly("EQ1", "EQ2", "OC1");
    // 100 ticks, one mark per held instrument per window: once, or twice when a loaded machine let
    // the ticks straddle a window boundary, never once per tick or per position
    Map<String, Long> written =
        marks.stream()
            .collect(
                java.util.stream.Collectors.groupingBy(
                    r -> r.instrumentId, java.util.stream.Collectors.counting()));
    assertThat(written).hasSize(3);
    assertThat(written.values()).allSatisfy(n -> assertThat(n).isBetween(1L, 2L));
    PnlRecord eq1 =
        marks.stream().filter(r -> r.instrumentId.equals("EQ1")).reduce((a, b) -> b).orElseThrow();
    assertThat(eq1.markPriceMicros).isEqualTo(Micros.parse("100.49"));
    long oc1 =
        marks.stream()
            .filter(r -> r.instrumentId.equals("OC1"))
            .reduce((a, b) -> b)
            .orElseThrow()
            .markPriceMicros;

    PnlRecord a1 = last(out, PnlRecord.Scope.ACCOUNT, "A1");
    long a1Expected = Micros.parse("4.9") + (-3) * (Micros.parse("45.49") - Micros.parse("50"));
    assertThat(a1.unrealizedMicros).isEqualTo(a1Expected);
    assertThat(a1.positions).isEqualTo(2);
    PnlRecord a2 = last(out, PnlRecord.Scope.ACCOUNT, "A2");
    assertThat(a2.unrealizedMicros).isEqualTo(2 * 100 * (oc1 - Micros.parse("12")));
    PnlRecord m1 = last(out, PnlRecord.Scope.MEMBER, "M1");
    assertThat(m1.unrealizedMicros).isEqualTo(a1.unrealizedMicros + a2.unrealizedMicros);
    assertThat(m1.positions).isEqualTo(3);
    assertThat(last(out, PnlRecord.Scope.MEMBER, "M2").unrealizedMicros)
        .isEqualTo(7 * Micros.parse("5.49"));
  }

  /** An equity's marks as PnlRecords of no scope, one per instrument. */
  static final class AsRecords
      implements org.apache.flink.api.common.functions.FlatMapFunction<
          EquityMarksRecord, PnlRecord> {
    @Override
    public void flatMap(EquityMarksRecord m, org.apache.flink.util.Collector<PnlRecord> out) {
      for (int i = 0; i < m.size(); i++) {
        PnlRecord r = new PnlRecord();
        r.instrumentId = m.instrumentIds[i];
        r.underlyingId = m.underlyingId;
        r.markPriceMicros = m.markMicros[i];
        r.underlyingPriceMicros = m.underlyingPriceMicros;
        r.windowEnd = m.windowEnd;
        out.collect(r);
      }
    }
  }

  static PnlRecord last(List<PnlRecord> out, PnlRecord.Scope scope, String key) {
    PnlRecord found = null;
    for (PnlRecord r : out) {
      if (r.scope == scope && scope != null && r.key().equals(key)) {
        found = r;
      }
    }
    assertThat(found).as(scope + " " + key).isNotNull();
    return found;
  }
}
