package io.brokerstream.streams.topology;

import static org.assertj.core.api.Assertions.assertThat;

import io.brokerstream.avro.Order;
import io.brokerstream.avro.OrderAction;
import io.brokerstream.avro.OrderCommand;
import io.brokerstream.avro.OrderEvent;
import io.brokerstream.avro.OrderEventType;
import io.brokerstream.avro.OrderResult;
import io.brokerstream.avro.OrderStatus;
import io.brokerstream.avro.OrderTrigger;
import io.brokerstream.avro.ReasonCode;
import io.brokerstream.avro.Side;
import io.brokerstream.avro.TimeInForce;
import io.brokerstream.rules.PositionState;
import io.brokerstream.streams.Topics;
import io.brokerstream.streams.state.OpenOrder;
import java.time.LocalDate;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * GTC limit orders: they rest when the price does not meet them, fill when a tick crosses, hold buying
 * power meanwhile, and a cancel racing a fill ends as exactly one of the two.
 */
class WorkingOrdersTest {
  private final FlowFixture flow = new FlowFixture().standard();
  private long sequence = 1;

  @AfterEach
  void close() {
    flow.close();
  }

  private static long m(String text) {
    return FlowFixture.micros(text);
  }

  private Order gtc(String account, String instrument, Side side, long quantity, String limit) {
    Order o = flow.order(account, instrument, side, quantity, limit);
    o.setTimeInForce(TimeInForce.GTC);
    return o;
  }

  /** Sends an order and returns its result, or null when it produced none (it works). */
  private OrderResult place(Order order) {
    flow.orders.pipeInput("M1", order, FlowFixture.NOW.plusMillis(sequence));
    return flow.results.isEmpty() ? null : flow.results.readValue();
  }

  private void tick(String equity, String price) {
    flow.ticks.pipeInput(equity, FlowFixture.tick(equity, price, ++sequence));
  }

  private void cancel(String member, String orderId) {
    flow.commands.pipeInput(member, OrderCommand.newBuilder().setOrderId(orderId).setAction(OrderAction.CANCEL)
        .setClientTs(FlowFixture.NOW).build());
  }

  private OpenOrder working(String orderId) {
    return flow.driver.<String, OpenOrder>getKeyValueStore(StoreNames.OPEN_ORDERS).get(Topics.resultKey("M1", orderId));
  }

  private long reserved() {
    Long r = flow.driver.<String, Long>getKeyValueStore(StoreNames.MEMBER_RESERVED).get("M1");
    return r == null ? 0 : r;
  }

  private long bookSize() {
    long n = 0;
    try (var it = flow.driver.getKeyValueStore(StoreNames.RESTING_BOOK).all()) {
      while (it.hasNext()) {
        it.next();
        n++;
      }
    }
    return n;
  }

  private List<OrderEventType> events() {
    return flow.events.readValuesToList().stream().map(OrderEvent::getEvent).toList();
  }

  @Test
  void aBuyBelowThePriceRestsHoldingItsValueAndFillsAtATickExactlyAtItsLimit() {
    Order buy = gtc("A1", "EQ1", Side.BUY, 10, "95");
    assertThat(place(buy)).isNull();
    OrderEvent open = flow.events.readValue();
    assertThat(open.getEvent()).isEqualTo(OrderEventType.OPEN);
    assertThat(open.getReserved()).isEqualTo(FlowFixture.money("950"));
    assertThat(reserved()).isEqualTo(m("950"));
    assertThat(bookSize()).isEqualTo(1);

    tick("EQ1", "95.000001");                     // not yet
    assertThat(flow.results.isEmpty()).isTrue();
    tick("EQ1", "95");                            // exactly at the limit
    OrderResult fill = flow.results.readValue();
    assertThat(fill.getStatus()).isEqualTo(OrderStatus.ACCEPTED);
    assertThat(fill.getFillPrice()).isEqualTo(FlowFixture.money("95"));
    assertThat(fill.getIngestTs()).isEqualTo(FlowFixture.NOW.plusMillis(1));   // when it was placed
    assertThat(events()).containsExactly(OrderEventType.TRIGGERED);
    assertThat(flow.position("A1", "EQ1")).isEqualTo(new PositionState(10, m("95"), 0, 1));
    assertThat(reserved()).isZero();
    assertThat(working(buy.getOrderId())).isNull();
    assertThat(bookSize()).isZero();

    tick("EQ1", "90");                            // it triggered once
    assertThat(flow.results.isEmpty()).isTrue();
  }

