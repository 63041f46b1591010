package io.brokerstream.streams.topology;

import static org.assertj.core.api.Assertions.assertThat;

import io.brokerstream.avro.Order;
import io.brokerstream.avro.OrderEvent;
import io.brokerstream.avro.OrderEventType;
import io.brokerstream.avro.OrderResult;
import io.brokerstream.avro.OrderStatus;
import io.brokerstream.avro.OrderTrigger;
import io.brokerstream.avro.Side;
import io.brokerstream.avro.TimeInForce;
import io.brokerstream.rules.PositionState;
import io.brokerstream.streams.Topics;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The book sends each trigger twice, in its transaction and at once outside it: the member task
 * decides the order on whichever copy comes first and drops the other, so an order fills once
 * either way.
 */
class FastTriggersTest {
  private record Sent(String member, OrderTrigger trigger, long timestamp) {}

  private final List<Sent> sent = new ArrayList<>();
  private final FlowFixture flow =
      new FlowFixture(Map.of(), (member, trigger, ts) -> sent.add(new Sent(member, trigger, ts)))
          .standard();
  private long sequence = 1;

  @AfterEach
  void close() {
    flow.close();
  }

  private Order gtcBuy(long quantity, String limit) {
    Order o = flow.order("A1", "EQ1", Side.BUY, quantity, limit);
    o.setTimeInForce(TimeInForce.GTC);
    flow.orders.pipeInput("M1", o, FlowFixture.NOW.plusMillis(++sequence));
    assertThat(flow.results.isEmpty()).isTrue();
    return o;
  }

  private void tick(String price) {
    flow.ticks.pipeInput(
        "EQ1", FlowFixture.tick("EQ1", price, ++sequence), FlowFixture.NOW.plusMillis(sequence));
  }

  private long reserved() {
    Long r = flow.driver.<String, Long>getKeyValueStore(StoreNames.MEMBER_RESERVED).get("M1");
    return r == null ? 0 : r;
  }

  private List<OrderEventType> events() {
    return flow.events.readValuesToList().stream().map(OrderEvent::getEvent).toList();
  }

  @Test
  void everyTriggerIsSentAlsoOutsideTheTransactionTheSameInTheSameOrderWithTheTicksTime() {
    Order second = gtcBuy(1, "97");
    Order first = gtcBuy(1, "95");
    gtcBuy(1, "80");
    tick("94");
    List<OrderTrigger> transactional = flow.triggers.readValuesToList();
    assertThat(transactional)
        .extracting(OrderTrigger::getOrderId)
        .containsExactly(second.getOrderId(), first.getOrderId());
    assertThat(sent).extracting(Sent::trigger).containsExactlyElementsOf(transactional);
    assertThat(sent).extracting(Sent::member).containsOnly("M1");
    assertThat(sent)
        .extracting(Sent::timestamp)
        .containsOnly(FlowFixture.NOW.plusMillis(sequence).toEpochMilli());
  }

  @Test
  void theFastCopyArrivingFirstDecidesTheOrderAndTheTransactionalOneIsDropped() {
    Order buy = gtcBuy(10, "95");
    flow.events.readValuesToList();
    OrderTrigger trigger =
        OrderTrigger.newBuilder()
            .setOrderId(buy.getOrderId())
            .setInstrumentId("EQ1")
            .setPrice(FlowFixture.money("94.5"))
            .setTickSequence(7)
            .setTriggeredTs(FlowFixture.NOW.plusSeconds(1))
            .setPlacedTs(FlowFixture.NOW.plusMillis(2))
            .build();
    flow.fastTriggersIn.pipeInput("M1", trigger);
    OrderResult fill = flow.results.readValue();
    assertThat(fill.getStatus()).isEqualTo(OrderStatus.ACCEPTED);
    assertThat(fill.getFillPrice()).isEqualTo(FlowFixture.money("94.5"));
    assertThat(events()).containsExactly(OrderEventType.TRIGGERED);

    flow.triggersIn.pipeInput("M1", trigger); // the book's commit makes its copy visible later
    assertThat(flow.results.isEmpty()).isTrue();
    assertThat(flow.events.isEmpty()).isTrue();
    assertThat(flow.position("A1", "EQ1"))
        .isEqualTo(PositionState.atAverage(10, FlowFixture.micros("94.5"), 0, 1, 1));
    assertThat(reserved()).isZero();
  }

  @Test
  void theFastCopyArrivingSecondOrAgainAfterABookReplayChangesNothing() {
    Order buy = gtcBuy(10, "95");
    tick("95"); // the transactional copy, looped back by the driver, fills it
    assertThat(flow.results.readValue().getStatus()).isEqualTo(OrderStatus.ACCEPTED);
    flow.events.readValuesToList();
    assertThat(sent).hasSize(1);
    for (int copy = 0; copy < 2; copy++) {
      flow.fastTriggersIn.pipeInput(sent.get(0).member(), sent.get(0).trigger());
    }
    assertThat(flow.results.isEmpty()).isTrue();
    assertThat(flow.events.isEmpty()).isTrue();
    assertThat(flow.position("A1", "EQ1"))
        .isEqualTo(PositionState.atAverage(10, FlowFixture.micros("95"), 0, 1, 1));
    assertThat(
            flow.driver
                .getKeyValueStore(StoreNames.OPEN_ORDERS)
                .get(Topics.resultKey("M1", buy.getOrderId())))
        .isNull();
  }

  @Test
  void aFastCopyOfATriggerForAnOrderCancelledMeanwhileBooksNothing() {
    Order buy = gtcBuy(10, "95");
    flow.commands.pipeInput(
        "M1",
        io.brokerstream.avro.OrderCommand.newBuilder()
            .setOrderId(buy.getOrderId())
            .setAction(io.brokerstream.avro.OrderAction.CANCEL)
            .setClientTs(FlowFixture.NOW)
            .build());
    assertThat(flow.results.readValue().getStatus()).isEqualTo(OrderStatus.CANCELLED);
    flow.fastTriggersIn.pipeInput(
        "M1",
        OrderTrigger.newBuilder()
            .setOrderId(buy.getOrderId())
            .setInstrumentId("EQ1")
            .setPrice(FlowFixture.money("94"))
            .setTickSequence(9)
            .setTriggeredTs(FlowFixture.NOW)
            .build());
    assertThat(flow.results.isEmpty()).isTrue();
    assertThat(flow.position("A1", "EQ1")).isNull();
    assertThat(reserved()).isZero();
  }
}
