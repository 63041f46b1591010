package io.brokerstream.pnl;

import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.util.OutputTag;

/** The P&L operators' test harnesses: each operator alone, keyed as the pipeline keys it. */
final class Harnesses {
  private Harnesses() {}

  /** A revaluer keyed by underlying, opened (from {@code restore} when not null). */
  static KeyedOneInputStreamOperatorTestHarness<String, PnlInput, EquityMarksRecord> revaluer(
      Revaluer revaluer, OperatorSubtaskState restore) throws Exception {
    return opened(
        new KeyedOneInputStreamOperatorTestHarness<>(
            new KeyedProcessOperator<>(revaluer), (PnlInput in) -> in.underlyingId, Types.STRING),
        restore);
  }

  /** A roll-up keyed by the scope it adds up (account or member), opened. */
  static KeyedOneInputStreamOperatorTestHarness<String, PnlDelta, PnlRecord> rollUp(
      KeyedProcessFunction<String, PnlDelta, PnlRecord> rollUp, PnlRecord.Scope scope)
      throws Exception {
    return opened(
        new KeyedOneInputStreamOperatorTestHarness<>(
            new KeyedProcessOperator<>(rollUp),
            (PnlDelta d) -> scope == PnlRecord.Scope.ACCOUNT ? d.accountId : d.memberId,
            Types.STRING),
        null);
  }

  /** What a side output got since the last call, taken out of it. */
  static <T> List<T> drain(KeyedOneInputStreamOperatorTestHarness<?, ?, ?> h, OutputTag<T> tag) {
    List<T> out = new ArrayList<>();
    var queue = h.getSideOutput(tag);
    if (queue != null) {
      for (StreamRecord<T> r : queue) {
        out.add(r.getValue());
      }
      queue.clear();
    }
    return out;
  }

  private static <K, I, O> KeyedOneInputStreamOperatorTestHarness<K, I, O> opened(
      KeyedOneInputStreamOperatorTestHarness<K, I, O> harness, OperatorSubtaskState restore)
      throws Exception {
    harness.setup();
    if (restore != null) {
      harness.initializeState(restore);
    }
    harness.open();
    return harness;
  }
}
