package io.brokerstream.pnl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.brokerstream.money.Micros;
import io.brokerstream.pricing.BlackScholes;
import io.brokerstream.pricing.OptionType;
import java.time.LocalDate;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Window semantics, marks and account deltas, with Flink's keyed operator harness and a hand-driven
 * clock.
 */
class RevaluerTest {
  static final long W = 1000;
  static final int PHASES = 10;
  // 2026-01-01T00:00:00Z: options below mature a year later
  static final long T0 = LocalDate.of(2026, 1, 1).toEpochDay() * 86_400_000L;
  static final int MATURITY = (int) LocalDate.of(2026, 12, 31).toEpochDay();
  static final double RATE = 0.05;
  static final io.brokerstream.pricing.MarketModel MODEL =
      io.brokerstream.pricing.MarketModel.load();
  static final io.brokerstream.pricing.OptionPricer PRICER =
      new io.brokerstream.pricing.OptionPricer(
          RATE, MODEL.americanPutHorizonYears(), MODEL.daysPerYear());

  KeyedOneInputStreamOperatorTestHarness<String, PnlInput, EquityMarksRecord> h;

  @BeforeEach
  void open() throws Exception {
    h = Harnesses.revaluer(new Revaluer(W, PRICER), null);
    h.setProcessingTime(T0);
  }

  @AfterEach
  void close() throws Exception {
    h.close();
  }

  void in(PnlInput input) throws Exception {
    h.processElement(input, 0L);
  }

  /** The equities' records written meanwhile, as the clock moves to `time`. */
  List<EquityMarksRecord> fireRecords(long time) throws Exception {
    h.getOutput().clear();
    h.setProcessingTime(time);
    return h.extractOutputValues();
  }

  /** Moves the clock: the marks written meanwhile, one per instrument per equity record. */
  List<MarkRecord> fire(long time) throws Exception {
    return marks(fireRecords(time));
  }

  static List<MarkRecord> marks(List<EquityMarksRecord> records) {
    List<MarkRecord> out = new java.util.ArrayList<>();
    for (EquityMarksRecord r : records) {
      for (int i = 0; i < r.size(); i++) {
        MarkRecord m = new MarkRecord();
        m.instrumentId = r.instrumentIds[i];
        m.underlyingId = r.underlyingId;
        m.underlyingPriceMicros = r.underlyingPriceMicros;
        m.markMicros = r.markMicros[i];
        m.windowEnd = r.windowEnd;
        m.computedTs = r.computedTs;
        m.firstTickTs = r.firstTickTs;
        out.add(m);
      }
    }
    return out;
  }

  static PnlInput tick(String id, String price, long ts) {
    return PnlInput.tick(id, Micros.parse(price), ts, ts);
  }

  static PnlInput equity(String account, String id, long qty, String avgCost, long version) {
    return PnlInput.position(account, "M1", id, id, 1, qty, Micros.parse(avgCost), version);
  }

  Map<String, long[]> accountTotals = new HashMap<>();

  /**
   * Adds the account deltas emitted so far to running totals: {market value, cost, positions,
   * deltas}.
   */
  Map<String, long[]> drainDeltas() {
    var queue = h.getSideOutput(Revaluer.ACCOUNT_DELTAS);
    if (queue != null) {
      for (StreamRecord<PnlDelta> r : queue) {
        PnlDelta d = r.getValue();
        long[] t = accountTotals.computeIfAbsent(d.accountId, k -> new long[4]);
        t[0] += d.marketValueMicros;
        t[1] += d.costBasisMicros;
        t[2] += d.positions;
        t[3]++;
        assertThat(d.unrealizedMicros).isEqualTo(d.marketValueMicros - d.costBasisMicros);
      }
      queue.clear();
    }
    return accountTotals;
  }

  /** An account's unrealized P&L as its roll-up has been told so far. */
  long unrealized(String account) {
    long[] t = drainDeltas().getOrDefault(account, new long[4]);
    return t[0] - t[1];
  }