  @Test
  void aGapThroughTheLimitFillsAtTheCrossingPriceAndASellRestsAboveThePrice() {
    flow.buy("A1", "EQ1", 20);
    place(gtc("A1", "EQ1", Side.BUY, 5, "95"));
    place(gtc("A1", "EQ1", Side.SELL, 20, "110"));
    assertThat(reserved()).isEqualTo(m("475"));   // the sell only reduces: it holds nothing
    tick("EQ1", "90");                            // gaps through 95
    assertThat(flow.results.readValue().getFillPrice()).isEqualTo(FlowFixture.money("90"));
    tick("EQ1", "112.5");                         // gaps through 110
    OrderResult sold = flow.results.readValue();
    assertThat(sold.getSide()).isEqualTo(Side.SELL);
    assertThat(sold.getFillPrice()).isEqualTo(FlowFixture.money("112.5"));
    assertThat(flow.position("A1", "EQ1").quantity()).isEqualTo(5);
  }

  @Test
  void oneTickCrossingManyOrdersTriggersThemInTheOrderTheyWerePlaced() {
    Order third = gtc("A1", "EQ1", Side.BUY, 1, "97");
    Order first = gtc("A1", "EQ1", Side.BUY, 1, "95");
    Order second = gtc("A1", "EQ1", Side.BUY, 1, "99");
    Order notCrossed = gtc("A1", "EQ1", Side.BUY, 1, "80");
    flow.orders.pipeInput("M1", first, FlowFixture.NOW.plusMillis(1));
    flow.orders.pipeInput("M1", second, FlowFixture.NOW.plusMillis(2));
    flow.orders.pipeInput("M1", third, FlowFixture.NOW.plusMillis(3));
    flow.orders.pipeInput("M1", notCrossed, FlowFixture.NOW.plusMillis(4));
    tick("EQ1", "94");
    assertThat(flow.triggers.readValuesToList().stream().map(OrderTrigger::getOrderId))
        .containsExactly(first.getOrderId(), second.getOrderId(), third.getOrderId());
    assertThat(flow.results.readValuesToList().stream().map(OrderResult::getOrderId))
        .containsExactly(first.getOrderId(), second.getOrderId(), third.getOrderId());
    assertThat(working(notCrossed.getOrderId())).isNotNull();
    assertThat(reserved()).isEqualTo(m("80"));
  }

  @Test
  void aCancelTakesAWorkingOrderOffAndReleasesItsReservation() {
    Order buy = gtc("A1", "EQ1", Side.BUY, 10, "95");
    place(buy);
    flow.events.readValue();
    cancel("M1", buy.getOrderId());
    OrderResult cancelled = flow.results.readValue();
    assertThat(cancelled.getStatus()).isEqualTo(OrderStatus.CANCELLED);
    assertThat(cancelled.getReason()).isNull();
    assertThat(events()).containsExactly(OrderEventType.CANCELLED);
    assertThat(reserved()).isZero();
    assertThat(bookSize()).isZero();
    tick("EQ1", "90");
    assertThat(flow.results.isEmpty()).isTrue();
    assertThat(flow.position("A1", "EQ1")).isNull();
  }

