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
 *
 * <p>A member's record is what the order flow's margin rests on (its unrealized loss), and the flow
 * refuses new exposure on marks older than a bound: so a member roll-up holding open positions
 * sends its record again every {@code refreshMs} even when nothing moved, and its computed_ts says
 * the job is alive and has valued them (0: never again unless moved).
 */
public class RollUp extends KeyedProcessFunction<String, PnlDelta, PnlRecord> {
  private static final long serialVersionUID = 1L;
  public static final OutputTag<PnlDelta> MEMBER_DELTAS =
      new OutputTag<>("member-deltas", TypeInformation.of(PnlDelta.class));
  private final PnlRecord.Scope scope;
  private final long coalesceMs;
  private final long refreshMs;

  private transient ValueState<PnlRecord> total;
  private transient ValueState<PnlRecord>
      reported; // what the member roll-up was last told (ACCOUNT)
  private transient ValueState<Long> pending;
  private transient ValueState<Long> refreshAt;

  public RollUp(PnlRecord.Scope scope, long coalesceMs) {
    this(scope, coalesceMs, 0);
  }

  public RollUp(PnlRecord.Scope scope, long coalesceMs, long refreshMs) {
    if (scope == PnlRecord.Scope.POSITION) {
      throw new IllegalArgumentException("roll-ups are per ACCOUNT or MEMBER");
    }
    this.scope = scope;
    this.coalesceMs = coalesceMs;
    this.refreshMs = scope == PnlRecord.Scope.MEMBER ? refreshMs : 0;
  }

  @Override
  public void open(OpenContext context) {
    TypeInformation<PnlRecord> type = TypeInformation.of(PnlRecord.class);
    total = getRuntimeContext().getState(new ValueStateDescriptor<>("total", type));
    reported = getRuntimeContext().getState(new ValueStateDescriptor<>("reported", type));
    pending = getRuntimeContext().getState(new ValueStateDescriptor<>("pending", Types.LONG));
    refreshAt = getRuntimeContext().getState(new ValueStateDescriptor<>("refresh-at", Types.LONG));
  }

  @Override
  public void processElement(PnlDelta in, Context ctx, Collector<PnlRecord> out) throws Exception {
    if (in.marketValueMicros == 0
        && in.costBasisMicros == 0
        && in.positions == 0
        && in.unrealizedLossMicros == 0) {
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
    sum.unrealizedLossMicros = Math.addExact(sum.unrealizedLossMicros, in.unrealizedLossMicros);
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
    Long due = pending.value();
    if (due == null || due != timestamp) {
      // a refresh: the same totals again, as of now (a coalesced emission re-plans the refresh)
      Long refresh = refreshAt.value();
      if (refresh != null && refresh == timestamp) {
        refreshAt.clear();
        PnlRecord sum = total.value();
        if (sum != null && sum.positions > 0) {
          PnlRecord again = copy(sum);
          again.firstTickTs = 0;
          again.computedTs = ctx.timerService().currentProcessingTime();
          out.collect(again);
          planRefresh(ctx, sum);
        }
      }
      return;
    }
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
      // an account's losses are already per position: passed up as they are, not re-derived from
      // its netted totals
      up.unrealizedLossMicros = 0;
      up.addLoss(sum.unrealizedLossMicros, before == null ? 0 : before.unrealizedLossMicros);
      up.cover(sum.windowEnd, sum.firstTickTs);
      ctx.output(MEMBER_DELTAS, up);
      reported.update(copy(sum));
    }
    sum.firstTickTs = 0; // the next emission covers the ticks after this one
    total.update(sum);
    planRefresh(ctx, sum);
  }

  /** The next refresh of a member holding open positions, refreshMs after the last emission. */
  private void planRefresh(Context ctx, PnlRecord sum) throws Exception {
    if (refreshMs <= 0) {
      return;
    }
    Long planned = refreshAt.value();
    if (planned != null) {
      ctx.timerService().deleteProcessingTimeTimer(planned);
      refreshAt.clear();
    }
    if (sum.positions > 0) {
      long at = ctx.timerService().currentProcessingTime() + refreshMs;
      ctx.timerService().registerProcessingTimeTimer(at);
      refreshAt.update(at);
    }
  }

  private static PnlRecord copy(PnlRecord sum) {
    PnlRecord r = new PnlRecord();
    r.scope = sum.scope;
    r.memberId = sum.memberId;
    r.accountId = sum.accountId;
    r.marketValueMicros = sum.marketValueMicros;
    r.costBasisMicros = sum.costBasisMicros;
    r.unrealizedMicros = sum.unrealizedMicros;
    r.unrealizedLossMicros = sum.unrealizedLossMicros;
    r.positions = sum.positions;
    r.windowEnd = sum.windowEnd;
    r.firstTickTs = sum.firstTickTs;
    r.computedTs = sum.computedTs;
    return r;
  }
}