  @Test
  void onlyTheLatestTickOfAWindowIsUsedAndTheMarkIsWrittenOnceWhateverHoldsIt() throws Exception {
    in(equity("A1", "EQ1", 10, "100", 1));
    in(equity("A2", "EQ1", -4, "110", 1));
    in(tick("EQ1", "101", T0 + 10));
    in(tick("EQ1", "105.5", T0 + 20));
    in(tick("EQ1", "103.25", T0 + 30)); // the latest: the two before it are skipped
    assertThat(fire(T0 + W - 1)).isEmpty(); // the window is still open
    MarkRecord mark = fire(T0 + W).stream().collect(onlyOne());
    assertThat(mark.instrumentId).isEqualTo("EQ1");
    assertThat(mark.markMicros).isEqualTo(Micros.parse("103.25"));
    assertThat(mark.underlyingPriceMicros).isEqualTo(Micros.parse("103.25"));
    assertThat(mark.windowEnd).isEqualTo(T0 + W);
    assertThat(mark.firstTickTs).isEqualTo(T0 + 10);
    assertThat(drainDeltas().get("A1"))
        .containsExactly(Micros.parse("1032.5"), Micros.parse("1000"), 1, 1);
    assertThat(unrealized("A2")).isEqualTo(Micros.parse("27")); // short 4 at 110, now 103.25
  }

  @Test
  void noTickNoWindowAndOlderTicksNeverReplaceNewerOnes() throws Exception {
    in(equity("A1", "EQ1", 10, "100", 1));
    assertThat(fire(T0 + 5 * W)).isEmpty(); // no price yet: nothing to value, no window
    in(tick("EQ1", "120", T0 + 5 * W + 50));
    in(tick("EQ1", "90", T0 + 5 * W + 10)); // late and older
    assertThat(fire(T0 + 6 * W))
        .singleElement()
        .extracting(r -> r.markMicros)
        .isEqualTo(Micros.parse("120"));
    assertThat(fire(T0 + 9 * W)).isEmpty(); // quiet windows emit nothing
    assertThat(h.numProcessingTimeTimers()).isZero();
  }

  @Test
  void aTickThatMovesNothingWritesNothing() throws Exception {
    in(equity("A1", "EQ1", 10, "100", 1));
    in(tick("EQ1", "120", T0 + 1));
    assertThat(fire(T0 + W)).hasSize(1);
    drainDeltas();
    in(tick("EQ1", "120", T0 + W + 1)); // the same price again
    assertThat(fire(T0 + 2 * W)).isEmpty();
    assertThat(drainDeltas().get("A1")[3]).isEqualTo(1); // nor does its account hear of it again
  }

  @Test
  void ticksOfOneKeyDoNotRevalueAnotherKey() throws Exception {
    in(equity("A1", "EQ1", 10, "100", 1));
    in(equity("A1", "EQ2", 5, "50", 1));
    in(tick("EQ2", "55", T0 + 1));
    assertThat(fire(T0 + W))
        .singleElement()
        .satisfies(r -> assertThat(r.instrumentId).isEqualTo("EQ2"));
    assertThat(unrealized("A1")).isEqualTo(Micros.parse("25"));
  }