  @Test
  void aCancelAndAFillRacingEndAsExactlyOneOfThem() {
    // The fill first: the cancel finds nothing working and says so.
    Order filled = gtc("A1", "EQ1", Side.BUY, 10, "95");
    place(filled);
    tick("EQ1", "95");
    assertThat(flow.results.readValue().getStatus()).isEqualTo(OrderStatus.ACCEPTED);
    flow.events.readValuesToList();
    cancel("M1", filled.getOrderId());
    OrderEvent refused = flow.events.readValue();
    assertThat(refused.getEvent()).isEqualTo(OrderEventType.CANCEL_REJECTED);
    assertThat(refused.getDetail()).contains("not working");
    assertThat(flow.results.isEmpty()).isTrue();

    // The cancel first, with a trigger already on its way from the book: the trigger books nothing.
    Order cancelled = gtc("A1", "EQ1", Side.BUY, 10, "90");
    place(cancelled);
    cancel("M1", cancelled.getOrderId());
    assertThat(flow.results.readValue().getStatus()).isEqualTo(OrderStatus.CANCELLED);
    flow.triggersIn.pipeInput("M1", OrderTrigger.newBuilder().setOrderId(cancelled.getOrderId())
        .setInstrumentId("EQ1").setPrice(FlowFixture.money("89")).setTickSequence(99)
        .setTriggeredTs(FlowFixture.NOW).build());
    assertThat(flow.results.isEmpty()).isTrue();
    assertThat(flow.position("A1", "EQ1").quantity()).isEqualTo(10);
    assertThat(reserved()).isZero();

    // A cancel for an order never sent.
    flow.events.readValuesToList();
    cancel("M1", "never-sent");
    assertThat(flow.events.readValue().getDetail()).isEqualTo("no order never-sent from member M1");
  }

  @Test
  void reservationsCountAgainstBuyingPowerForEveryLaterOrder() {
    // M1's power: 750,000 deposited + 1,000,000 credit.
    assertThat(place(gtc("A1", "EQ1", Side.BUY, 10_000, "95"))).isNull();          // holds 950,000
    OrderResult second = place(gtc("A1", "EQ1", Side.BUY, 9_000, "95"));           // 855,000 more: too much
    assertThat(second.getStatus()).isEqualTo(OrderStatus.REJECTED);
    assertThat(second.getReason()).isEqualTo(ReasonCode.INSUFFICIENT_BUYING_POWER);
    assertThat(second.getReasonDetail()).contains("reserved for working orders");
    OrderResult market = flow.buy("A1", "EQ1", 9_000);                            // 900,000 at 100: too much too
    assertThat(market.getReason()).isEqualTo(ReasonCode.INSUFFICIENT_BUYING_POWER);
    assertThat(flow.buy("A1", "EQ1", 7_000).getStatus()).isEqualTo(OrderStatus.ACCEPTED);   // 700,000 fits
  }

  @Test
  void shortRulesAreCheckedWhenAnOrderRestsAndAgainWhenItFills() {
    OrderResult naked = place(gtc("A2", "EQ1", Side.SELL, 5, "120"));
    assertThat(naked.getReason()).isEqualTo(ReasonCode.SHORT_NOT_ALLOWED);

    flow.buy("A2", "EQ1", 5);
    Order sell = gtc("A2", "EQ1", Side.SELL, 5, "120");
    assertThat(place(sell)).isNull();                     // covered now: it rests
    flow.sell("A2", "EQ1", 5);                            // the shares go another way meanwhile
    tick("EQ1", "121");
    OrderResult atFill = flow.results.readValue();
    assertThat(atFill.getOrderId()).isEqualTo(sell.getOrderId());
    assertThat(atFill.getReason()).isEqualTo(ReasonCode.SHORT_NOT_ALLOWED);
    assertThat(working(sell.getOrderId())).isNull();
    assertThat(reserved()).isZero();
  }

