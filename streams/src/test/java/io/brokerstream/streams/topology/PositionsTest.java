package io.brokerstream.streams.topology;

import static org.assertj.core.api.Assertions.assertThat;

import io.brokerstream.avro.OrderStatus;
import io.brokerstream.avro.Position;
import io.brokerstream.rules.PositionState;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Open, add, reduce, close, flip; realized P&L, cash and committed value, exact to the micro. */
class PositionsTest {
  private final FlowFixture flow = new FlowFixture().standard();

  @AfterEach
  void close() {
    flow.close();
  }

  private static long m(String text) {
    return FlowFixture.micros(text);
  }

  @Test
  void openAddReduceCloseLong() {
    flow.buy("A1", "EQ1", 10); // open 10 @ 100
    flow.price("EQ1", "103.33");
    flow.buy("A1", "EQ1", 20); // add 20 @ 103.33 -> avg (1000 + 2066.6) / 30
    assertThat(flow.position("A1", "EQ1"))
        .isEqualTo(PositionState.atAverage(30, m("102.22"), 0, 2, 1));
    assertThat(flow.cash("A1")).isEqualTo(-m("3066.6"));

    flow.price("EQ1", "110");
    var reduce = flow.sell("A1", "EQ1", 12); // realizes 12 x (110 - 102.22)
    assertThat(reduce.getRealizedPnl()).isEqualTo(FlowFixture.money("93.36"));
    assertThat(reduce.getClosedQuantity()).isEqualTo(12);
    assertThat(reduce.getClosedAvgCost()).isEqualTo(FlowFixture.money("102.22"));
    assertThat(flow.position("A1", "EQ1"))
        .isEqualTo(PositionState.atAverage(18, m("102.22"), m("93.36"), 3, 1));

    flow.price("EQ1", "90");
    var close = flow.sell("A1", "EQ1", 18); // realizes 18 x (90 - 102.22)
    assertThat(close.getRealizedPnl()).isEqualTo(FlowFixture.money("-219.96"));
    assertThat(close.getClosedQuantity()).isEqualTo(18);
    assertThat(flow.position("A1", "EQ1"))
        .isEqualTo(PositionState.atAverage(0, 0, m("-126.6"), 4, 1));
    assertThat(flow.risk("M1").committed()).isZero();
    assertThat(flow.risk("M1").realized()).isEqualTo(m("-126.6"));
    // cash: -3066.6 + 1320 + 1620
    assertThat(flow.cash("A1")).isEqualTo(m("-126.6"));
  }

  @Test
  void averageCostRoundsHalfEvenToTheMicro() {
    flow.price("EQ1", "0.000001");
    flow.buy("A1", "EQ1", 1);
    flow.price("EQ1", "0.000002");
    flow.buy("A1", "EQ1", 1); // (1 + 2) / 2 = 1.5 micro -> 2
    assertThat(flow.position("A1", "EQ1").avgCost()).isEqualTo(2);
    flow.price("EQ1", "0.000004");
    flow.buy("A1", "EQ1", 2); // (2*2 + 4*2) / 4 = 3 exactly
    assertThat(flow.position("A1", "EQ1").avgCost()).isEqualTo(3);
  }

  @Test
  void flipLongToShortAndCoverTheShort() {
    flow.buy("A1", "EQ1", 10); // long 10 @ 100
    flow.price("EQ1", "105");
    var flip = flow.sell("A1", "EQ1", 25); // closes 10 (+50), opens short 15 @ 105
    assertThat(flip.getRealizedPnl()).isEqualTo(FlowFixture.money("50"));
    // a flip closes only what was held; the rest opens the other side
    assertThat(flip.getClosedQuantity()).isEqualTo(10);
    assertThat(flip.getClosedAvgCost()).isEqualTo(FlowFixture.money("100"));
    assertThat(flow.position("A1", "EQ1"))
        .isEqualTo(PositionState.atAverage(-15, m("105"), m("50"), 2, 1));
    assertThat(flow.risk("M1").committed()).isEqualTo(m("1575"));

    flow.price("EQ1", "95");
    var cover = flow.buy("A1", "EQ1", 5); // short gains 5 x (105 - 95)
    assertThat(cover.getRealizedPnl()).isEqualTo(FlowFixture.money("50"));
    assertThat(cover.getClosedQuantity()).isEqualTo(5);
    assertThat(cover.getClosedAvgCost()).isEqualTo(FlowFixture.money("105"));
    assertThat(flow.position("A1", "EQ1"))
        .isEqualTo(PositionState.atAverage(-10, m("105"), m("100"), 3, 1));
    var flipBack = flow.buy("A1", "EQ1", 30); // closes 10 (+100), opens long 20 @ 95
    assertThat(flipBack.getRealizedPnl()).isEqualTo(FlowFixture.money("100"));
    assertThat(flipBack.getClosedQuantity()).isEqualTo(10);
    assertThat(flow.position("A1", "EQ1"))
        .isEqualTo(PositionState.atAverage(20, m("95"), m("200"), 4, 1));
    assertThat(flow.risk("M1").committed()).isEqualTo(m("1900"));
  }