  @Test
  void optionsAreValuedWithTheirUnderlyingByTheModelOnceAWindow() throws Exception {
    in(PnlInput.volatility("EQ1", 0.2));
    in(PnlInput.optionTerms("OC", "EQ1", true, false, Micros.parse("100"), MATURITY, 100));
    in(PnlInput.optionTerms("OP", "EQ1", false, true, Micros.parse("100"), MATURITY, 100));
    in(
        PnlInput.optionTerms(
            "OX", "EQ1", false, true, Micros.parse("80"), MATURITY, 100)); // held by nobody
    in(PnlInput.position("A1", "M1", "OC", "EQ1", 100, 2, Micros.parse("9"), 1));
    in(PnlInput.position("A2", "M1", "OC", "EQ1", 100, -1, Micros.parse("11"), 1));
    in(PnlInput.position("A1", "M1", "OP", "EQ1", 100, 3, Micros.parse("6"), 1));
    in(equity("A1", "EQ1", 100, "95", 1));
    in(tick("EQ1", "100", T0 + 1));
    List<MarkRecord> out = fire(T0 + W);
    assertThat(out).extracting(r -> r.instrumentId).containsExactlyInAnyOrder("OC", "OP", "EQ1");
    double years = PRICER.yearsToExpiry(MATURITY, T0 + W);
    long call = Micros.ofModel(BlackScholes.price(OptionType.CALL, 100, 100, years, RATE, 0.2));
    assertThat(find(out, "OC").markMicros).isEqualTo(call);
    assertThat(find(out, "OC").underlyingPriceMicros).isEqualTo(Micros.parse("100"));
    assertThat(find(out, "OC").underlyingId).isEqualTo("EQ1");
    assertThat(Micros.toModel(call))
        .isCloseTo(10.45, within(0.05)); // about a year: near the 10.4506 reference
    long european = Micros.ofModel(BlackScholes.price(OptionType.PUT, 100, 100, years, RATE, 0.2));
    long put = find(out, "OP").markMicros;
    assertThat(put).isGreaterThan(european); // American put: early exercise is worth something
    assertThat(unrealized("A1"))
        .isEqualTo(
            2 * 100 * (call - Micros.parse("9"))
                + 3 * 100 * (put - Micros.parse("6"))
                + Micros.parse("500"));
    assertThat(unrealized("A2")).isEqualTo(-(100 * call) + 100 * Micros.parse("11"));
  }

  @Test
  void aWindowWritesOneRecordPerEquityCarryingEveryHeldInstrumentAtOnePrice() throws Exception {
    in(PnlInput.volatility("EQ1", 0.2));
    in(PnlInput.optionTerms("OC", "EQ1", true, false, Micros.parse("100"), MATURITY, 100));
    in(PnlInput.optionTerms("OP", "EQ1", false, true, Micros.parse("100"), MATURITY, 100));
    in(PnlInput.optionTerms("OX", "EQ1", false, true, Micros.parse("80"), MATURITY, 100));
    in(PnlInput.position("A1", "M1", "OC", "EQ1", 100, 2, Micros.parse("9"), 1));
    in(PnlInput.position("A2", "M1", "OC", "EQ1", 100, -1, Micros.parse("11"), 1));
    in(PnlInput.position("A1", "M1", "OP", "EQ1", 100, 3, Micros.parse("6"), 1));
    in(equity("A1", "EQ1", 100, "95", 1));
    in(equity("A1", "EQ2", 5, "50", 1));
    in(tick("EQ1", "100", T0 + 1));
    in(tick("EQ1", "101", T0 + 2));
    in(tick("EQ2", "55", T0 + 3));
    List<EquityMarksRecord> out = fireRecords(T0 + W);
    assertThat(out).extracting(r -> r.underlyingId).containsExactlyInAnyOrder("EQ1", "EQ2");
    EquityMarksRecord eq1 =
        out.stream().filter(r -> r.underlyingId.equals("EQ1")).findFirst().get();
    // the options held (OX is held by nobody), each once however many positions hold it
    assertThat(eq1.instrumentIds).containsExactlyInAnyOrder("EQ1", "OC", "OP");
    assertThat(eq1.underlyingPriceMicros).isEqualTo(Micros.parse("101"));
    assertThat(eq1.markOf("EQ1")).isEqualTo(Micros.parse("101"));
    double years = PRICER.yearsToExpiry(MATURITY, T0 + W);
    assertThat(eq1.markOf("OC"))
        .isEqualTo(Micros.ofModel(BlackScholes.price(OptionType.CALL, 101, 100, years, RATE, 0.2)));
    assertThat(eq1.windowEnd).isEqualTo(T0 + W);
    assertThat(eq1.firstTickTs).isEqualTo(T0 + 1);
  }