  @Test
  void aRetryOfAWorkingOrderRestsNothingTwiceAndIocStaysAsItWas() {
    Order buy = gtc("A1", "EQ1", Side.BUY, 10, "95");
    place(buy);
    place(buy);
    assertThat(events()).containsExactly(OrderEventType.OPEN);
    assertThat(reserved()).isEqualTo(m("950"));
    assertThat(bookSize()).isEqualTo(1);

    OrderResult ioc = place(flow.order("A1", "EQ1", Side.BUY, 10, "95"));
    assertThat(ioc.getReason()).isEqualTo(ReasonCode.LIMIT_NOT_MET);
    OrderResult market = place(gtc("A1", "EQ1", Side.BUY, 1, null));       // GTC means nothing on a market order
    assertThat(market.getStatus()).isEqualTo(OrderStatus.ACCEPTED);
  }

  @Test
  void anOptionRestsOnItsEquitysBookAndFillsAtTheModelPriceWhenTheEquityMoves() {
    flow.option("C1", "EQ1", "CALL", "EUROPEAN", "100", LocalDate.of(2027, 5, 21));
    OrderResult now = flow.buy("A1", "C1", 1);           // what the call costs at 100
    long atHundred = m(now.getFillPrice().toPlainString());
    long limit = atHundred - m("2");
    Order buy = gtc("A1", "C1", Side.BUY, 1, io.brokerstream.money.Micros.format(limit));
    assertThat(place(buy)).isNull();
    assertThat(reserved()).isEqualTo(limit * 100);     // a contract is 100 shares
    tick("EQ1", "99");                                   // the call still costs more than the limit
    assertThat(flow.results.isEmpty()).isTrue();
    tick("EQ1", "95");
    OrderResult fill = flow.results.readValue();
    assertThat(fill.getOrderId()).isEqualTo(buy.getOrderId());
    assertThat(m(fill.getFillPrice().toPlainString())).isLessThanOrEqualTo(limit);
    assertThat(flow.triggers.readValue().getInstrumentId()).isEqualTo("C1");
  }

  @Test
  void everyOrderEndsOnceAcceptedRejectedCancelledOrStillWorking() {
    java.util.Random rng = new java.util.Random(7);
    java.util.Set<String> sent = new java.util.HashSet<>();
    for (int i = 0; i < 300; i++) {
      String limit = String.valueOf(90 + rng.nextInt(20));
      Order o = rng.nextInt(4) == 0 ? flow.order("A1", "EQ1", Side.BUY, 1 + rng.nextInt(5), limit)
          : gtc(rng.nextBoolean() ? "A1" : "A2", "EQ1", rng.nextBoolean() ? Side.BUY : Side.SELL, 1 + rng.nextInt(5),
              limit);
      flow.orders.pipeInput("M1", o, FlowFixture.NOW.plusMillis(i));
      sent.add(o.getOrderId());
      if (rng.nextInt(5) == 0) {
        cancel("M1", "o" + (1 + rng.nextInt(i + 1)));
      }
      if (rng.nextInt(10) == 0) {
        tick("EQ1", String.valueOf(90 + rng.nextInt(20)));
      }
    }
    List<OrderResult> results = flow.results.readValuesToList();
    java.util.Map<String, Long> perOrder = new java.util.HashMap<>();
    results.forEach(r -> perOrder.merge(r.getOrderId(), 1L, Long::sum));
    assertThat(perOrder.values()).allMatch(n -> n == 1);
    long stillWorking = sent.stream().filter(id -> working(id) != null).count();
    assertThat(perOrder.size() + stillWorking).isEqualTo(sent.size());
    assertThat(perOrder.keySet()).allMatch(sent::contains);
    assertThat(results.stream().map(OrderResult::getStatus).distinct())
        .contains(OrderStatus.ACCEPTED, OrderStatus.REJECTED, OrderStatus.CANCELLED);
    // what is held is exactly what the working orders hold
    long held = sent.stream().map(this::working).filter(java.util.Objects::nonNull).mapToLong(OpenOrder::reserved).sum();
    assertThat(reserved()).isEqualTo(held);
    assertThat(bookSize()).isEqualTo(stillWorking);
  }
}
