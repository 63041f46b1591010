package io.brokerstream.streams.topology;

import static org.assertj.core.api.Assertions.assertThat;

import io.brokerstream.avro.Order;
import io.brokerstream.avro.OrderResult;
import io.brokerstream.avro.OrderStatus;
import io.brokerstream.avro.Side;
import io.brokerstream.avro.TimeInForce;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * An order id is unique per member: a retry books nothing; another member's same id is its own
 * order.
 */
class OrderIdempotencyTest {
  private final FlowFixture flow =
      new FlowFixture()
          .standard()
          .member("M2", "ACTIVE", "1000000")
          .account("B1", "M2", "ACTIVE", "500000", false);

  @AfterEach
  void close() {
    flow.close();
  }

  private static Order order(String id, String account, long quantity) {
    return Order.newBuilder()
        .setOrderId(id)
        .setAccountId(account)
        .setInstrumentId("EQ1")
        .setSide(Side.BUY)
        .setQuantity(quantity)
        .setLimitPrice(null)
        .setShortSale(false)
        .setClientTs(FlowFixture.NOW)
        .setTraceId(null)
        .build();
  }

  @Test
  void aRetryOfTheSameOrderBooksNothingAndEmitsNothing() {
    OrderResult first = flow.send("M1", order("dup-1", "A1", 10));
    assertThat(first.getStatus()).isEqualTo(OrderStatus.ACCEPTED);
    // the same record again (a producer that wrote it twice), and a retry with other values
    flow.orders.pipeInput("M1", order("dup-1", "A1", 10), FlowFixture.NOW);
    flow.orders.pipeInput("M1", order("dup-1", "A1", 999), FlowFixture.NOW.plusSeconds(5));
    assertThat(flow.results.isEmpty()).isTrue();
    assertThat(flow.positions.readValuesToList()).hasSize(1);
    assertThat(flow.position("A1", "EQ1").quantity()).isEqualTo(10);
    assertThat(flow.cash("A1")).isEqualTo(-FlowFixture.micros("1000"));
  }

  @Test
  void aRejectedOrderIdIsUsedToo() {
    OrderResult first = flow.send("M1", order("dup-2", "A1", 0));
    assertThat(first.getStatus()).isEqualTo(OrderStatus.REJECTED);
    flow.orders.pipeInput("M1", order("dup-2", "A1", 5), FlowFixture.NOW);
    assertThat(flow.results.isEmpty()).isTrue();
    assertThat(flow.position("A1", "EQ1")).isNull();
  }

  @Test
  void theSameIdFromAnotherMemberIsAnotherOrderAndLeavesTheFirstAlone() {
    OrderResult mine = flow.send("M1", order("same-id", "A1", 10));
    var theirs = flow.results;
    flow.orders.pipeInput("M2", order("same-id", "B1", 3), FlowFixture.NOW);
    var record = theirs.readRecord();
    assertThat(record.key()).isEqualTo("M2|same-id");
    assertThat(record.value().getMemberId()).isEqualTo("M2");
    assertThat(record.value().getStatus()).isEqualTo(OrderStatus.ACCEPTED);
    var store = flow.driver.<String, OrderResult>getKeyValueStore(StoreNames.ORDER_RESULTS);
    assertThat(store.get("M1|same-id")).isEqualTo(mine);
    assertThat(store.get("M2|same-id").getQuantity()).isEqualTo(3);
    assertThat(flow.position("A1", "EQ1").quantity()).isEqualTo(10);
    assertThat(flow.position("B1", "EQ1").quantity()).isEqualTo(3);
  }

  @Test
  void anIdStaysTakenForAsLongAsItsResultIsKept() {
    flow.send("M1", order("old-1", "A1", 1));
    flow.driver.advanceWallClockTime(Duration.ofDays(3));
    flow.orders.pipeInput("M1", order("old-1", "A1", 1), FlowFixture.NOW.plus(Duration.ofDays(3)));
    assertThat(flow.results.isEmpty()).isTrue();
    assertThat(flow.position("A1", "EQ1").quantity()).isEqualTo(1);
  }

  @Test
  void aWorkingOrdersIdIsTakenWhileItWorksThoughItHasNoResultYet() {
    Order resting = flow.order("A1", "EQ1", Side.BUY, 2, "90");
    resting.setOrderId("rest-1");
    resting.setTimeInForce(TimeInForce.GTC);
    flow.orders.pipeInput("M1", resting, FlowFixture.NOW);
    assertThat(flow.results.isEmpty()).isTrue(); // it rests: an OPEN event, no result
    flow.orders.pipeInput("M1", order("rest-1", "A1", 5), FlowFixture.NOW.plusSeconds(1));
    assertThat(flow.results.isEmpty()).isTrue();
    assertThat(flow.position("A1", "EQ1")).isNull();
  }
}