  @Test
  void aNewlyHeldInstrumentWithoutATickSendsTheWholeEquityAgain() throws Exception {
    in(PnlInput.volatility("EQ1", 0.2));
    in(PnlInput.optionTerms("OC", "EQ1", true, false, Micros.parse("100"), MATURITY, 100));
    in(PnlInput.optionTerms("OP", "EQ1", false, true, Micros.parse("100"), MATURITY, 100));
    in(equity("A1", "EQ1", 10, "95", 1));
    in(PnlInput.position("A1", "M1", "OC", "EQ1", 100, 1, Micros.parse("9"), 1));
    in(tick("EQ1", "100", T0 + 1));
    EquityMarksRecord first = fireRecords(T0 + W).get(0);
    assertThat(first.instrumentIds).containsExactlyInAnyOrder("EQ1", "OC");
    // a fill in the put, no tick: its first mark, and the others with it (the latest record per
    // equity in the compacted topic must value every position)
    in(PnlInput.position("A2", "M1", "OP", "EQ1", 100, 1, Micros.parse("6"), 1));
    EquityMarksRecord second = fireRecords(T0 + 2 * W).get(0);
    assertThat(second.instrumentIds).containsExactlyInAnyOrder("EQ1", "OC", "OP");
    assertThat(second.markOf("OC")).isEqualTo(first.markOf("OC"));
    assertThat(second.underlyingPriceMicros).isEqualTo(Micros.parse("100"));
    assertThat(second.firstTickTs).isZero(); // no tick caused it
    // a fill in an instrument already marked, no tick: nothing moved, nothing written
    in(PnlInput.position("A3", "M1", "OP", "EQ1", 100, 2, Micros.parse("6"), 1));
    assertThat(fireRecords(T0 + 3 * W)).isEmpty();
    // the call's only holder closes it, then a fill in a new option, no tick: the call is gone
    in(PnlInput.optionTerms("OX", "EQ1", true, false, Micros.parse("110"), MATURITY, 100));
    in(PnlInput.position("A1", "M1", "OC", "EQ1", 100, 0, Micros.parse("9"), 2));
    in(PnlInput.position("A4", "M1", "OX", "EQ1", 100, 1, Micros.parse("3"), 1));
    EquityMarksRecord fourth = fireRecords(T0 + 4 * W).get(0);
    assertThat(fourth.instrumentIds).containsExactlyInAnyOrder("EQ1", "OP", "OX");
    assertThat(fourth.markOf("OP")).isEqualTo(second.markOf("OP"));
  }

  @Test
  void expiredOptionsAreWorthTheirIntrinsicValue() throws Exception {
    int yesterday = (int) LocalDate.of(2025, 12, 31).toEpochDay();
    in(PnlInput.volatility("EQ1", 0.3));
    in(PnlInput.optionTerms("OC", "EQ1", true, false, Micros.parse("90"), yesterday, 100));
    in(PnlInput.optionTerms("OP", "EQ1", false, false, Micros.parse("90"), yesterday, 100));
    in(PnlInput.position("A1", "M1", "OC", "EQ1", 100, 1, Micros.parse("12"), 1));
    in(PnlInput.position("A1", "M1", "OP", "EQ1", 100, 1, Micros.parse("1"), 1));
    in(tick("EQ1", "100.123456", T0 + 1));
    List<MarkRecord> out = fire(T0 + W);
    assertThat(find(out, "OC").markMicros).isEqualTo(Micros.parse("10.123456"));
    assertThat(find(out, "OP").markMicros).isZero();
  }

