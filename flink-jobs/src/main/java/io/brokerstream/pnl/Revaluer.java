package io.brokerstream.pnl;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

/**
 * Keyed by underlying equity: its latest price, the positions in it and in the options on it, the
 * options' terms and the equity's volatility.
 *
 * <p>Ticks are windowed in processing time (tumbling, {@code window.ms}): a tick only replaces the
 * price and makes sure a timer is set for the end of its window. At the window's end every position of
 * the key is revalued once, at the latest price, however many ticks came in: a job that falls behind
 * skips intermediate prices instead of queueing revaluations. Processing time, not event time, because
 * what matters is how fresh the P&L is when it is read, and an idle partition must not hold windows back.
 *
 * <p>With {@code staggered} windows each equity's windows are shifted by a phase derived from its id
 * (still {@code window.ms} long, still tumbling): the revaluation work of all equities then spreads over
 * the window instead of landing at one instant, where the equity revalued last waited for all the others
 * and its P&L came out that much later.
 *
 * <p>A position that changes without a tick is revalued at the end of the current window at the last
 * price; a closed position is emitted at once with zero quantity.
 *
 * <p>Position records are the main output (to Kafka). The account roll-ups get, on the side output
 * {@link #ACCOUNT_DELTAS}, one delta per account per window: each position remembers what the roll-up
 * was last told of it, so the delta is exact and the roll-up holds no copy of the positions.
 */
public class Revaluer extends KeyedProcessFunction<String, PnlInput, PnlRecord> {
  private static final long serialVersionUID = 1L;
  public static final OutputTag<PnlDelta> ACCOUNT_DELTAS = new OutputTag<>("account-deltas", TypeInformation.of(PnlDelta.class));
  private final long windowMs;
  private final boolean staggered;
  private final Valuation valuation;

  private transient ValueState<PnlInput> price;
  private transient ValueState<Long> pendingWindow;
  private transient ValueState<Long> firstTickTs;
  private transient ValueState<Double> volatility;
  private transient ValueState<PositionBook> book;

  private transient Counter pnlCalculations;
  private transient Counter positionsRevalued;
  private transient Counter optionValuations;
  private transient Counter revaluationNanos;
  private transient Counter unpriceable;

  /** Windows aligned to the epoch for every equity (what tests with a hand-driven clock expect). */
  public Revaluer(long windowMs, double rate, int binomialSteps) {
    this(windowMs, false, rate, binomialSteps);
  }

  public Revaluer(long windowMs, boolean staggered, double rate, int binomialSteps) {
    this.windowMs = windowMs;
    this.staggered = staggered;
    this.valuation = new Valuation(rate, binomialSteps);
  }

  @Override
  public void open(OpenContext context) {
    TypeInformation<PnlInput> input = TypeInformation.of(PnlInput.class);
    price = getRuntimeContext().getState(new ValueStateDescriptor<>("price", input));
    pendingWindow = getRuntimeContext().getState(new ValueStateDescriptor<>("pending-window", Types.LONG));
    firstTickTs = getRuntimeContext().getState(new ValueStateDescriptor<>("first-tick-ts", Types.LONG));
    volatility = getRuntimeContext().getState(new ValueStateDescriptor<>("volatility", Types.DOUBLE));
    book = getRuntimeContext().getState(new ValueStateDescriptor<>("book", PositionBookSerializer.INSTANCE));
    var metrics = getRuntimeContext().getMetricGroup();
    pnlCalculations = metrics.counter("pnlCalculations");
    positionsRevalued = metrics.counter("positionsRevalued");
    optionValuations = metrics.counter("optionValuations");
    revaluationNanos = metrics.counter("revaluationNanos");
    unpriceable = metrics.counter("unpriceablePositions");
  }

