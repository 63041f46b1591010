package io.brokerstream.pnl;

import static io.brokerstream.pnl.RevaluerTest.T0;
import static io.brokerstream.pnl.RevaluerTest.W;
import static io.brokerstream.pnl.RevaluerTest.equity;
import static io.brokerstream.pnl.RevaluerTest.tick;
import static org.assertj.core.api.Assertions.assertThat;

import io.brokerstream.money.Micros;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The snapshot output: every held instrument's latest mark reaches it at most once per snapshot
 * period, and always within one period of being computed, ticks or not.
 */
class MarkSnapshotsTest {
  static final long PERIOD =
      5 * W; // T0 is on this grid: windows ending T0+W .. T0+4W share a period

  KeyedOneInputStreamOperatorTestHarness<String, PnlInput, EquityMarksRecord> h;

  @BeforeEach
  void open() throws Exception {
    h = harness(null);
  }

  KeyedOneInputStreamOperatorTestHarness<String, PnlInput, EquityMarksRecord> harness(
      OperatorSubtaskState restore) throws Exception {
    return Harnesses.revaluer(new Revaluer(W, 1, PERIOD, 0, RevaluerTest.PRICER), restore);
  }

  @AfterEach
  void close() throws Exception {
    h.close();
  }

  void in(PnlInput input) throws Exception {
    h.processElement(input, 0L);
  }

  /** Moves the clock; what the main and the snapshot output got meanwhile. */
  record Out(List<MarkRecord> main, List<MarkRecord> snapshots) {}

  Out fire(long time) throws Exception {
    h.getOutput().clear();
    Harnesses.drain(h, Revaluer.SNAPSHOTS);
    h.setProcessingTime(time);
    return new Out(
        RevaluerTest.marks(h.extractOutputValues()), Harnesses.drain(h, Revaluer.SNAPSHOTS));
  }

  @Test
  void everyWindowWritesItsMarksButOnlyThePeriodsFirstWindowSnapshots() throws Exception {
    h.setProcessingTime(T0);
    in(equity("A1", "EQ1", 10, "100", 1));
    in(equity("A2", "EQ1", -5, "100", 1));
    List<Integer> snapshotted = new ArrayList<>();
    for (int n = 1; n <= 7; n++) {
      in(tick("EQ1", String.valueOf(100 + n), T0 + (n - 1) * W + 1));
      Out out = fire(T0 + n * W);
      assertThat(out.main())
          .as("window %d", n)
          .hasSize(1); // one instrument, however many positions
      if (!out.snapshots().isEmpty()) {
        snapshotted.add(n);
        // the very mark of that window, not a second valuation
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
    in(
        PnlInput.optionTerms(
            "OP1", "EQ1", false, true, Micros.parse("100"), RevaluerTest.MATURITY, 100));
    in(equity("A1", "EQ1", 10, "100", 1));
    in(PnlInput.position("A1", "M1", "OP1", "EQ1", 100, 2, Micros.parse("5"), 1));
    in(PnlInput.position("A2", "M1", "OP1", "EQ1", 100, 7, Micros.parse("5"), 1));
    in(tick("EQ1", "101", T0 + 1));
    assertThat(fire(T0 + W).snapshots()).hasSize(2);
    in(tick("EQ1", "107", T0 + W + 1)); // the equity's last tick
    Out second = fire(T0 + 2 * W);
    assertThat(second.main()).hasSize(2);
    assertThat(second.snapshots()).isEmpty();
    assertThat(fire(T0 + PERIOD - 1).main()).isEmpty();
    Out flushed = fire(T0 + PERIOD);
    // the second window's marks, field for field (the option's model value at that window's end,
    // not a later one), on the snapshot output only: nothing was revalued
    assertThat(flushed.snapshots()).containsExactlyInAnyOrderElementsOf(second.main());
    assertThat(flushed.main()).isEmpty();
    assertThat(fire(T0 + 3 * PERIOD))
        .isEqualTo(new Out(List.of(), List.of())); // nothing left to snapshot
  }

  @Test
  void aPositionChangedWithoutATickMovesNoMark() throws Exception {
    h.setProcessingTime(T0);
    in(equity("A1", "EQ1", 10, "100", 1));
    in(tick("EQ1", "101", T0 + 1));
    fire(T0 + W);
    h.setProcessingTime(T0 + W + 10);
    in(
        equity(
            "A1", "EQ1", 20, "100",
            2)); // bought more: its account moves, its instrument's mark does not
    assertThat(fire(T0 + 2 * W)).isEqualTo(new Out(List.of(), List.of()));
    assertThat(fire(T0 + PERIOD)).isEqualTo(new Out(List.of(), List.of()));
  }

  @Test
  void afterARestoreEveryMarkIsWrittenAndSnapshottedAgain() throws Exception {
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
    // what the outputs got before the stop is not known: the next window writes the mark to both
    in(tick("EQ1", "102", T0 + 2 * W + 2));
    Out again = fire(T0 + 3 * W);
    assertThat(again.main())
        .singleElement()
        .satisfies(r -> assertThat(r.markMicros).isEqualTo(Micros.parse("102")));
    assertThat(again.snapshots()).containsExactlyElementsOf(again.main());
  }
}