  @Test
  void aChangedPositionIsRevaluedAtTheLastPriceAndAClosedOneLeavesItsAccountAtOnce()
      throws Exception {
    in(equity("A1", "EQ1", 10, "100", 1));
    in(tick("EQ1", "110", T0 + 1));
    fire(T0 + W);
    assertThat(unrealized("A1")).isEqualTo(Micros.parse("100"));
    in(equity("A1", "EQ1", 20, "105", 2));
    in(equity("A1", "EQ1", 5, "1", 1)); // an older version replayed: ignored
    assertThat(fire(T0 + 2 * W)).isEmpty(); // the mark did not move: nothing for pnl.equity-marks
    assertThat(accountTotals.get("A1")[3]).isEqualTo(1);
    assertThat(unrealized("A1")).isEqualTo(Micros.parse("100")); // 20 at 105, worth 110
    assertThat(accountTotals.get("A1"))
        .containsExactly(Micros.parse("2200"), Micros.parse("2100"), 1, 2);
    in(equity("A1", "EQ1", 0, "0", 3));
    assertThat(drainDeltas().get("A1")).containsExactly(0L, 0L, 0L, 3L); // at once, with no window
    in(tick("EQ1", "111", T0 + 2 * W + 1));
    assertThat(fire(T0 + 3 * W)).isEmpty(); // nothing held any more
    assertThat(drainDeltas().get("A1")[3]).isEqualTo(3);
  }

  @Test
  void accountDeltasOnePerAccountPerWindowAddUpToTheAccountsPositions() throws Exception {
    in(equity("A1", "EQ1", 10, "100", 1));
    in(equity("A2", "EQ1", 3, "90", 1));
    in(
        PnlInput.position(
            "A1", "M1", "EQ1", "EQ1", 1, 10, Micros.parse("100"), 1)); // a replay: same version
    in(tick("EQ1", "110", T0 + 1));
    fire(T0 + W);
    assertThat(drainDeltas().get("A1"))
        .containsExactly(Micros.parse("1100"), Micros.parse("1000"), 1, 1);
    assertThat(accountTotals.get("A2"))
        .containsExactly(Micros.parse("330"), Micros.parse("270"), 1, 1);
    in(tick("EQ1", "120", T0 + W + 1));
    fire(T0 + 2 * W);
    in(equity("A1", "EQ1", 20, "105", 2));
    fire(T0 + 3 * W);
    in(equity("A2", "EQ1", 0, "0", 2)); // closed: its whole value leaves A2 at once
    var totals = drainDeltas();
    assertThat(totals.get("A1")).containsExactly(Micros.parse("2400"), Micros.parse("2100"), 1, 3);
    assertThat(totals.get("A2")).containsExactly(0L, 0L, 0L, 3L);
  }

  @Test
  void optionTermsArrivingAfterThePositionStillValueIt() throws Exception {
    in(PnlInput.volatility("EQ1", 0.2));
    in(PnlInput.position("A1", "M1", "OC", "EQ1", 100, 1, Micros.parse("10"), 1));
    in(tick("EQ1", "100", T0 + 1));
    assertThat(fire(T0 + W)).isEmpty(); // unpriceable for now
    in(PnlInput.optionTerms("OC", "EQ1", true, false, Micros.parse("100"), MATURITY, 100));
    assertThat(fire(T0 + 2 * W))
        .singleElement()
        .satisfies(r -> assertThat(r.markMicros).isPositive());
  }

