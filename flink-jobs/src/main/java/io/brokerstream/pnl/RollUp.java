package io.brokerstream.pnl;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/**
 * Sums the latest record of each child (positions of an account, or accounts of a member) into one
 * record for the key. Totals move by deltas (exact longs), so a roll-up costs the same whatever the
 * number of children; the result is emitted at most once per {@code coalesceMs}, so the hundred positions
 * of an account revalued in one window give one account record, not a hundred.
 */
public class RollUp extends KeyedProcessFunction<String, PnlRecord, PnlRecord> {
  private static final long serialVersionUID = 1L;
  private final PnlRecord.Scope scope;
  private final long coalesceMs;

  private transient MapState<String, PnlRecord> children;
  private transient ValueState<PnlRecord> total;
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
    children = getRuntimeContext().getMapState(new MapStateDescriptor<>("children", Types.STRING, type));
    total = getRuntimeContext().getState(new ValueStateDescriptor<>("total", type));
    pending = getRuntimeContext().getState(new ValueStateDescriptor<>("pending", Types.LONG));
  }

  @Override
  public void processElement(PnlRecord in, Context ctx, Collector<PnlRecord> out) throws Exception {
    String child = in.key();
    PnlRecord before = children.get(child);
    PnlRecord sum = total.value();
    if (sum == null) {
      sum = new PnlRecord();
      sum.scope = scope;
      sum.memberId = in.memberId;
      sum.accountId = scope == PnlRecord.Scope.ACCOUNT ? in.accountId : null;
    }
    if (before != null) {
      sum.marketValueMicros = Math.subtractExact(sum.marketValueMicros, before.marketValueMicros);
      sum.costBasisMicros = Math.subtractExact(sum.costBasisMicros, before.costBasisMicros);
      sum.unrealizedMicros = Math.subtractExact(sum.unrealizedMicros, before.unrealizedMicros);
      sum.positions -= before.positions;
    }
    sum.marketValueMicros = Math.addExact(sum.marketValueMicros, in.marketValueMicros);
    sum.costBasisMicros = Math.addExact(sum.costBasisMicros, in.costBasisMicros);
    sum.unrealizedMicros = Math.addExact(sum.unrealizedMicros, in.unrealizedMicros);
    sum.positions += in.positions;
    sum.windowEnd = Math.max(sum.windowEnd, in.windowEnd);
    if (in.firstTickTs > 0 && (sum.firstTickTs == 0 || in.firstTickTs < sum.firstTickTs)) {
      sum.firstTickTs = in.firstTickTs;
    }
    if (in.positions == 0 && in.scope == PnlRecord.Scope.POSITION) {
      children.remove(child);
    } else {
      children.put(child, in);
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
  public void onTimer(long timestamp, OnTimerContext ctx, Collector<PnlRecord> out) throws Exception {
    pending.clear();
    PnlRecord sum = total.value();
    PnlRecord emitted = new PnlRecord();
    emitted.scope = sum.scope;
    emitted.memberId = sum.memberId;
    emitted.accountId = sum.accountId;
    emitted.marketValueMicros = sum.marketValueMicros;
    emitted.costBasisMicros = sum.costBasisMicros;
    emitted.unrealizedMicros = sum.unrealizedMicros;
    emitted.positions = sum.positions;
    emitted.windowEnd = sum.windowEnd;
    emitted.firstTickTs = sum.firstTickTs;
    emitted.computedTs = ctx.timerService().currentProcessingTime();
    out.collect(emitted);
    sum.firstTickTs = 0; // the next emission covers the ticks after this one
    total.update(sum);
  }
}
