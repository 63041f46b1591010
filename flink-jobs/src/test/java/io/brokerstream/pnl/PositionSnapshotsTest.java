package io.brokerstream.pnl;

import static io.brokerstream.pnl.RevaluerTest.T0;
import static io.brokerstream.pnl.RevaluerTest.W;
import static io.brokerstream.pnl.RevaluerTest.equity;
import static io.brokerstream.pnl.RevaluerTest.tick;
import static org.assertj.core.api.Assertions.assertThat;

import io.brokerstream.money.Micros;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The snapshot output: every position's latest value reaches it at most once per snapshot period, and
 * always within one period of being computed, ticks or not.
 */
class PositionSnapshotsTest {
  static final long PERIOD = 5 * W; // T0 is on this grid: windows ending T0+W .. T0+4W share a period

  KeyedOneInputStreamOperatorTestHarness<String, PnlInput, PnlRecord> h;

  @BeforeEach
  void open() throws Exception {
    h = harness(null);
  }

  KeyedOneInputStreamOperatorTestHarness<String, PnlInput, PnlRecord> harness(OperatorSubtaskState restore)
      throws Exception {
    var harness = new KeyedOneInputStreamOperatorTestHarness<>(
        new KeyedProcessOperator<>(new Revaluer(W, false, PERIOD, RevaluerTest.PRICER)),
        (PnlInput in) -> in.underlyingId, Types.STRING);
    harness.setup();
    if (restore != null) {
      harness.initializeState(restore);
    }
    harness.open();
    return harness;
  }

  @AfterEach
  void close() throws Exception {
    h.close();
  }

  void in(PnlInput input) throws Exception {
    h.processElement(input, 0L);
  }

  /** Moves the clock; what the main and the snapshot output got meanwhile. */
  record Out(List<PnlRecord> main, List<PnlRecord> snapshots) {}

  Out fire(long time) throws Exception {
    h.getOutput().clear();
    var side = h.getSideOutput(Revaluer.SNAPSHOTS);
    if (side != null) {
      side.clear();
    }
    h.setProcessingTime(time);
    List<PnlRecord> snapshots = new ArrayList<>();
    side = h.getSideOutput(Revaluer.SNAPSHOTS);
    if (side != null) {
      for (StreamRecord<PnlRecord> r : side) {
        snapshots.add(r.getValue());
      }
    }
    return new Out(h.extractOutputValues(), snapshots);
  }

  @Test
  void everyWindowRecordsButOnlyThePeriodsFirstWindowSnapshots() throws Exception {
    h.setProcessingTime(T0);
    in(equity("A1", "EQ1", 10, "100", 1));
    in(equity("A2", "EQ1", -5, "100", 1));
    List<Integer> snapshotted = new ArrayList<>();
    for (int n = 1; n <= 7; n++) {
      in(tick("EQ1", String.valueOf(100 + n), T0 + (n - 1) * W + 1));
      Out out = fire(T0 + n * W);
      assertThat(out.main()).as("window %d", n).hasSize(2);
      if (!out.snapshots().isEmpty()) {
        snapshotted.add(n);
        // the very records of that window, not a second valuation
        assertThat(out.snapshots()).containsExactlyInAnyOrderElementsOf(out.main());
      }
    }
    // the first window (a new book starts a period), then the first of the next period (T0 + 5W)
    assertThat(snapshotted).containsExactly(1, 5);
  }

  @Test
  void whatAWindowLeftOutIsSnapshottedAtTheNextPeriodEvenWithoutTicks() throws Exception {
    h.setProcessingTime(T0);
    in(PnlInput.volatility("EQ1", 0.3));
    in(PnlInput.optionTerms("OP1", "EQ1", false, true, Micros.parse("100"), RevaluerTest.MATURITY, 100));
    in(equity("A1", "EQ1", 10, "100", 1));
    in(PnlInput.position("A1", "M1", "OP1", "EQ1", 100, 2, Micros.parse("5"), 1));
    in(tick("EQ1", "101", T0 + 1));
    assertThat(fire(T0 + W).snapshots()).hasSize(2);
    in(tick("EQ1", "107", T0 + W + 1)); // the equity's last tick
    Out second = fire(T0 + 2 * W);
    assertThat(second.main()).hasSize(2);
    assertThat(second.snapshots()).isEmpty();
    assertThat(fire(T0 + PERIOD - 1).main()).isEmpty();
    Out flushed = fire(T0 + PERIOD);
    // the second window's records, field for field (the option's model value at that window's end, not
    // a later one), on the snapshot output only: nothing was revalued
    assertThat(flushed.snapshots()).containsExactlyInAnyOrderElementsOf(second.main());
    assertThat(flushed.main()).isEmpty();
    assertThat(fire(T0 + 3 * PERIOD)).isEqualTo(new Out(List.of(), List.of())); // nothing left to snapshot
  }

  @Test
  void aPositionChangedWithoutATickIsSnapshottedByThePeriod() throws Exception {
    h.setProcessingTime(T0);
    in(equity("A1", "EQ1", 10, "100", 1));
    in(tick("EQ1", "101", T0 + 1));
    fire(T0 + W);
    h.setProcessingTime(T0 + W + 10);
    in(equity("A1", "EQ1", 20, "100", 2)); // bought more: revalued at the next window end, last price
    Out changed = fire(T0 + 2 * W);
    assertThat(changed.main()).singleElement().satisfies(r -> assertThat(r.quantity).isEqualTo(20));
    assertThat(changed.snapshots()).isEmpty();
    assertThat(fire(T0 + PERIOD).snapshots()).containsExactlyElementsOf(changed.main());
    assertThat(changed.main().get(0).unrealizedMicros).isEqualTo(Micros.parse("20"));
  }

  @Test
  void aClosedPositionIsSnapshottedAtOnce() throws Exception {
    h.setProcessingTime(T0);
    in(equity("A1", "EQ1", 10, "100", 1));
    in(tick("EQ1", "101", T0 + 1));
    fire(T0 + W);
    fire(T0 + W + 10);
    var side = h.getSideOutput(Revaluer.SNAPSHOTS);
    side.clear();
    in(equity("A1", "EQ1", 0, "0", 2));
    assertThat(side).singleElement().satisfies(r -> assertThat(r.getValue().quantity).isZero());
  }

  @Test
  void afterARestoreEveryPositionIsSnapshottedAgain() throws Exception {
    h.setProcessingTime(T0);
    in(equity("A1", "EQ1", 10, "100", 1));
    in(equity("A2", "EQ1", 3, "100", 1));
    in(tick("EQ1", "101", T0 + 1));
    fire(T0 + W);
    in(tick("EQ1", "102", T0 + W + 1));
    assertThat(fire(T0 + 2 * W).snapshots()).isEmpty(); // not snapshotted yet when the job stops
    OperatorSubtaskState state = h.snapshot(1, T0 + 2 * W + 1);
    h.close();
    h = harness(state);
    h.setProcessingTime(T0 + 2 * W + 1);
    // no more ticks: the timer set before the stop comes back with the state, and what the snapshot
    // topic got before the stop is not known, so both positions are snapshotted, at the last price
    assertThat(fire(T0 + PERIOD - 1).main()).isEmpty();
    Out flushed = fire(T0 + PERIOD);
    assertThat(flushed.snapshots()).hasSize(2)
        .allSatisfy(r -> assertThat(r.markPriceMicros).isEqualTo(Micros.parse("102")));
    // their last records are not known after the restore: revalued, so the main topic has them too
    assertThat(flushed.main()).containsExactlyInAnyOrderElementsOf(flushed.snapshots());
  }
}
