package io.brokerstream.streams.topology;

import static org.assertj.core.api.Assertions.assertThat;

import io.brokerstream.avro.InstrumentStatus;
import io.brokerstream.avro.Order;
import io.brokerstream.avro.OrderStatus;
import io.brokerstream.avro.PriceTick;
import io.brokerstream.avro.ReasonCode;
import io.brokerstream.avro.Side;
import io.brokerstream.avro.TimeInForce;
import java.time.Duration;
import java.time.LocalDate;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A price in doubt halts its equity: nothing fills, triggers or is priced at the old price while
 * the feed has left it, the feed's agreeing ticks or an operator end the halt, and members see it.
 */
class PriceHaltsTest {
  private final FlowFixture flow =
      new FlowFixture()
          .standard()
          .option("C1", "EQ1", "CALL", "EUROPEAN", "100", LocalDate.parse("2027-11-20"));

  @AfterEach
  void close() {
    flow.close();
  }

  private void settle() {
    flow.driver.advanceWallClockTime(Duration.ofMillis(200));
  }

  private Order gtcStop(Side side, long quantity, String stop) {
    Order o = flow.order("A1", "EQ1", side, quantity, null);
    o.setTimeInForce(TimeInForce.GTC);
    o.setStopPrice(FlowFixture.money(stop));
    return o;
  }

  @Test
  void aNinetyFivePercentFallHaltsUntilTheFeedConfirmsTheNewLevel() {
    flow.feed("EQ1", "1.31");
    settle();
    InstrumentStatus halted = flow.statuses.readValue();
    assertThat(halted.getState()).isEqualTo("HALTED");
    assertThat(halted.getReason()).isEqualTo("PRICE_BAND");
    assertThat(halted.getReferencePrice()).isEqualTo(FlowFixture.money("100"));
    assertThat(flow.pricesOut.isEmpty()).as("a held tick reaches no price").isTrue();
    assertThat(flow.deadTicks.isEmpty()).as("a price in doubt is not a bad record").isTrue();

    var buy = flow.buy("A1", "EQ1", 1);
    assertThat(buy.getStatus()).isEqualTo(OrderStatus.REJECTED);
    assertThat(buy.getReason()).isEqualTo(ReasonCode.INSTRUMENT_HALTED);
    assertThat(flow.buy("A1", "C1", 1).getReason())
        .as("its options halt with it")
        .isEqualTo(ReasonCode.INSTRUMENT_HALTED);

    flow.feed("EQ1", "1.312").feed("EQ1", "1.309");
    settle();
    assertThat(flow.statuses.readValue().getState()).isEqualTo("TRADING");
    assertThat(flow.pricesOut.readKeyValuesToMap().get("EQ1").getPrice())
        .isEqualTo(FlowFixture.money("1.309"));
    var after = flow.buy("A1", "EQ1", 1);
    assertThat(after.getStatus()).isEqualTo(OrderStatus.ACCEPTED);
    assertThat(after.getFillPrice()).isEqualTo(FlowFixture.money("1.309"));
  }

  @Test
  void aStopLossDoesNotTriggerAtAHeldPriceAndTriggersAtTheConfirmedOne() {
    flow.buy("A1", "EQ1", 10);
    flow.orders.pipeInput("M1", gtcStop(Side.SELL, 10, "90"), FlowFixture.NOW);
    assertThat(flow.results.isEmpty()).as("the stop works").isTrue();

    flow.feed("EQ1", "5");
    settle();
    assertThat(flow.triggers.isEmpty()).as("a held tick triggers nothing").isTrue();

    flow.feed("EQ1", "5.01").feed("EQ1", "4.99");
    settle();
    var trigger = flow.triggers.readValue();
    assertThat(trigger.getPrice()).isEqualTo(FlowFixture.money("4.99"));
  }

  @Test
  void aSpikeThatRevertsHaltsAndResumesAtTheOldLevel() {
    flow.feed("EQ1", "10000");
    settle();
    assertThat(flow.statuses.readValue().getState()).isEqualTo("HALTED");
    flow.feed("EQ1", "100.1").feed("EQ1", "100.2").feed("EQ1", "100.15");
    settle();
    InstrumentStatus resumed = flow.statuses.readValue();
    assertThat(resumed.getState()).isEqualTo("TRADING");
    assertThat(resumed.getReason()).isEqualTo("CONFIRMED");
    assertThat(flow.buy("A1", "EQ1", 1).getFillPrice()).isEqualTo(FlowFixture.money("100.15"));
  }

  @Test
  void aReverseSplitOneForTwentyHaltsThenTradesAtTheNewLevel() {
    flow.feed("EQ1", "2000").feed("EQ1", "2001").feed("EQ1", "1999.5");
    settle();
    Map<String, PriceTick> latest = flow.pricesOut.readKeyValuesToMap();
    assertThat(latest.get("EQ1").getPrice()).isEqualTo(FlowFixture.money("1999.5"));
    assertThat(flow.statuses.readValuesToList())
        .extracting(InstrumentStatus::getState)
        .containsExactly("HALTED", "TRADING");
  }