  @Override
  public void processElement(PnlInput in, Context ctx, Collector<PnlRecord> out) throws Exception {
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
          b.positions.remove(key);
          b.changed.remove(key);
          book.update(b);
          if (known != null) {
            PnlRecord closed = Valuation.closed(in, ctx.timerService().currentProcessingTime());
            out.collect(closed);
            PnlDelta delta = PnlDelta.of(known.memberId, known.accountId);
            delta.add(0, known.reportedMarketValueMicros, 0, known.reportedCostBasisMicros, 0, known.reportedPositions);
            delta.cover(closed.windowEnd, 0L);
            ctx.output(ACCOUNT_DELTAS, delta);
          }
          return;
        }
        if (known != null) {
          in.reportedMarketValueMicros = known.reportedMarketValueMicros;
          in.reportedCostBasisMicros = known.reportedCostBasisMicros;
          in.reportedPositions = known.reportedPositions;
        }
        b.positions.put(key, in);
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
          old.replaced = true; // positions linked to the old terms look them up again
        }
        revalueWhere(ctx, b, p -> p.instrumentId.equals(in.instrumentId)); // terms after positions: value them now
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

  private void revalueWhere(Context ctx, PositionBook b, java.util.function.Predicate<PnlInput> which)
      throws Exception {
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
      long phase = staggered ? phaseOf(ctx.getCurrentKey(), windowMs) : 0L;
      long end = Math.floorDiv(now - phase, windowMs) * windowMs + windowMs + phase;
      ctx.timerService().registerProcessingTimeTimer(end);
      pendingWindow.update(end);
    }
  }

  /** Where in each window period an equity's windows end: fixed per equity, spread over the period. */
  static long phaseOf(String underlying, long windowMs) {
    long h = underlying.hashCode() * 0x9E3779B97F4A7C15L; // spread nearby hashes over the period
    return Math.floorMod(h ^ (h >>> 29), windowMs);
  }

  @Override
  public void onTimer(long windowEnd, OnTimerContext ctx, Collector<PnlRecord> out) throws Exception {
    long started = System.nanoTime();
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
    long revalued = 0;
    for (PnlInput p : due) {
      long mark;
      if (p.instrumentId.equals(p.underlyingId)) {
        mark = tick.priceMicros;
      } else {
        PnlInput terms = p.terms;
        if (terms == null || terms.replaced) {
          terms = b.options.get(p.instrumentId);
          p.terms = terms;
        }
        if (terms == null || sigma == null) {
          unpriceable.inc(); // the option's reference data has not arrived yet: valued once it has
          continue;
        }
        // one model valuation per option per window, however many positions hold it
        if (terms.markWindowEnd != windowEnd || terms.markSpotMicros != tick.priceMicros
            || terms.markVolatility != sigma) {
          terms.markMicros = valuation.optionMark(terms, tick.priceMicros, sigma, windowEnd);
          terms.markWindowEnd = windowEnd;
          terms.markSpotMicros = tick.priceMicros;
          terms.markVolatility = sigma;
          optionValuations.inc();
        }
        mark = terms.markMicros;
      }
      PnlRecord r = Valuation.position(p, tick.priceMicros, mark, windowEnd, computed, ticked ? tickTs : 0L);
      if (p.keyBytes == null) {
        p.keyBytes = p.positionKey().getBytes(StandardCharsets.UTF_8);
      }
      r.keyBytes = p.keyBytes;
      out.collect(r);
      PnlDelta delta = deltas.get(p.accountId);
      if (delta == null) {
        delta = PnlDelta.of(p.memberId, p.accountId);
        deltas.put(p.accountId, delta);
      }
      delta.add(r.marketValueMicros, p.reportedMarketValueMicros, r.costBasisMicros, p.reportedCostBasisMicros,
          r.positions, p.reportedPositions);
      delta.cover(windowEnd, r.firstTickTs);
      p.reportedMarketValueMicros = r.marketValueMicros;
      p.reportedCostBasisMicros = r.costBasisMicros;
      p.reportedPositions = r.positions; // updated in place: the book is written back once below
      revalued++;
    }
    b.changed.clear();
    if (b.size() > 0 || !b.options.isEmpty()) {
      book.update(b);
    }
    for (PnlDelta delta : deltas.values()) {
      ctx.output(ACCOUNT_DELTAS, delta);
    }
    if (ticked) {
      pnlCalculations.inc();
    }
    positionsRevalued.inc(revalued);
    revaluationNanos.inc(System.nanoTime() - started);
  }
}