  @Test
  void emitsPositionsAndResultsCarryingRealizedPnl() {
    var open = flow.buy("A1", "EQ1", 10);
    Position opened = flow.positions.readValue();
    assertThat(opened.getQuantity()).isEqualTo(10);
    assertThat(opened.getAvgCost()).isEqualTo(FlowFixture.money("100"));
    assertThat(opened.getUnderlyingId()).isEqualTo("EQ1");
    assertThat(opened.getVersion()).isEqualTo(1);
    // the positions topic is the store's changelog: the record readers get is the stored one,
    // with the cash the fills moved
    assertThat(opened.getCash()).isEqualTo(FlowFixture.money("-1000"));
    assertThat(opened.getMemberId()).isEqualTo("M1");
    // opening realizes nothing: the result says so and closes nothing
    assertThat(open.getRealizedPnl()).isEqualTo(FlowFixture.money("0"));
    assertThat(open.getClosedQuantity()).isZero();
    assertThat(open.getClosedAvgCost()).isNull();

    flow.price("EQ1", "101");
    var reduce = flow.sell("A1", "EQ1", 4);
    var record = flow.positions.readRecord();
    assertThat(record.key()).isEqualTo("A1|EQ1");
    assertThat(record.value().getQuantity()).isEqualTo(6);
    assertThat(record.value().getRealizedPnl()).isEqualTo(FlowFixture.money("4"));
    assertThat(record.value().getCash()).isEqualTo(FlowFixture.money("-596"));
    // the result is the fill's realized P&L record: no record of its own
    assertThat(reduce.getClosedQuantity()).isEqualTo(4);
    assertThat(reduce.getClosedAvgCost()).isEqualTo(FlowFixture.money("100"));
    assertThat(reduce.getRealizedPnl()).isEqualTo(FlowFixture.money("4"));
    assertThat(flow.results.isEmpty()).isTrue(); // one record per order, whatever it realized
  }

  @Test
  void rejectedOrdersChangeNothing() {
    flow.buy("A1", "EQ1", 10);
    flow.positions.readValuesToList();
    assertThat(flow.buy("A1", "NOPE", 5).getStatus()).isEqualTo(OrderStatus.REJECTED);
    assertThat(flow.sell("A2", "EQ1", 1).getStatus()).isEqualTo(OrderStatus.REJECTED);
    assertThat(flow.positions.isEmpty()).isTrue();
    assertThat(flow.position("A1", "EQ1").quantity()).isEqualTo(10);
    assertThat(flow.position("A2", "EQ1")).isNull();
    assertThat(flow.cash("A2")).isZero();
  }

  @Test
  void optionPositionsUseTheMultiplier() {
    flow.option("OPC", "EQ1", "CALL", "EUROPEAN", "100", java.time.LocalDate.of(2027, 11, 19));
    var r = flow.buy("A1", "OPC", 2);
    assertThat(r.getStatus()).isEqualTo(OrderStatus.ACCEPTED);
    long fill = io.brokerstream.money.Micros.of(r.getFillPrice());
    assertThat(flow.cash("A1")).isEqualTo(-fill * 2 * 100);
    assertThat(flow.risk("M1").committed()).isEqualTo(fill * 2 * 100);
    assertThat(flow.positions.readValue().getMultiplier()).isEqualTo(100);
  }

  @Test
  void anAccountsCashIsWhatItsPositionsFillsMovedAndNoOtherAccounts() {
    flow.equity("EQ2", "ACTIVE").volatility("EQ2", 0.2).price("EQ2", "50");
    flow.buy("A1", "EQ1", 10); // -1000
    flow.buy("A1", "EQ2", 4); // -200
    flow.buy("A2", "EQ1", 1); // -100, another account of the same member
    flow.price("EQ1", "101.5");
    flow.sell("A1", "EQ1", 3); // +304.5
    assertThat(flow.cash("A1")).isEqualTo(m("-895.5"));
    assertThat(flow.cash("A2")).isEqualTo(m("-100"));
  }
}
