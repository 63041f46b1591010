package io.brokerstream.pnl;

import io.brokerstream.pricing.OptionPricer;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.metrics.Counter;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

/**
 * Keyed by underlying equity: its latest price, the positions in it and in the options on it, the
 * options' terms and the equity's volatility.
 *
 * <p>Ticks are windowed in processing time (tumbling, {@code window.ms}): a tick only replaces the
 * price and makes sure a timer is set for the end of its window. At the window's end every position
 * of the key is revalued once, at the latest price, however many ticks came in: a job that falls
 * behind skips intermediate prices instead of queueing revaluations. Processing time, not event
 * time, because what matters is how fresh the P&L is when it is read, and an idle partition must
 * not hold windows back.
 *
 * <p>With {@code phases} above 1 each equity's windows are shifted by one of that many phases,
 * evenly spaced over the window and derived from its id (still {@code window.ms} long, still
 * tumbling): the revaluation work of all equities then spreads over the window instead of landing
 * at one instant. Few phases, not one per equity: every distinct window end is a timer firing and a
 * wake-up of the task thread, and a phase per equity woke it hundreds of times a second, at more
 * CPU than the revaluations themselves.
 *
 * <p>What leaves grows with what moved, not with what is held. The main output is one {@link
 * EquityMarksRecord} per equity per window in which a held instrument's mark moved, carrying the
 * marks of all its held instruments (the equity's price, each option's model value, each computed
 * once however many positions hold it): a position's P&L is its quantity and cost at its
 * instrument's mark, which every reader can join, and the latest record per equity values every
 * position in it. The account roll-ups get, on the side output {@link #ACCOUNT_DELTAS}, one exact
 * delta per account whose positions moved: each position remembers what the roll-up was last told
 * of it, so the roll-up holds no copy of the positions. A position that changes without a tick is
 * revalued at the end of the current window at the last price; a closed one leaves its account's
 * totals at once.
 *
 * <p>The same records are what Postgres syncs (sink-marks, one row per equity): a separate copy for
 * the sync, per held instrument, would cost a record and a row per held instrument instead.
 */