  @Test
  void changedTermsVolatilityAndPriceRevalueEveryHolderWithTheNewOnes() throws Exception {
    in(PnlInput.volatility("EQ1", 0.2));
    in(PnlInput.optionTerms("OC", "EQ1", true, false, Micros.parse("100"), MATURITY, 100));
    in(PnlInput.position("A1", "M1", "OC", "EQ1", 100, 1, Micros.parse("10"), 1));
    in(PnlInput.position("A2", "M1", "OC", "EQ1", 100, 2, Micros.parse("10"), 1));
    in(tick("EQ1", "100", T0 + 1));
    assertThat(fire(T0 + W)).singleElement();
    // the strike moves (a corrected reference row): the positions are revalued with the new terms
    in(PnlInput.optionTerms("OC", "EQ1", true, false, Micros.parse("90"), MATURITY, 100));
    double years = PRICER.yearsToExpiry(MATURITY, T0 + 2 * W);
    long strike90 = Micros.ofModel(BlackScholes.price(OptionType.CALL, 100, 90, years, RATE, 0.2));
    assertThat(fire(T0 + 2 * W))
        .singleElement()
        .satisfies(r -> assertThat(r.markMicros).isEqualTo(strike90));
    drainDeltas();
    assertThat(unrealized("A2")).isEqualTo(2 * 100 * (strike90 - Micros.parse("10")));
    // so does the volatility, with no tick: the last price, the new volatility
    in(PnlInput.volatility("EQ1", 0.4));
    years = PRICER.yearsToExpiry(MATURITY, T0 + 3 * W);
    long vol40 = Micros.ofModel(BlackScholes.price(OptionType.CALL, 100, 90, years, RATE, 0.4));
    assertThat(fire(T0 + 3 * W))
        .singleElement()
        .satisfies(r -> assertThat(r.markMicros).isEqualTo(vol40));
    // and a new price in the same terms
    in(tick("EQ1", "104", T0 + 3 * W + 1));
    years = PRICER.yearsToExpiry(MATURITY, T0 + 4 * W);
    long spot104 = Micros.ofModel(BlackScholes.price(OptionType.CALL, 104, 90, years, RATE, 0.4));
    assertThat(fire(T0 + 4 * W))
        .singleElement()
        .satisfies(r -> assertThat(r.markMicros).isEqualTo(spot104));
    assertThat(unrealized("A1")).isEqualTo(100 * (spot104 - Micros.parse("10")));
  }

  @Test
  void stateSurvivesASnapshotAndRestore() throws Exception {
    in(equity("A1", "EQ1", 10, "100", 1));
    in(tick("EQ1", "101", T0 + 1));
    var snapshot = h.snapshot(1, T0 + 2);
    h.close();
    h = Harnesses.revaluer(new Revaluer(W, PRICER), snapshot);
    h.setProcessingTime(T0 + 2);
    assertThat(fire(T0 + W))
        .singleElement()
        .satisfies(r -> assertThat(r.markMicros).isEqualTo(Micros.parse("101")));
    assertThat(unrealized("A1")).isEqualTo(Micros.parse("10"));
  }

  /** The book of an equity, as the revaluer keeps it. */
  PositionBook book(String underlying) throws Exception {
    var backend = h.getOperator().getKeyedStateBackend();
    backend.setCurrentKey(underlying);
    return backend
        .getPartitionedState(
            VoidNamespace.INSTANCE,
            VoidNamespaceSerializer.INSTANCE,
            new ValueStateDescriptor<>("book", PositionBookSerializer.INSTANCE))
        .value();
  }

  @Test
  void positionsShareTheirIdsWhetherTheyArriveOrAreRestored() throws Exception {
    // every record arrives with its own copies of the ids (as a deserializer makes them)
    in(
        PnlInput.position(
            new String("A1"), new String("M1"), new String("OC"), "EQ1", 100, 2, 9, 1));
    in(
        PnlInput.position(
            new String("A1"), new String("M1"), new String("OP"), "EQ1", 100, 1, 6, 1));
    PositionBook b = book("EQ1");
    PnlInput oc = b.positions.get("A1|OC");
    PnlInput op = b.positions.get("A1|OP");
    assertThat(oc.accountId).isSameAs(op.accountId).isSameAs("A1");
    assertThat(oc.memberId).isSameAs(op.memberId);
    var snapshot = h.snapshot(1, T0 + 1);
    h.close();
    h = Harnesses.revaluer(new Revaluer(W, PRICER), snapshot);
    PositionBook restored = book("EQ1");
    assertThat(restored.positions.get("A1|OC").accountId)
        .isSameAs(restored.positions.get("A1|OP").accountId)
        .isSameAs("A1");
  }

