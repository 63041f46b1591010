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
 * GTC limit orders: they rest when the price does not meet them, fill when a tick crosses, hold
 * buying power meanwhile, and a cancel racing a fill ends as exactly one of the two.
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

  private Order stop(
      String account, String instrument, Side side, long quantity, String stop, TimeInForce tif) {
    Order o = flow.order(account, instrument, side, quantity, null);
    o.setTimeInForce(tif);
    o.setStopPrice(FlowFixture.money(stop));
    return o;
  }

  private Order day(String account, String instrument, Side side, long quantity, String limit) {
    Order o = flow.order(account, instrument, side, quantity, limit);
    o.setTimeInForce(TimeInForce.DAY);
    return o;
  }

  private void amend(
      String orderId, Long quantity, String limit, String stop, java.time.Instant at) {
    flow.commands.pipeInput(
        "M1",
        OrderCommand.newBuilder()
            .setOrderId(orderId)
            .setAction(OrderAction.AMEND)
            .setClientTs(FlowFixture.NOW)
            .setQuantity(quantity)
            .setLimitPrice(limit == null ? null : FlowFixture.money(limit))
            .setStopPrice(stop == null ? null : FlowFixture.money(stop))
            .build(),
        at);
  }

  private void cancel(String member, String orderId) {
    flow.commands.pipeInput(
        member,
        OrderCommand.newBuilder()
            .setOrderId(orderId)
            .setAction(OrderAction.CANCEL)
            .setClientTs(FlowFixture.NOW)
            .build());
  }

  private OpenOrder working(String orderId) {
    return flow.driver
        .<String, OpenOrder>getKeyValueStore(StoreNames.OPEN_ORDERS)
        .get(Topics.resultKey("M1", orderId));
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

    tick("EQ1", "95.000001"); // not yet
    assertThat(flow.results.isEmpty()).isTrue();
    tick("EQ1", "95"); // exactly at the limit
    OrderResult fill = flow.results.readValue();
    assertThat(fill.getStatus()).isEqualTo(OrderStatus.ACCEPTED);
    assertThat(fill.getFillPrice()).isEqualTo(FlowFixture.money("95"));
    assertThat(fill.getIngestTs()).isEqualTo(FlowFixture.NOW.plusMillis(1)); // when it was placed
    assertThat(events()).containsExactly(OrderEventType.TRIGGERED);
    assertThat(flow.position("A1", "EQ1")).isEqualTo(PositionState.atAverage(10, m("95"), 0, 1, 1));
    assertThat(reserved()).isZero();
    assertThat(working(buy.getOrderId())).isNull();
    assertThat(bookSize()).isZero();

    tick("EQ1", "90"); // it triggered once
    assertThat(flow.results.isEmpty()).isTrue();
  }

  @Test
  void aGapThroughTheLimitFillsAtTheCrossingPriceAndASellRestsAboveThePrice() {
    flow.buy("A1", "EQ1", 20);
    place(gtc("A1", "EQ1", Side.BUY, 5, "95"));
    place(gtc("A1", "EQ1", Side.SELL, 20, "110"));
    assertThat(reserved()).isEqualTo(m("475")); // the sell only reduces: it holds nothing
    tick("EQ1", "90"); // gaps through 95
    assertThat(flow.results.readValue().getFillPrice()).isEqualTo(FlowFixture.money("90"));
    tick("EQ1", "112.5"); // gaps through 110
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
    flow.triggersIn.pipeInput(
        "M1",
        OrderTrigger.newBuilder()
            .setOrderId(cancelled.getOrderId())
            .setInstrumentId("EQ1")
            .setPrice(FlowFixture.money("89"))
            .setTickSequence(99)
            .setTriggeredTs(FlowFixture.NOW)
            .build());
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
    assertThat(place(gtc("A1", "EQ1", Side.BUY, 10_000, "95"))).isNull(); // holds 950,000
    OrderResult second = place(gtc("A1", "EQ1", Side.BUY, 9_000, "95")); // 855,000 more: too much
    assertThat(second.getStatus()).isEqualTo(OrderStatus.REJECTED);
    assertThat(second.getReason()).isEqualTo(ReasonCode.INSUFFICIENT_BUYING_POWER);
    assertThat(second.getReasonDetail()).contains("reserved for working orders");
    OrderResult market = flow.buy("A1", "EQ1", 9_000); // 900,000 at 100: too much too
    assertThat(market.getReason()).isEqualTo(ReasonCode.INSUFFICIENT_BUYING_POWER);
    assertThat(flow.buy("A1", "EQ1", 7_000).getStatus())
        .isEqualTo(OrderStatus.ACCEPTED); // 700,000 fits
  }

  @Test
  void shortRulesAreCheckedWhenAnOrderRestsAndAgainWhenItFills() {
    OrderResult naked = place(gtc("A2", "EQ1", Side.SELL, 5, "120"));
    assertThat(naked.getReason()).isEqualTo(ReasonCode.SHORT_NOT_ALLOWED);

    flow.buy("A2", "EQ1", 5);
    Order sell = gtc("A2", "EQ1", Side.SELL, 5, "120");
    assertThat(place(sell)).isNull(); // covered now: it rests
    flow.sell("A2", "EQ1", 5); // the shares go another way meanwhile
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
    OrderResult market =
        place(gtc("A1", "EQ1", Side.BUY, 1, null)); // GTC means nothing on a market order
    assertThat(market.getStatus()).isEqualTo(OrderStatus.ACCEPTED);
  }

  @Test
  void anOptionRestsOnItsEquitysBookAndFillsAtTheModelPriceWhenTheEquityMoves() {
    flow.option("C1", "EQ1", "CALL", "EUROPEAN", "100", LocalDate.of(2027, 5, 21));
    OrderResult now = flow.buy("A1", "C1", 1); // what the call costs at 100
    long atHundred = m(now.getFillPrice().toPlainString());
    long limit = atHundred - m("2");
    Order buy = gtc("A1", "C1", Side.BUY, 1, io.brokerstream.money.Micros.format(limit));
    assertThat(place(buy)).isNull();
    assertThat(reserved()).isEqualTo(limit * 100); // a contract is 100 shares
    tick("EQ1", "99"); // the call still costs more than the limit
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
      Order o =
          rng.nextInt(4) == 0
              ? flow.order("A1", "EQ1", Side.BUY, 1 + rng.nextInt(5), limit)
              : gtc(
                  rng.nextBoolean() ? "A1" : "A2",
                  "EQ1",
                  rng.nextBoolean() ? Side.BUY : Side.SELL,
                  1 + rng.nextInt(5),
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
    long held =
        sent.stream()
            .map(this::working)
            .filter(java.util.Objects::nonNull)
            .mapToLong(OpenOrder::reserved)
            .sum();
    assertThat(reserved()).isEqualTo(held);
    assertThat(bookSize()).isEqualTo(stillWorking);
  }

  // --- stop orders
  // -----------------------------------------------------------------------------------

  @Test
  void aBuyStopRestsBelowItsStopAndBecomesAMarketOrderWhenATickTouchesIt() {
    Order buy = stop("A1", "EQ1", Side.BUY, 10, "105", TimeInForce.GTC); // the price is 100
    assertThat(place(buy)).isNull();
    OrderEvent open = flow.events.readValue();
    assertThat(open.getEvent()).isEqualTo(OrderEventType.OPEN);
    assertThat(open.getPrice()).isEqualTo(FlowFixture.money("105"));
    assertThat(reserved()).isEqualTo(m("1050")); // held at its stop
    tick("EQ1", "104.999999");
    tick("EQ1", "95"); // a buy stop never triggers on a fall
    assertThat(flow.results.isEmpty()).isTrue();
    tick("EQ1", "105"); // touched exactly
    OrderResult fill = flow.results.readValue();
    assertThat(fill.getStatus()).isEqualTo(OrderStatus.ACCEPTED);
    assertThat(fill.getFillPrice()).isEqualTo(FlowFixture.money("105"));
    assertThat(reserved()).isZero();
    assertThat(bookSize()).isZero();
  }

  @Test
  void aSellStopFillsAtTheTickThatGapsThroughItsStop() {
    flow.buy("A1", "EQ1", 20);
    Order sell = stop("A1", "EQ1", Side.SELL, 20, "90", TimeInForce.GTC);
    assertThat(place(sell)).isNull();
    tick("EQ1", "110");
    assertThat(flow.results.isEmpty()).isTrue();
    tick("EQ1", "84.5"); // through 90 in one tick: a market order fills at 84.5
    OrderResult fill = flow.results.readValue();
    assertThat(fill.getOrderId()).isEqualTo(sell.getOrderId());
    assertThat(fill.getFillPrice()).isEqualTo(FlowFixture.money("84.5"));
    assertThat(flow.position("A1", "EQ1").quantity()).isZero();
  }

  @Test
  void aStopThePriceAlreadyTouchesFillsAtOnceAndMalformedStopsAreRefused() {
    OrderResult now = place(stop("A1", "EQ1", Side.BUY, 1, "99", TimeInForce.GTC)); // 100 >= 99
    assertThat(now.getStatus()).isEqualTo(OrderStatus.ACCEPTED);
    assertThat(now.getFillPrice()).isEqualTo(FlowFixture.money("100"));

    OrderResult ioc = place(stop("A1", "EQ1", Side.BUY, 1, "105", TimeInForce.IOC));
    assertThat(ioc.getReason()).isEqualTo(ReasonCode.INVALID_PRICE);
    assertThat(ioc.getReasonDetail()).contains("DAY or GTC");
    Order stopLimit = stop("A1", "EQ1", Side.BUY, 1, "105", TimeInForce.GTC);
    stopLimit.setLimitPrice(FlowFixture.money("106"));
    assertThat(place(stopLimit).getReasonDetail()).contains("stop-limit");
    assertThat(place(stop("A1", "EQ1", Side.BUY, 1, "0", TimeInForce.GTC)).getReason())
        .isEqualTo(ReasonCode.INVALID_PRICE);
    assertThat(place(stop("A2", "EQ1", Side.SELL, 1, "90", TimeInForce.GTC)).getReason())
        .isEqualTo(ReasonCode.SHORT_NOT_ALLOWED); // short rules at placement, for stops too
    assertThat(bookSize()).isZero();
  }

  // --- DAY orders
  // ------------------------------------------------------------------------------------

  @Test
  void aDayOrderStillWorkingAtTheCloseExpiresAndReleasesWhatItHeld() {
    Order buy = day("A1", "EQ1", Side.BUY, 10, "95"); // placed Friday 10:00 New York
    Order gtc = gtc("A1", "EQ1", Side.BUY, 1, "90");
    assertThat(place(buy)).isNull();
    assertThat(place(gtc)).isNull();
    assertThat(reserved()).isEqualTo(m("1040"));
    flow.events.readValuesToList();
    flow.driver.advanceWallClockTime(
        java.time.Duration.ofHours(5).plusMinutes(59)); // 15:59: still working
    assertThat(flow.results.isEmpty()).isTrue();
    flow.driver.advanceWallClockTime(java.time.Duration.ofMinutes(2)); // past 16:00
    OrderResult expired = flow.results.readValue();
    assertThat(expired.getOrderId()).isEqualTo(buy.getOrderId());
    assertThat(expired.getStatus()).isEqualTo(OrderStatus.EXPIRED);
    assertThat(expired.getReasonDetail()).contains("2026-11-20T21:00:00Z"); // 16:00 in New York
    assertThat(events()).containsExactly(OrderEventType.EXPIRED);
    assertThat(flow.results.isEmpty()).isTrue(); // the GTC order works on
    assertThat(reserved()).isEqualTo(m("90"));
    assertThat(bookSize()).isEqualTo(1);
    tick("EQ1", "89"); // would have crossed the expired one too
    assertThat(flow.results.readValue().getOrderId()).isEqualTo(gtc.getOrderId());
    assertThat(flow.results.isEmpty()).isTrue();
    cancel("M1", buy.getOrderId());
    assertThat(flow.events.readValuesToList().get(1).getEvent())
        .isEqualTo(OrderEventType.CANCEL_REJECTED);
  }

  @Test
  void aDayOrderDecidedAfterItsCloseHadPassedExpiresAtTheNextCheck() {
    // The broker's clock reads 16:00:30 in New York; no close for the next quarter hour, so the
    // task looks for expiries only every orders.expiry-check-max-ms (10 s).
    flow.driver.advanceWallClockTime(java.time.Duration.ofHours(6).plusSeconds(30));
    Order late = day("A1", "EQ1", Side.BUY, 10, "95");
    // received at 15:59:59 (a backlog read late): it rests, already past its close
    flow.orders.pipeInput("M1", late, FlowFixture.NOW.plusSeconds(6 * 3600 - 1));
    assertThat(flow.results.isEmpty()).isTrue();
    flow.driver.advanceWallClockTime(java.time.Duration.ofSeconds(9));
    assertThat(flow.results.isEmpty()).isTrue(); // the next check is not due yet
    flow.driver.advanceWallClockTime(java.time.Duration.ofSeconds(1));
    OrderResult expired = flow.results.readValue();
    assertThat(expired.getOrderId()).isEqualTo(late.getOrderId());
    assertThat(expired.getStatus()).isEqualTo(OrderStatus.EXPIRED);
    assertThat(reserved()).isZero();
  }

  private OrderTrigger trigger(Order order, String price, java.time.Instant at, long entry) {
    return OrderTrigger.newBuilder()
        .setOrderId(order.getOrderId())
        .setInstrumentId(order.getInstrumentId())
        .setPrice(FlowFixture.money(price))
        .setTickSequence(++sequence)
        .setTriggeredTs(at)
        .setPlacedTs(FlowFixture.NOW)
        .setEntry(entry)
        .build();
  }

  @Test
  void aDayOrderCrossedAfterItsCloseExpiresInsteadOfFilling() {
    java.time.Instant close = java.time.Instant.parse("2026-11-20T21:00:00Z"); // 16:00 New York
    Order late = day("A1", "EQ1", Side.BUY, 10, "95");
    Order early = day("A1", "EQ1", Side.BUY, 10, "95");
    flow.orders.pipeInput("M1", late, FlowFixture.NOW);
    flow.orders.pipeInput("M1", early, FlowFixture.NOW);
    flow.events.readValuesToList();
    // the book crossed both, one a millisecond before the close, one at it; their triggers reach
    // the member task before its next expiry check would have taken them off
    flow.fastTriggersIn.pipeInput(
        "M1", trigger(early, "94", close.minusMillis(1), 1), close.minusMillis(1));
    flow.fastTriggersIn.pipeInput("M1", trigger(late, "94", close, 1), close);
    List<OrderResult> results = flow.results.readValuesToList();
    assertThat(results)
        .extracting(OrderResult::getOrderId, OrderResult::getStatus)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple(early.getOrderId(), OrderStatus.ACCEPTED),
            org.assertj.core.groups.Tuple.tuple(late.getOrderId(), OrderStatus.EXPIRED));
    assertThat(flow.position("A1", "EQ1").quantity()).isEqualTo(10);
    assertThat(reserved()).isZero();
    assertThat(working(late.getOrderId())).isNull();
  }

  @Test
  void anAmendAfterTheCloseFindsTheDayOrderExpired() {
    Order buy = day("A1", "EQ1", Side.BUY, 10, "95");
    place(buy);
    flow.events.readValuesToList();
    amend(buy.getOrderId(), 5L, null, null, java.time.Instant.parse("2026-11-20T21:00:00Z"));
    assertThat(flow.results.readValue().getStatus()).isEqualTo(OrderStatus.EXPIRED);
    assertThat(events()).containsExactly(OrderEventType.EXPIRED, OrderEventType.AMEND_REJECTED);
    assertThat(reserved()).isZero();
  }

  @Test
  void aTriggerOfTheEntryAnAmendReplacedInTheSameMillisecondIsNotTakenForTheNewOne() {
    Order buy = gtc("A1", "EQ1", Side.BUY, 10, "95");
    java.time.Instant at = FlowFixture.NOW;
    flow.orders.pipeInput("M1", buy, at);
    // amended in the same millisecond it was placed (LogAppendTime stamps a batch alike)
    amend(buy.getOrderId(), null, "90", null, at);
    assertThat(working(buy.getOrderId()).placedMs()).isEqualTo(at.toEpochMilli());
    assertThat(working(buy.getOrderId()).entry()).isEqualTo(2);
    // the book had crossed the first entry (95) at 94 before the amend reached it
    flow.fastTriggersIn.pipeInput("M1", trigger(buy, "94", at, 1), at);
    assertThat(flow.results.isEmpty()).as("the old entry's trigger is dropped").isTrue();
    assertThat(working(buy.getOrderId())).isNotNull();
    // the new entry's own trigger fills it
    flow.fastTriggersIn.pipeInput("M1", trigger(buy, "89", at, 2), at);
    OrderResult fill = flow.results.readValue();
    assertThat(fill.getStatus()).isEqualTo(OrderStatus.ACCEPTED);
    assertThat(fill.getFillPrice()).isEqualTo(FlowFixture.money("89"));
  }

  @Test
  void theBookSendsTheEntryNumberBackWithItsTrigger() {
    Order buy = gtc("A1", "EQ1", Side.BUY, 10, "95");
    place(buy);
    amend(buy.getOrderId(), null, "96", null, FlowFixture.NOW.plusSeconds(1));
    tick("EQ1", "95.5");
    assertThat(flow.triggers.readValue().getEntry()).isEqualTo(2);
  }

  @Test
  void aDayOrderThatFillsBeforeTheCloseDoesNotExpire() {
    Order buy = day("A1", "EQ1", Side.BUY, 10, "95");
    place(buy);
    tick("EQ1", "95");
    assertThat(flow.results.readValue().getStatus()).isEqualTo(OrderStatus.ACCEPTED);
    flow.driver.advanceWallClockTime(java.time.Duration.ofHours(8));
    assertThat(flow.results.isEmpty()).isTrue();
    assertThat(flow.driver.getKeyValueStore(StoreNames.ORDER_EXPIRIES).approximateNumEntries())
        .isZero();
  }

  @Test
  void theCloseIsTheExchangesInItsOwnZoneAndSkipsTheWeekend() {
    MarketCalendar calendar =
        new MarketCalendar(
            java.util.Map.of("XNYS", "16:00@America/New_York", "XLON", "16:30@Europe/London"),
            "17:00@UTC");
    java.time.Instant friday = java.time.Instant.parse("2026-11-20T15:00:00Z");
    assertThat(calendar.nextClose("XNYS", friday))
        .isEqualTo(java.time.Instant.parse("2026-11-20T21:00:00Z"));
    assertThat(calendar.nextClose("XLON", friday))
        .isEqualTo(java.time.Instant.parse("2026-11-20T16:30:00Z"));
    assertThat(calendar.nextClose("XXXX", friday))
        .isEqualTo(java.time.Instant.parse("2026-11-20T17:00:00Z"));
    // after Friday's close: Monday's
    assertThat(calendar.nextClose("XNYS", java.time.Instant.parse("2026-11-20T21:00:00Z")))
        .isEqualTo(java.time.Instant.parse("2026-11-23T21:00:00Z"));
    // summer time in New York: 16:00 is 20:00 UTC
    assertThat(calendar.nextClose("XNYS", java.time.Instant.parse("2026-07-01T12:00:00Z")))
        .isEqualTo(java.time.Instant.parse("2026-07-01T20:00:00Z"));
  }

  // --- amends
  // ----------------------------------------------------------------------------------------

  @Test
  void anAmendedLimitRestsOnItsNewTermsBehindOrdersAlreadyThereAndTheOldLevelNoLongerTriggers() {
    Order first = gtc("A1", "EQ1", Side.BUY, 10, "90");
    Order second = gtc("A1", "EQ1", Side.BUY, 1, "95");
    place(first);
    place(second);
    flow.events.readValuesToList();
    amend(first.getOrderId(), 20L, "96", null, FlowFixture.NOW.plusSeconds(1));
    OrderEvent amended = flow.events.readValue();
    assertThat(amended.getEvent()).isEqualTo(OrderEventType.AMENDED);
    assertThat(amended.getQuantity()).isEqualTo(20);
    assertThat(amended.getReserved()).isEqualTo(FlowFixture.money("1920"));
    assertThat(reserved()).isEqualTo(m("1920") + m("95"));
    assertThat(bookSize()).isEqualTo(2);
    tick(
        "EQ1",
        "94"); // crosses both: the amended one lost its place to the one placed before the amend
    assertThat(flow.results.readValuesToList().stream().map(OrderResult::getOrderId))
        .containsExactly(second.getOrderId(), first.getOrderId());
    assertThat(flow.position("A1", "EQ1").quantity()).isEqualTo(21);
    assertThat(reserved()).isZero();
  }

  @Test
  void anAmendThatMakesTheOrderMarketableFillsItAtOnce() {
    Order buy = gtc("A1", "EQ1", Side.BUY, 10, "90");
    place(buy);
    amend(buy.getOrderId(), null, "101", null, FlowFixture.NOW.plusSeconds(1)); // the price is 100
    OrderResult fill = flow.results.readValue();
    assertThat(fill.getStatus()).isEqualTo(OrderStatus.ACCEPTED);
    assertThat(fill.getFillPrice()).isEqualTo(FlowFixture.money("100"));
    assertThat(fill.getLimitPrice()).isEqualTo(FlowFixture.money("101"));
    assertThat(bookSize()).isZero();
    assertThat(reserved()).isZero();
  }

  @Test
  void anAmendTheOrderCannotTakeLeavesItWorkingUnchanged() {
    Order buy = gtc("A1", "EQ1", Side.BUY, 10, "95");
    place(buy);
    flow.events.readValuesToList();
    amend(
        buy.getOrderId(),
        100_000L,
        null,
        null,
        FlowFixture.NOW.plusSeconds(1)); // 9.5m: beyond its power
    OrderEvent refused = flow.events.readValue();
    assertThat(refused.getEvent()).isEqualTo(OrderEventType.AMEND_REJECTED);
    assertThat(refused.getDetail()).contains("INSUFFICIENT_BUYING_POWER").contains("unchanged");
    amend(
        buy.getOrderId(),
        null,
        null,
        "99",
        FlowFixture.NOW.plusSeconds(2)); // a limit order has no stop
    assertThat(flow.events.readValue().getDetail()).contains("no stop");
    assertThat(flow.results.isEmpty()).isTrue();
    assertThat(working(buy.getOrderId()).order().getQuantity()).isEqualTo(10);
    assertThat(reserved()).isEqualTo(m("950"));
    assertThat(bookSize()).isEqualTo(1);
    tick("EQ1", "95");
    assertThat(flow.results.readValue().getQuantity()).isEqualTo(10);
  }

  @Test
  void anAmendAndAFillRacingEndAsExactlyOneOfThem() {
    // The book triggers the old terms while the amend is on its way: the amend wins, the stale
    // trigger is dropped, and the amended order works on.
    Order buy = gtc("A1", "EQ1", Side.BUY, 10, "95");
    place(buy);
    long placed = working(buy.getOrderId()).placedMs();
    amend(buy.getOrderId(), null, "80", null, FlowFixture.NOW.plusSeconds(1));
    flow.triggersIn.pipeInput(
        "M1",
        OrderTrigger.newBuilder()
            .setOrderId(buy.getOrderId())
            .setInstrumentId("EQ1")
            .setPrice(FlowFixture.money("95"))
            .setTickSequence(99)
            .setTriggeredTs(FlowFixture.NOW)
            .setPlacedTs(java.time.Instant.ofEpochMilli(placed))
            .build());
    assertThat(flow.results.isEmpty()).isTrue();
    assertThat(working(buy.getOrderId()).order().getLimitPrice())
        .isEqualTo(FlowFixture.money("80"));
    assertThat(reserved()).isEqualTo(m("800"));

    // The fill first: the amend finds nothing working.
    tick("EQ1", "80");
    assertThat(flow.results.readValue().getStatus()).isEqualTo(OrderStatus.ACCEPTED);
    flow.events.readValuesToList();
    amend(buy.getOrderId(), 5L, null, null, FlowFixture.NOW.plusSeconds(2));
    OrderEvent late = flow.events.readValue();
    assertThat(late.getEvent()).isEqualTo(OrderEventType.AMEND_REJECTED);
    assertThat(late.getDetail()).contains("not working");
    assertThat(flow.results.isEmpty()).isTrue();
  }

  @Test
  void anAmendedStopMovesItsTrigger() {
    flow.buy("A1", "EQ1", 10);
    Order sell = stop("A1", "EQ1", Side.SELL, 10, "90", TimeInForce.DAY);
    place(sell);
    amend(sell.getOrderId(), null, null, "95", FlowFixture.NOW.plusSeconds(1));
    assertThat(working(sell.getOrderId()).expiresMs()).isPositive(); // a DAY order stays one
    tick("EQ1", "96");
    assertThat(flow.results.isEmpty()).isTrue();
    tick("EQ1", "94.5");
    assertThat(flow.results.readValue().getFillPrice()).isEqualTo(FlowFixture.money("94.5"));
  }

  @Test
  void aTickTriggersExactlyTheLimitsAndStopsOfEverySideItCrossesInPlacementOrder() {
    flow.buy("A1", "EQ1", 100); // sells below are covered
    Order sellStopHit = stop("A1", "EQ1", Side.SELL, 1, "97", TimeInForce.GTC);
    Order buyLimitHit = gtc("A1", "EQ1", Side.BUY, 1, "96");
    Order buyLimitMissed = gtc("A1", "EQ1", Side.BUY, 1, "94");
    Order sellLimitMissed = gtc("A1", "EQ1", Side.SELL, 1, "101");
    Order buyStopMissed = stop("A1", "EQ1", Side.BUY, 1, "101", TimeInForce.GTC);
    Order sellStopMissed = stop("A1", "EQ1", Side.SELL, 1, "94", TimeInForce.GTC);
    Order buyLimitAtTheTick = gtc("A1", "EQ1", Side.BUY, 1, "95");
    List<Order> all =
        List.of(
            sellStopHit,
            buyLimitHit,
            buyLimitMissed,
            sellLimitMissed,
            buyStopMissed,
            sellStopMissed,
            buyLimitAtTheTick);
    for (int i = 0; i < all.size(); i++) {
      flow.orders.pipeInput("M1", all.get(i), FlowFixture.NOW.plusMillis(10 + i));
    }
    assertThat(flow.results.isEmpty()).isTrue();
    tick("EQ1", "95");
    assertThat(flow.triggers.readValuesToList().stream().map(OrderTrigger::getOrderId))
        .containsExactly(
            sellStopHit.getOrderId(), buyLimitHit.getOrderId(), buyLimitAtTheTick.getOrderId());
    assertThat(bookSize()).isEqualTo(4);
    tick("EQ1", "101"); // the other way: sell limit, buy stop
    assertThat(flow.triggers.readValuesToList().stream().map(OrderTrigger::getOrderId))
        .containsExactly(sellLimitMissed.getOrderId(), buyStopMissed.getOrderId());
  }
}
