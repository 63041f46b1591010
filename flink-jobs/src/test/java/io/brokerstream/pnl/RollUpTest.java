package io.brokerstream.pnl;

import static org.assertj.core.api.Assertions.assertThat;

import io.brokerstream.money.Micros;
import java.util.List;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.Test;

class RollUpTest {
  static PnlRecord position(String account, String instrument, long qty, String mv, String cost, long windowEnd) {
    PnlRecord r = new PnlRecord();
    r.scope = PnlRecord.Scope.POSITION;
    r.memberId = "M1";
    r.accountId = account;
    r.instrumentId = instrument;
    r.underlyingId = instrument;
    r.quantity = qty;
    r.marketValueMicros = Micros.parse(mv);
    r.costBasisMicros = Micros.parse(cost);
    r.unrealizedMicros = r.marketValueMicros - r.costBasisMicros;
    r.positions = qty == 0 ? 0 : 1;
    r.windowEnd = windowEnd;
    return r;
  }

  static KeyedOneInputStreamOperatorTestHarness<String, PnlRecord, PnlRecord> harness(PnlRecord.Scope scope)
      throws Exception {
    var h = new KeyedOneInputStreamOperatorTestHarness<>(new KeyedProcessOperator<>(new RollUp(scope, 100)),
        (PnlRecord r) -> scope == PnlRecord.Scope.ACCOUNT ? r.accountId : r.memberId, Types.STRING);
    h.open();
    h.setProcessingTime(0);
    return h;
  }

  @Test
  void anAccountIsTheSumOfTheLatestValueOfEachOfItsPositionsEmittedOncePerInterval() throws Exception {
    try (var h = harness(PnlRecord.Scope.ACCOUNT)) {
      h.processElement(position("A1", "EQ1", 10, "1010", "1000", 1000), 0);
      h.processElement(position("A1", "EQ2", -5, "-240.5", "-250", 1000), 0);
      h.processElement(position("A1", "EQ1", 10, "1020.000001", "1000", 2000), 0); // replaces EQ1's first value
      assertThat(h.extractOutputValues()).isEmpty();
      h.setProcessingTime(100);
      List<PnlRecord> out = h.extractOutputValues();
      assertThat(out).singleElement().satisfies(r -> {
        assertThat(r.scope).isEqualTo(PnlRecord.Scope.ACCOUNT);
        assertThat(r.accountId).isEqualTo("A1");
        assertThat(r.marketValueMicros).isEqualTo(Micros.parse("779.500001"));
        assertThat(r.costBasisMicros).isEqualTo(Micros.parse("750"));
        assertThat(r.unrealizedMicros).isEqualTo(Micros.parse("29.500001"));
        assertThat(r.positions).isEqualTo(2);
        assertThat(r.windowEnd).isEqualTo(2000);
      });
      h.getOutput().clear();
      h.processElement(position("A1", "EQ2", 0, "0", "0", 2500), 0); // closed: drops out
      h.setProcessingTime(200);
      assertThat(h.extractOutputValues()).singleElement().satisfies(r -> {
        assertThat(r.positions).isEqualTo(1);
        assertThat(r.unrealizedMicros).isEqualTo(Micros.parse("20.000001"));
      });
    }
  }

  @Test
  void aMemberIsTheSumOfItsAccounts() throws Exception {
    try (var h = harness(PnlRecord.Scope.MEMBER)) {
      PnlRecord a1 = position("A1", null, 0, "100", "90", 1000);
      a1.scope = PnlRecord.Scope.ACCOUNT;
      a1.positions = 3;
      PnlRecord a2 = position("A2", null, 0, "50", "70", 1000);
      a2.scope = PnlRecord.Scope.ACCOUNT;
      a2.positions = 1;
      h.processElement(a1, 0);
      h.processElement(a2, 0);
      h.setProcessingTime(100);
      assertThat(h.extractOutputValues()).singleElement().satisfies(r -> {
        assertThat(r.scope).isEqualTo(PnlRecord.Scope.MEMBER);
        assertThat(r.memberId).isEqualTo("M1");
        assertThat(r.accountId).isNull();
        assertThat(r.unrealizedMicros).isEqualTo(Micros.parse("-10"));
        assertThat(r.positions).isEqualTo(4);
      });
    }
  }
}