public class Revaluer extends KeyedProcessFunction<String, PnlInput, EquityMarksRecord>
    implements CheckpointedFunction {
  private static final long serialVersionUID = 1L;
  public static final OutputTag<PnlDelta> ACCOUNT_DELTAS =
      new OutputTag<>("account-deltas", TypeInformation.of(PnlDelta.class));
  private final long windowMs;
  private final int phases;
  private final long deltaFlushMs;
  private final Valuation valuation;
  // Account deltas of this subtask not passed on yet (operator state, across all its keys).
  private transient Map<String, PnlDelta> pendingDeltas;
  private transient ListState<PnlDelta> savedDeltas;
  private transient long lastFlush;

  private transient ValueState<PnlInput> price;
  private transient ValueState<Long> pendingWindow;
  private transient ValueState<Long> firstTickTs;
  private transient ValueState<Double> volatility;
  private transient ValueState<PositionBook> book;

  private transient Counter pnlCalculations;
  private transient Counter positionsRevalued;
  private transient Counter optionValuations;
  private transient Counter marksWritten;
  private transient Counter revaluationNanos;
  private transient Counter unpriceable;

  /** Windows aligned to the epoch for every equity (what tests with a hand-driven clock expect). */
  public Revaluer(long windowMs, OptionPricer pricer) {
    this(windowMs, 1, 0, pricer);
  }

  /** {@code deltaFlushMs} 0: every window passes its account deltas on at once. */
  public Revaluer(long windowMs, int phases, long deltaFlushMs, OptionPricer pricer) {
    if (phases < 1 || phases > windowMs) {
      throw new IllegalArgumentException(
          "window.phases must be between 1 and window.ms (" + windowMs + "), not " + phases);
    }
    this.windowMs = windowMs;
    this.phases = phases;
    this.deltaFlushMs = deltaFlushMs;
    this.valuation = new Valuation(pricer);
  }

  @Override
  public void open(OpenContext context) {
    TypeInformation<PnlInput> input = TypeInformation.of(PnlInput.class);
    price = getRuntimeContext().getState(new ValueStateDescriptor<>("price", input));
    pendingWindow =
        getRuntimeContext().getState(new ValueStateDescriptor<>("pending-window", Types.LONG));
    firstTickTs =
        getRuntimeContext().getState(new ValueStateDescriptor<>("first-tick-ts", Types.LONG));
    volatility =
        getRuntimeContext().getState(new ValueStateDescriptor<>("volatility", Types.DOUBLE));
    book =
        getRuntimeContext()
            .getState(new ValueStateDescriptor<>("book", PositionBookSerializer.INSTANCE));
    var metrics = getRuntimeContext().getMetricGroup();
    pnlCalculations = metrics.counter("pnlCalculations");
    positionsRevalued = metrics.counter("positionsRevalued");
    optionValuations = metrics.counter("optionValuations");
    marksWritten = metrics.counter("marksWritten");
    revaluationNanos = metrics.counter("revaluationNanos");
    unpriceable = metrics.counter("unpriceablePositions");
  }

  @Override
  public void processElement(PnlInput in, Context ctx, Collector<EquityMarksRecord> out)
      throws Exception {
    switch (in.kind) {
      case TICK -> {
        PnlInput last = price.value();
        if (last != null && in.eventTs < last.eventTs) {
          return; // an older price arriving late never replaces a newer one
        }
        price.update(in);
        if (firstTickTs.value() == null) {
          firstTickTs.update(in.eventTs);
        }
        scheduleWindowEnd(ctx);
      }
      case POSITION -> {
        PositionBook b = book();
        String key = in.positionKey();
        PnlInput known = b.positions.get(key);
        if (known != null && in.version < known.version) {
          return; // a replayed older version
        }
        if (in.quantity == 0) {
          b.remove(key);
          b.changed.remove(key);
          book.update(b);
          if (known != null && known.reportedPositions != 0) {
            // what its account was told of it goes, with the next deltas the subtask passes on
            long now = ctx.timerService().currentProcessingTime();
            PnlDelta delta = PnlDelta.of(known.memberId, known.accountId);
            delta.add(
                0,
                known.reportedMarketValueMicros,
                0,
                known.reportedCostBasisMicros,
                0,
                known.reportedPositions);
            delta.cover(now, 0L);
            combine(List.of(delta), ctx, now);
          }
          return;
        }
        if (known != null) {
          in.reportedMarketValueMicros = known.reportedMarketValueMicros;
          in.reportedCostBasisMicros = known.reportedCostBasisMicros;
          in.reportedPositions = known.reportedPositions;
        }
        b.put(key, in.canonicalIds());
        if (price.value() != null) {
          b.changed.add(key);
          scheduleWindowEnd(ctx);
        }
        book.update(b);
      }
      case OPTION_TERMS -> {
        PositionBook b = book();
        PnlInput old = b.options.put(in.instrumentId, in);
        if (old != null) {
          // positions valued at the old terms' mark find the new terms (and mark) again
          for (PnlInput p : b.positions.values()) {
            if (p.instrumentId.equals(in.instrumentId)) {
              p.terms = null;
              p.valuedAt = null;
            }
          }
        }
        revalueWhere(
            ctx,
            b,
            p -> p.instrumentId.equals(in.instrumentId)); // terms after positions: value them now
        book.update(b);
      }
      case VOLATILITY -> {
        volatility.update(in.volatility);
        PositionBook b = book.value();
        if (b != null) {
          revalueWhere(ctx, b, p -> !p.instrumentId.equals(p.underlyingId));
          book.update(b);
        }
      }
    }
  }

  private PositionBook book() throws Exception {
    PositionBook b = book.value();
    return b != null ? b : new PositionBook();
  }

  private void revalueWhere(
      Context ctx, PositionBook b, java.util.function.Predicate<PnlInput> which) throws Exception {
    if (price.value() == null) {
      return;
    }
    boolean any = false;
    for (Map.Entry<String, PnlInput> e : b.positions.entrySet()) {
      if (which.test(e.getValue())) {
        b.changed.add(e.getKey());
        any = true;
      }
    }
    if (any) {
      scheduleWindowEnd(ctx);
    }
  }

  private void scheduleWindowEnd(Context ctx) throws Exception {
    if (pendingWindow.value() == null) {
      long now = ctx.timerService().currentProcessingTime();
      long phase = phaseOf(ctx.getCurrentKey(), windowMs, phases);
      long end = Math.floorDiv(now - phase, windowMs) * windowMs + windowMs + phase;
      ctx.timerService().registerProcessingTimeTimer(end);
      pendingWindow.update(end);
    }
  }

  /**
   * Where in each window period an equity's windows end: fixed per equity, one of {@code phases}
   * instants evenly spaced over the period (0 for all with one phase).
   */
  static long phaseOf(String underlying, long windowMs, int phases) {
    long h = underlying.hashCode() * 0x9E3779B97F4A7C15L; // spread nearby hashes over the phases
    return Math.floorMod(h ^ (h >>> 29), phases) * (windowMs / phases);
  }

  /**
   * The mark a position is valued at (its equity's, or its option's), or null while the option is
   * unknown.
   */
  private static MarkState markOf(PositionBook b, PnlInput p) {
    MarkState m = p.valuedAt;
    if (m != null) {
      return m;
    }
    if (p.instrumentId.equals(p.underlyingId)) {
      m = b.equityMark;
    } else {
      PnlInput terms = b.options.get(p.instrumentId);
      p.terms = terms;
      if (terms == null) {
        return null; // looked up again next window
      }
      if (terms.mark == null) {
        terms.mark = new MarkState();
      }
      m = terms.mark;
    }
    p.valuedAt = m;
    return m;
  }

  /**
   * Brings a mark to this window: the spot for the equity, the model's value for an option (once a
   * window).
   */
  private boolean value(
      PositionBook b,
      PnlInput p,
      MarkState m,
      long spotMicros,
      Double sigma,
      long windowEnd,
      long computed,
      long tickTs) {
    if (m.windowEnd == windowEnd) {
      return true;
    }
    if (m != b.equityMark) {
      if (sigma == null) {
        return false;
      }
      m.micros = valuation.optionMark(p.terms, spotMicros, sigma, windowEnd);
      optionValuations.inc();
    } else {
      m.micros = spotMicros;
    }
    m.underlyingMicros = spotMicros;
    m.windowEnd = windowEnd;
    m.computedTs = computed;
    m.firstTickTs = tickTs;
    return true;
  }

  /**
   * Every held instrument of the book with a known mark, each once: what a reader needs to value
   * every position of the equity from this record alone. All are at the latest price (a tick
   * revalues every held instrument; without one, marks are from the same price). `valued` is what
   * the window valued: after a tick that is every held instrument already; in a window without one,
   * the book's held instruments are looked up, one mark each, not found by walking its positions.
   */
  private static EquityMarksRecord heldMarks(
      PositionBook b,
      Map<String, MarkState> valued,
      boolean ticked,
      String underlying,
      long spotMicros,
      long windowEnd,
      long computed,
      long firstTickTs) {
    Map<String, MarkState> held = valued;
    if (!ticked) {
      held = new LinkedHashMap<>();
      for (String id : b.heldInstruments()) {
        MarkState m;
        if (id.equals(underlying)) {
          m = b.equityMark;
        } else {
          PnlInput terms = b.options.get(id);
          m = terms == null ? null : terms.mark;
        }
        // a mark the model could not bring to this price (no volatility yet) is left out, not
        // sent beside a price it was not valued at
        if (m != null && m.micros != MarkState.UNKNOWN && m.underlyingMicros == spotMicros) {
          held.put(id, m);
        }
      }
    }
    String[] ids = new String[held.size()];
    long[] marks = new long[held.size()];
    int i = 0;
    for (Map.Entry<String, MarkState> e : held.entrySet()) {
      MarkState m = e.getValue();
      ids[i] = e.getKey();
      marks[i++] = m.micros;
      m.emitted = m.micros;
    }
    return new EquityMarksRecord(
        underlying, spotMicros, windowEnd, computed, firstTickTs, ids, marks);
  }

  /**
   * Adds deltas to what this subtask passes on to the account roll-ups, and passes everything on
   * once {@code deltaFlushMs} has gone by since the last time: the windows of all equities in that
   * time give one delta per account, not one per account per equity per window (the roll-ups are
   * across the network). A timer makes sure what waits is passed on when the windows stop.
   */
  private void combine(Collection<PnlDelta> deltas, Context ctx, long now) throws Exception {
    for (PnlDelta d : deltas) {
      PnlDelta sum = pendingDeltas.get(d.accountId);
      if (sum == null) {
        pendingDeltas.put(d.accountId, d);
      } else {
        sum.merge(d);
      }
    }
    if (pendingDeltas.isEmpty()) {
      return;
    }
    if (now - lastFlush >= deltaFlushMs) {
      flushDeltas(ctx, now);
    } else {
      ctx.timerService().registerProcessingTimeTimer(lastFlush + deltaFlushMs);
    }
  }

  private void flushDeltas(Context ctx, long now) {
    for (PnlDelta d : pendingDeltas.values()) {
      ctx.output(ACCOUNT_DELTAS, d);
    }
    pendingDeltas.clear();
    lastFlush = now;
  }

  @Override
  public void snapshotState(FunctionSnapshotContext context) throws Exception {
    savedDeltas.update(
        new ArrayList<>(pendingDeltas.values())); // not passed on yet: they must survive a restore
  }

  @Override
  public void initializeState(FunctionInitializationContext context) throws Exception {
    savedDeltas =
        context
            .getOperatorStateStore()
            .getListState(
                new ListStateDescriptor<>(
                    "pending-account-deltas", TypeInformation.of(PnlDelta.class)));
    pendingDeltas = new HashMap<>();
    if (context.isRestored()) {
      for (PnlDelta d : savedDeltas.get()) {
        PnlDelta sum = pendingDeltas.get(d.accountId);
        if (sum == null) {
          pendingDeltas.put(d.accountId, d);
        } else {
          sum.merge(d);
        }
      }
    }
  }

  @Override
  public void onTimer(long windowEnd, OnTimerContext ctx, Collector<EquityMarksRecord> out)
      throws Exception {
    long now = ctx.timerService().currentProcessingTime();
    if (!pendingDeltas.isEmpty() && now - lastFlush >= deltaFlushMs) {
      flushDeltas(ctx, now);
    }
    Long pending = pendingWindow.value();
    if (pending != null && pending == windowEnd) {
      revalue(windowEnd, ctx, out);
    }
    // else a flush timer
  }

  private void revalue(long windowEnd, OnTimerContext ctx, Collector<EquityMarksRecord> out)
      throws Exception {
    long started = System.nanoTime();
    String underlying = ctx.getCurrentKey();
    pendingWindow.clear();
    PnlInput tick = price.value();
    Long tickTs = firstTickTs.value();
    firstTickTs.clear();
    boolean ticked = tickTs != null;
    PositionBook b = book();
    Collection<PnlInput> due;
    if (ticked) {
      due = b.positions.values();
    } else {
      due = new ArrayList<>(b.changed.size());
      for (String key : b.changed) {
        PnlInput p = b.positions.get(key);
        if (p != null) {
          due.add(p);
        }
      }
    }
    long computed = ctx.timerService().currentProcessingTime();
    Double sigma = volatility.value();
    Map<String, PnlDelta> deltas = new HashMap<>();
    Map<String, MarkState> valued =
        new LinkedHashMap<>(); // instrument -> mark valued in this window
    long revalued = 0;
    for (PnlInput p : due) {
      MarkState m = markOf(b, p);
      boolean first =
          m != null && m.windowEnd != windowEnd; // its instrument's first in this window
      if (m == null
          || tick == null
          || !value(b, p, m, tick.priceMicros, sigma, windowEnd, computed, ticked ? tickTs : 0L)) {
        unpriceable.inc(); // the option's reference data has not arrived yet: valued once it has
        continue;
      }
      if (first) {
        valued.put(p.instrumentId, m);
      }
      long units = Math.multiplyExact(p.quantity, (long) p.multiplier);
      long marketValue = Math.multiplyExact(units, m.micros);
      // the exact cost of the open units, signed like the quantity: a short's is negative
      long costBasis =
          Math.multiplyExact(Long.signum(p.quantity) * p.costMicros, (long) p.multiplier);
      if (marketValue != p.reportedMarketValueMicros
          || costBasis != p.reportedCostBasisMicros
          || p.reportedPositions != 1) {
        PnlDelta delta = deltas.get(p.accountId);
        if (delta == null) {
          delta = PnlDelta.of(p.memberId, p.accountId);
          deltas.put(p.accountId, delta);
        }
        delta.add(
            marketValue,
            p.reportedMarketValueMicros,
            costBasis,
            p.reportedCostBasisMicros,
            1,
            p.reportedPositions);
        delta.cover(windowEnd, m.firstTickTs);
        p.reportedMarketValueMicros = marketValue;
        p.reportedCostBasisMicros = costBasis;
        p.reportedPositions = 1; // updated in place: the book is written back once below
      }
      revalued++;
    }
    boolean moved = false;
    for (MarkState m : valued.values()) {
      moved |= m.micros != m.emitted;
    }
    if (moved) {
      EquityMarksRecord marks =
          heldMarks(
              b,
              valued,
              ticked,
              underlying,
              tick.priceMicros,
              windowEnd,
              computed,
              ticked ? tickTs : 0L);
      out.collect(marks);
      marksWritten.inc(marks.size());
    }
    b.changed.clear();
    if (b.size() > 0 || !b.options.isEmpty()) {
      book.update(b);
    }
    combine(deltas.values(), ctx, computed);
    if (ticked) {
      pnlCalculations.inc();
    }
    positionsRevalued.inc(revalued);
    revaluationNanos.inc(System.nanoTime() - started);
  }
}
