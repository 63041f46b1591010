package io.brokerstream.pnl;

import static org.assertj.core.api.Assertions.assertThat;

import io.brokerstream.money.Micros;
import java.util.List;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.Test;

class RollUpTest {
  static PnlDelta delta(
      String member,
      String account,
      String mv,
      String cost,
      int positions,
      long windowEnd,
      long firstTick) {
    PnlDelta d = PnlDelta.of(member, account);
    d.add(Micros.parse(mv), 0, Micros.parse(cost), 0, positions, 0);
    d.cover(windowEnd, firstTick);
    return d;
  }

  static KeyedOneInputStreamOperatorTestHarness<String, PnlDelta, PnlRecord> harness(
      PnlRecord.Scope scope) throws Exception {
    var h = Harnesses.rollUp(new RollUp(scope, 100), scope);
    h.setProcessingTime(0);
    return h;
  }

  static List<PnlDelta> upward(
      KeyedOneInputStreamOperatorTestHarness<String, PnlDelta, PnlRecord> h) {
    return Harnesses.drain(h, RollUp.MEMBER_DELTAS);
  }

  @Test
  void anAccountAddsUpItsDeltasAndEmitsOncePerIntervalPassingItsOwnMoveUp() throws Exception {
    try (var h = harness(PnlRecord.Scope.ACCOUNT)) {
      h.processElement(delta("M1", "A1", "1010", "1000", 1, 1000, 900), 0);
      h.processElement(delta("M1", "A1", "-240.5", "-250", 1, 1000, 950), 0);
      h.processElement(delta("M1", "A1", "10.000001", "0", 0, 2000, 1500), 0); // EQ1 moved up
      assertThat(h.extractOutputValues()).isEmpty();
      h.setProcessingTime(100);
      assertThat(h.extractOutputValues())
          .singleElement()
          .satisfies(
              r -> {
                assertThat(r.scope).isEqualTo(PnlRecord.Scope.ACCOUNT);
                assertThat(r.accountId).isEqualTo("A1");
                assertThat(r.memberId).isEqualTo("M1");
                assertThat(r.marketValueMicros).isEqualTo(Micros.parse("779.500001"));
                assertThat(r.costBasisMicros).isEqualTo(Micros.parse("750"));
                assertThat(r.unrealizedMicros).isEqualTo(Micros.parse("29.500001"));
                assertThat(r.positions).isEqualTo(2);
                assertThat(r.windowEnd).isEqualTo(2000);
                assertThat(r.firstTickTs).isEqualTo(900);
                assertThat(r.computedTs).isEqualTo(100);
              });
      assertThat(upward(h))
          .singleElement()
          .satisfies(
              d -> {
                assertThat(d.memberId).isEqualTo("M1");
                assertThat(d.unrealizedMicros).isEqualTo(Micros.parse("29.500001"));
                assertThat(d.positions).isEqualTo(2);
              });
      h.getOutput().clear();
      // EQ2 closed: its -240.5 / -250 leave the account
      h.processElement(delta("M1", "A1", "240.5", "250", -1, 2500, 0), 0);
      h.setProcessingTime(200);
      assertThat(h.extractOutputValues())
          .singleElement()
          .satisfies(
              r -> {
                assertThat(r.positions).isEqualTo(1);
                assertThat(r.unrealizedMicros).isEqualTo(Micros.parse("20.000001"));
                assertThat(r.firstTickTs)
                    .isZero(); // the ticks before the last emission are reported
              });
      // the member is told the move since the last emission, not the total again
      assertThat(upward(h))
          .singleElement()
          .satisfies(
              d -> {
                assertThat(d.unrealizedMicros).isEqualTo(Micros.parse("-9.5"));
                assertThat(d.marketValueMicros).isEqualTo(Micros.parse("240.5"));
                assertThat(d.positions).isEqualTo(-1);
              });
    }
  }

  @Test
  void aMemberIsTheSumOfItsAccountsMoves() throws Exception {
    try (var h = harness(PnlRecord.Scope.MEMBER)) {
      h.processElement(delta("M1", null, "100", "90", 3, 1000, 0), 0);
      h.processElement(delta("M1", null, "50", "70", 1, 1000, 0), 0);
      h.processElement(delta("M1", null, "-50", "-70", -1, 1000, 0), 0);
      h.setProcessingTime(100);
      assertThat(h.extractOutputValues())
          .singleElement()
          .satisfies(
              r -> {
                assertThat(r.scope).isEqualTo(PnlRecord.Scope.MEMBER);
                assertThat(r.memberId).isEqualTo("M1");
                assertThat(r.accountId).isNull();
                assertThat(r.unrealizedMicros).isEqualTo(Micros.parse("10"));
                assertThat(r.positions).isEqualTo(3);
              });
      assertThat(upward(h)).isEmpty(); // nothing above a member
    }
  }