  @Test
  void anOperatorHaltsAndResumesAndTheResumptionTakesTheFeedsLastWord() {
    flow.control("EQ1", "HALT", "news pending");
    settle();
    InstrumentStatus halted = flow.statuses.readValue();
    assertThat(halted.getState()).isEqualTo("HALTED");
    assertThat(halted.getReason()).isEqualTo("OPERATOR");
    assertThat(halted.getChangedBy()).isEqualTo("ops");
    assertThat(halted.getDetail()).isEqualTo("news pending");
    assertThat(flow.buy("A1", "EQ1", 1).getReason()).isEqualTo(ReasonCode.INSTRUMENT_HALTED);

    // agreeing ticks do not end an operator's halt
    flow.feed("EQ1", "101").feed("EQ1", "101.1").feed("EQ1", "101.2").feed("EQ1", "101.3");
    settle();
    assertThat(flow.statuses.isEmpty()).isTrue();
    assertThat(flow.pricesOut.isEmpty()).isTrue();

    flow.control("EQ1", "RESUME", "news out");
    settle();
    InstrumentStatus resumed = flow.statuses.readValue();
    assertThat(resumed.getState()).isEqualTo("TRADING");
    assertThat(resumed.getReferencePrice()).isEqualTo(FlowFixture.money("101.3"));
    assertThat(flow.buy("A1", "EQ1", 1).getFillPrice()).isEqualTo(FlowFixture.money("101.3"));
  }

  @Test
  void anOperatorsResumptionDoesNotAcceptALoneSpikeHeldUnderItsHalt() {
    flow.control("EQ1", "HALT", "checking the feed");
    flow.feed("EQ1", "1001"); // one tick, beyond 10x: nothing confirms it
    settle();
    flow.control("EQ1", "RESUME", "feed checked");
    settle();
    flow.statuses.readValuesToList();
    assertThat(flow.pricesOut.isEmpty()).as("the spike is not the price").isTrue();
    assertThat(flow.buy("A1", "EQ1", 1).getFillPrice()).isEqualTo(FlowFixture.money("100"));
    // the band judges the next tick as usual: a far one halts again
    flow.feed("EQ1", "1001");
    settle();
    assertThat(flow.statuses.readValue().getReason()).isEqualTo("PRICE_BAND");
  }

  @Test
  void aControlThatNamesNoEquityIsADeadLetter() {
    flow.control("C1", "HALT", "an option halts with its equity");
    flow.control("EQ1", "PAUSE", "no such action");
    settle();
    assertThat(flow.deadTicks.readValuesToList())
        .extracting(l -> l.getErrorClass())
        .containsExactly("INVALID_CONTROL", "INVALID_CONTROL");
    assertThat(flow.statuses.isEmpty()).isTrue();
  }

  @Test
  void aTickStampedAheadDoesNotLockOutTheRealTicksAfterIt() {
    PriceTick ahead = FlowFixture.tick("EQ1", "101", 50);
    ahead.setEventTs(FlowFixture.NOW.plusSeconds(59));
    flow.ticks.pipeInput("EQ1", ahead, FlowFixture.NOW);
    flow.driver.advanceWallClockTime(Duration.ofSeconds(1));
    PriceTick real = FlowFixture.tick("EQ1", "102", 51);
    real.setEventTs(FlowFixture.NOW.plusMillis(900));
    flow.ticks.pipeInput("EQ1", real, FlowFixture.NOW.plusSeconds(1));
    settle();
    assertThat(flow.deadTicks.isEmpty()).as("the real tick is in order").isTrue();
    PriceTick latest = flow.pricesOut.readKeyValuesToMap().get("EQ1");
    assertThat(latest.getPrice()).isEqualTo(FlowFixture.money("102"));
  }

  @Test
  void aRealTickObservedBeforeTheBrokerTookTheOneStampedAheadIsStillInOrder() {
    flow.equity("EQ2", "ACTIVE");
    PriceTick opening = FlowFixture.tick("EQ2", "50", 1);
    opening.setEventTs(FlowFixture.NOW.minusSeconds(2));
    flow.latest(opening);
    flow.driver.advanceWallClockTime(Duration.ofSeconds(1)); // the broker's clock: NOW + 1 s
    PriceTick ahead = FlowFixture.tick("EQ2", "50.5", 2);
    ahead.setEventTs(FlowFixture.NOW.plusSeconds(60));
    flow.ticks.pipeInput("EQ2", ahead, FlowFixture.NOW.plusSeconds(1));
    // the feed observed this one at NOW + 0.5 s: after its last real tick, before the broker's
    // clock
    // reached the one stamped ahead
    PriceTick real = FlowFixture.tick("EQ2", "50.6", 3);
    real.setEventTs(FlowFixture.NOW.plusMillis(500));
    flow.ticks.pipeInput("EQ2", real, FlowFixture.NOW.plusSeconds(1));
    settle();
    assertThat(flow.deadTicks.isEmpty())
        .as("in order: the claim of the future orders nothing")
        .isTrue();
    assertThat(flow.pricesOut.readKeyValuesToMap().get("EQ2").getPrice())
        .isEqualTo(FlowFixture.money("50.6"));
  }

  @Test
  void theAcceptedTickCarriesTheTimeTheBrokerTookItAt() {
    PriceTick ahead = FlowFixture.tick("EQ1", "101", 50);
    ahead.setEventTs(FlowFixture.NOW.plusSeconds(59));
    flow.ticks.pipeInput("EQ1", ahead, FlowFixture.NOW);
    settle();
    assertThat(flow.pricesOut.readValue().getEventTs()).isEqualTo(FlowFixture.NOW);
  }
}