  @Test
  void staggeredWindowsEndAtEachEquitysOwnPhaseAndStayWindowLong() throws Exception {
    h.close();
    h = Harnesses.revaluer(new Revaluer(W, PHASES, 0, PRICER), null);
    h.setProcessingTime(T0);
    // two equities whose phases differ, so their windows end at different instants
    String a = "EQ1";
    String b =
        java.util.stream.IntStream.range(2, 100)
            .mapToObj(i -> "EQ" + i)
            .filter(
                id ->
                    Math.abs(Revaluer.phaseOf(id, W, PHASES) - Revaluer.phaseOf(a, W, PHASES))
                        > 100)
            .findFirst()
            .orElseThrow();
    long phaseA = Revaluer.phaseOf(a, W, PHASES);
    long phaseB = Revaluer.phaseOf(b, W, PHASES);
    assertThat(phaseA).isBetween(0L, W - 1);
    in(equity("A1", a, 10, "100", 1));
    in(equity("A1", b, 10, "100", 1));
    in(tick(a, "101", T0 + 1));
    in(tick(b, "102", T0 + 1));
    in(tick(a, "103", T0 + 2)); // the latest of a's window
    long endA =
        T0 + phaseA + (phaseA > 0 ? 0 : W); // T0 is on the epoch grid: a's first end after it
    long endB = T0 + phaseB + (phaseB > 0 ? 0 : W);
    java.util.TreeMap<Long, String> ends =
        new java.util.TreeMap<>(java.util.Map.of(endA, a, endB, b));
    for (var e : ends.entrySet()) {
      assertThat(fire(e.getKey() - 1)).as("before %s's window end", e.getValue()).isEmpty();
      List<MarkRecord> out = fire(e.getKey());
      assertThat(out)
          .singleElement()
          .satisfies(
              r -> {
                assertThat(r.instrumentId).isEqualTo(e.getValue());
                assertThat(r.windowEnd).isEqualTo(e.getKey());
                assertThat(r.markMicros)
                    .isEqualTo(Micros.parse(r.instrumentId.equals(a) ? "103" : "102"));
              });
    }
    // the next window of a is exactly one window long
    in(tick(a, "104", endA + 5));
    assertThat(fire(endA + W - 1)).isEmpty();
    assertThat(fire(endA + W))
        .singleElement()
        .satisfies(r -> assertThat(r.windowEnd).isEqualTo(endA + W));
  }

  @Test
  void phasesSpreadOverTheWindowAtEvenlySpacedInstants() {
    long[] perPhase = new long[PHASES];
    for (int i = 0; i < 5000; i++) {
      long phase = Revaluer.phaseOf("EQ" + i, W, PHASES);
      assertThat(phase % (W / PHASES)).as("on the phase grid").isZero();
      perPhase[(int) (phase / (W / PHASES))]++;
    }
    for (long n : perPhase) {
      assertThat(n).isBetween(400L, 600L); // about 500 equities at each of the ten instants
    }
  }

  @Test
  void onePhaseEndsEveryEquitysWindowsOnTheEpochGrid() {
    for (int i = 0; i < 100; i++) {
      assertThat(Revaluer.phaseOf("EQ" + i, W, 1)).isZero();
    }
  }

  @Test
  void phasesOutsideOneToTheWindowAreRefused() {
    for (int phases : new int[] {0, -1, (int) W + 1}) {
      org.assertj.core.api.Assertions.assertThatThrownBy(() -> new Revaluer(W, phases, 0, PRICER))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("window.phases");
    }
  }

  static MarkRecord find(List<MarkRecord> out, String instrument) {
    return out.stream().filter(r -> r.instrumentId.equals(instrument)).collect(onlyOne());
  }

  static <T> java.util.stream.Collector<T, ?, T> onlyOne() {
    return java.util.stream.Collectors.collectingAndThen(
        java.util.stream.Collectors.toList(),
        list -> {
          assertThat(list).hasSize(1);
          return list.get(0);
        });
  }
}