  /**
   * Margin counts each losing position's loss: a gain in one position never offsets a loss in
   * another, in an account or across its member's accounts.
   */
  @Test
  void lossesAreSummedPerPositionWithNoGainNettedAgainstThem() throws Exception {
    try (var account = harness(PnlRecord.Scope.ACCOUNT);
        var member = harness(PnlRecord.Scope.MEMBER)) {
      account.processElement(delta("M1", "A1", "1300", "1000", 1, 1000, 0), 0); // +300
      account.processElement(delta("M1", "A1", "800", "1000", 1, 1000, 0), 0); // -200
      account.setProcessingTime(100);
      PnlRecord a1 = account.extractOutputValues().get(0);
      assertThat(a1.unrealizedMicros).isEqualTo(Micros.parse("100"));
      assertThat(a1.unrealizedLossMicros).isEqualTo(Micros.parse("-200"));
      PnlDelta up = upward(account).get(0);
      assertThat(up.unrealizedLossMicros).isEqualTo(Micros.parse("-200"));

      // the losing position recovers to +50, the winner falls to -10: still one loss, another
      PnlDelta recover = PnlDelta.of("M1", "A1");
      recover.add(
          Micros.parse("1050"),
          Micros.parse("800"),
          Micros.parse("1000"),
          Micros.parse("1000"),
          0,
          0);
      recover.add(
          Micros.parse("990"),
          Micros.parse("1300"),
          Micros.parse("1000"),
          Micros.parse("1000"),
          0,
          0);
      account.processElement(recover, 0);
      account.setProcessingTime(200);
      PnlRecord again = account.extractOutputValues().get(1);
      assertThat(again.unrealizedLossMicros).isEqualTo(Micros.parse("-10"));
      PnlDelta move = upward(account).get(0);
      assertThat(move.unrealizedLossMicros).isEqualTo(Micros.parse("190"));

      member.processElement(up, 0);
      member.processElement(move, 0);
      PnlDelta other = PnlDelta.of("M1", "A2");
      other.add(Micros.parse("500"), 0, Micros.parse("400"), 0, 1, 0); // a gain elsewhere
      member.processElement(other, 0);
      member.setProcessingTime(100);
      PnlRecord m1 = member.extractOutputValues().get(0);
      assertThat(m1.unrealizedLossMicros).isEqualTo(Micros.parse("-10"));
      assertThat(m1.unrealizedMicros).isEqualTo(Micros.parse("140"));
    }
  }

  @Test
  void aMemberHoldingPositionsIsSentAgainEveryRefreshThoughNothingMoved() throws Exception {
    try (var h =
        Harnesses.rollUp(new RollUp(PnlRecord.Scope.MEMBER, 100, 5000), PnlRecord.Scope.MEMBER)) {
      h.setProcessingTime(0);
      h.processElement(delta("M1", null, "800", "1000", 2, 1000, 900), 0);
      h.setProcessingTime(100);
      assertThat(h.extractOutputValues()).hasSize(1);
      h.setProcessingTime(5099);
      assertThat(h.extractOutputValues()).hasSize(1);
      h.setProcessingTime(5100);
      List<PnlRecord> out = h.extractOutputValues();
      assertThat(out).hasSize(2);
      assertThat(out.get(1).computedTs).isEqualTo(5100);
      assertThat(out.get(1).unrealizedLossMicros).isEqualTo(Micros.parse("-200"));
      assertThat(out.get(1).firstTickTs).as("no tick caused it").isZero();
      h.setProcessingTime(10_100);
      assertThat(h.extractOutputValues()).hasSize(3);

      // everything closed: no more refreshes
      h.processElement(delta("M1", null, "-800", "-1000", -2, 11_000, 0), 0);
      h.setProcessingTime(10_200);
      assertThat(h.extractOutputValues()).hasSize(4);
      h.setProcessingTime(60_000);
      assertThat(h.extractOutputValues()).hasSize(4);
      assertThat(h.numProcessingTimeTimers()).isZero();
    }
  }

  @Test
  void aDeltaThatMovesNothingEmitsNothing() throws Exception {
    try (var h = harness(PnlRecord.Scope.ACCOUNT)) {
      h.processElement(delta("M1", "A1", "0", "0", 0, 1000, 900), 0);
      h.setProcessingTime(5000);
      assertThat(h.extractOutputValues()).isEmpty();
      assertThat(upward(h)).isEmpty();
      assertThat(h.numProcessingTimeTimers()).isZero();
    }
  }
}
