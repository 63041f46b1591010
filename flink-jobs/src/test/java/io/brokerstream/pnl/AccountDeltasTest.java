package io.brokerstream.pnl;

import static io.brokerstream.pnl.RevaluerTest.PRICER;
import static io.brokerstream.pnl.RevaluerTest.T0;
import static io.brokerstream.pnl.RevaluerTest.W;
import static io.brokerstream.pnl.RevaluerTest.equity;
import static io.brokerstream.pnl.RevaluerTest.tick;
import static org.assertj.core.api.Assertions.assertThat;

import io.brokerstream.money.Micros;
import java.util.List;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The account deltas a revaluation subtask passes on: combined per account over the flush interval
 * across all its equities' windows, passed on when the windows stop, and kept across a checkpoint
 * and restore.
 */
class AccountDeltasTest {
  static final long FLUSH = 3 * W;
  KeyedOneInputStreamOperatorTestHarness<String, PnlInput, EquityMarksRecord> h;

  KeyedOneInputStreamOperatorTestHarness<String, PnlInput, EquityMarksRecord> harness(
      OperatorSubtaskState restore) throws Exception {
    return Harnesses.revaluer(new Revaluer(W, 1, FLUSH, PRICER), restore);
  }

  @AfterEach
  void close() throws Exception {
    h.close();
  }

  List<PnlDelta> passedOn() {
    return Harnesses.drain(h, Revaluer.ACCOUNT_DELTAS);
  }

  @Test
  void theWindowsOfAFlushIntervalGiveOneDeltaPerAccountWhateverTheEquities() throws Exception {
    h = harness(null);
    h.setProcessingTime(T0);
    h.processElement(equity("A1", "EQ1", 10, "100", 1), 0);
    h.processElement(equity("A1", "EQ2", 5, "50", 1), 0);
    h.processElement(equity("A2", "EQ2", 1, "50", 1), 0);
    h.processElement(
        tick("EQ1", "101", T0 + 1), 0); // the first delta is passed on at once: nothing waited
    h.setProcessingTime(T0 + W);
    assertThat(passedOn()).singleElement().satisfies(d -> assertThat(d.accountId).isEqualTo("A1"));
    h.processElement(tick("EQ1", "102", T0 + W + 1), 0);
    h.processElement(tick("EQ2", "52", T0 + W + 1), 0);
    h.setProcessingTime(T0 + 2 * W);
    assertThat(passedOn())
        .isEmpty(); // both equities' windows ended: their deltas wait for the interval
    h.processElement(tick("EQ1", "103", T0 + 2 * W + 1), 0);
    h.setProcessingTime(T0 + 3 * W);
    assertThat(passedOn()).isEmpty();
    h.setProcessingTime(T0 + 4 * W); // no window now: the flush timer passes them on
    List<PnlDelta> deltas = passedOn();
    assertThat(deltas).extracting(d -> d.accountId).containsExactlyInAnyOrder("A1", "A2");
    PnlDelta a1 = deltas.stream().filter(d -> d.accountId.equals("A1")).findFirst().orElseThrow();
    // EQ1 101 -> 103 on 10, and EQ2 50 -> 52 on 5: one delta for both equities and three windows
    assertThat(a1.unrealizedMicros).isEqualTo(Micros.parse("20") + Micros.parse("10"));
    assertThat(a1.windowEnd).isEqualTo(T0 + 3 * W);
    assertThat(a1.firstTickTs).isEqualTo(T0 + W + 1);
  }

  @Test
  void deltasWaitingAtACheckpointArePassedOnAfterItsRestore() throws Exception {
    h = harness(null);
    h.setProcessingTime(T0);
    h.processElement(equity("A1", "EQ1", 10, "100", 1), 0);
    h.processElement(tick("EQ1", "101", T0 + 1), 0);
    h.setProcessingTime(T0 + W);
    passedOn();
    h.processElement(tick("EQ1", "105", T0 + W + 1), 0);
    h.setProcessingTime(T0 + 2 * W);
    assertThat(passedOn()).isEmpty();
    OperatorSubtaskState state = h.snapshot(1, T0 + 2 * W + 1);
    h.close();
    h = harness(state);
    h.setProcessingTime(T0 + 2 * W + 1);
    h.processElement(tick("EQ1", "106", T0 + 2 * W + 2), 0);
    h.setProcessingTime(
        T0 + 3 * W); // the window: what was restored is passed on, the new delta waits
    h.setProcessingTime(T0 + 7 * W); // and the flush interval after it
    // the restored delta (+40) and the one after it (+10): nothing told twice, nothing lost
    long total = passedOn().stream().mapToLong(d -> d.unrealizedMicros).sum();
    assertThat(total).isEqualTo(Micros.parse("50"));
  }
}
