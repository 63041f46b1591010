package io.brokerstream.pnl;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

/**
 * Totals of an account (from its positions' deltas) or a member (from its accounts' deltas). Totals
 * move by deltas (exact longs), so a roll-up costs the same whatever the number of children and
 * keeps no copy of them; the record is emitted at most once per {@code coalesceMs}, and only after
 * a delta that moved it, so the hundred positions of an account revalued in one window give one
 * account record, not a hundred, and a window that moved none of them gives none.
 *
 * <p>The full record is the main output (to Kafka). An account roll-up also passes its own move
 * since its last emission up to the member roll-up, on the side output {@link #MEMBER_DELTAS}.
 */
public class RollUp extends KeyedProcessFunction<String, PnlDelta, PnlRecord> {
  private static final long serialVersionUID = 1L;
  public static final OutputTag<PnlDelta> MEMBER_DELTAS =
      new OutputTag<>("member-deltas", TypeInformation.of(PnlDelta.class));
  private final PnlRecord.Scope scope;
  private final long coalesceMs;

  private transient ValueState<PnlRecord> total;
  private transient ValueState<PnlRecord>
      reported; // what the member roll-up was last told (ACCOUNT)
  private transient ValueState<Long> pending;

  public RollUp(PnlRecord.Scope scope, long coalesceMs) {
    if (scope == PnlRecord.Scope.POSITION) {
      throw new IllegalArgumentException("roll-ups are per ACCOUNT or MEMBER");
    }
    this.scope = scope;
    this.coalesceMs = coalesceMs;
  }

  @Override
  public void open(OpenContext context) {
    TypeInformation<PnlRecord> type = TypeInformation.of(PnlRecord.class);
    total = getRuntimeContext().getState(new ValueStateDescriptor<>("total", type));
    reported = getRuntimeContext().getState(new ValueStateDescriptor<>("reported", type));
    pending = getRuntimeContext().getState(new ValueStateDescriptor<>("pending", Types.LONG));
  }

  @Override
  public void processElement(PnlDelta in, Context ctx, Collector<PnlRecord> out) throws Exception {
    if (in.marketValueMicros == 0 && in.costBasisMicros == 0 && in.positions == 0) {
      return; // nothing moved: nothing to tell
    }
    PnlRecord sum = total.value();
    if (sum == null) {
      sum = new PnlRecord();
      sum.scope = scope;
      sum.memberId = in.memberId;
      sum.accountId = scope == PnlRecord.Scope.ACCOUNT ? in.accountId : null;
    }
    sum.marketValueMicros = Math.addExact(sum.marketValueMicros, in.marketValueMicros);
    sum.costBasisMicros = Math.addExact(sum.costBasisMicros, in.costBasisMicros);
    sum.unrealizedMicros = Math.addExact(sum.unrealizedMicros, in.unrealizedMicros);
    sum.positions += in.positions;
    sum.windowEnd = Math.max(sum.windowEnd, in.windowEnd);
    if (in.firstTickTs > 0 && (sum.firstTickTs == 0 || in.firstTickTs < sum.firstTickTs)) {
      sum.firstTickTs = in.firstTickTs;
    }
    total.update(sum);
    if (pending.value() == null) {
      long now = ctx.timerService().currentProcessingTime();
      long at = (now / coalesceMs + 1) * coalesceMs;
      ctx.timerService().registerProcessingTimeTimer(at);
      pending.update(at);
    }
  }

  @Override
  public void onTimer(long timestamp, OnTimerContext ctx, Collector<PnlRecord> out)
      throws Exception {
    pending.clear();
    PnlRecord sum = total.value();
    PnlRecord emitted = copy(sum);
    emitted.computedTs = ctx.timerService().currentProcessingTime();
    out.collect(emitted);
    if (scope == PnlRecord.Scope.ACCOUNT) {
      PnlRecord before = reported.value();
      PnlDelta up = PnlDelta.of(sum.memberId, null);
      up.add(
          sum.marketValueMicros,
          before == null ? 0 : before.marketValueMicros,
          sum.costBasisMicros,
          before == null ? 0 : before.costBasisMicros,
          sum.positions,
          before == null ? 0 : before.positions);
      up.cover(sum.windowEnd, sum.firstTickTs);
      ctx.output(MEMBER_DELTAS, up);
      reported.update(copy(sum));
    }
    sum.firstTickTs = 0; // the next emission covers the ticks after this one
    total.update(sum);
  }

  private static PnlRecord copy(PnlRecord sum) {
    PnlRecord r = new PnlRecord();
    r.scope = sum.scope;
    r.memberId = sum.memberId;
    r.accountId = sum.accountId;
    r.marketValueMicros = sum.marketValueMicros;
    r.costBasisMicros = sum.costBasisMicros;
    r.unrealizedMicros = sum.unrealizedMicros;
    r.positions = sum.positions;
    r.windowEnd = sum.windowEnd;
    r.firstTickTs = sum.firstTickTs;
    r.computedTs = sum.computedTs;
    return r;
  }
}
