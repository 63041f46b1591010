package io.brokerstream.streams.topology;

import static org.assertj.core.api.Assertions.assertThat;

import io.brokerstream.avro.DeadLetter;
import io.brokerstream.avro.OrderStatus;
import io.brokerstream.avro.PriceTick;
import java.time.Duration;
import java.time.LocalDate;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Refused ticks are dead-lettered with their fault and never price an order (a price in doubt is
 * not a refused tick: it halts its equity, PriceHaltsTest).
 */
class TickValidationTest {
  private final FlowFixture flow =
      new FlowFixture()
          .standard()
          .equity("OLD", "DELISTED")
          .option("OP", "EQ1", "CALL", "EUROPEAN", "100", LocalDate.parse("2027-11-20"));

  @AfterEach
  void close() {
    flow.close();
  }

  private PriceTick tick(String id, String price) {
    return FlowFixture.tick(id, price, 9);
  }

  private DeadLetter refused(PriceTick tick) {
    flow.ticks.pipeInput(tick.getInstrumentId(), tick);
    flow.driver.advanceWallClockTime(Duration.ofMillis(200));
    assertThat(flow.pricesOut.isEmpty()).as("a refused tick reaches no price").isTrue();
    return flow.deadTicks.readValue();
  }

  @Test
  void eachFaultIsNamed() {
    assertThat(refused(tick("EQ1", "0")).getErrorClass()).isEqualTo("NON_POSITIVE_PRICE");
    assertThat(refused(tick("EQ1", "-5")).getErrorClass()).isEqualTo("NON_POSITIVE_PRICE");
    assertThat(refused(tick("EQ1", "1000000.000001")).getErrorClass()).isEqualTo("PRICE_TOO_HIGH");
    assertThat(refused(tick("NOPE", "10")).getErrorClass()).isEqualTo("UNKNOWN_INSTRUMENT");
    assertThat(refused(tick("OLD", "10")).getErrorClass()).isEqualTo("INSTRUMENT_INACTIVE");
    assertThat(refused(tick("OP", "10")).getErrorClass()).isEqualTo("NOT_AN_EQUITY");
    PriceTick future = tick("EQ1", "101");
    future.setEventTs(FlowFixture.NOW.plusSeconds(3600));
    assertThat(refused(future).getErrorClass()).isEqualTo("FUTURE_EVENT_TIME");
  }

  @Test
  void aDeadLetterSaysWhereTheTickCameFromAndCarriesIt() {
    DeadLetter letter = refused(tick("EQ1", "-1"));
    assertThat(letter.getSourceTopic()).isEqualTo("price-ticks");
    assertThat(letter.getMessage()).contains("-1.000000").contains("EQ1");
    assertThat(flow.serdes.tickCodec().decode(letter.getRecordValue().array()))
        .isEqualTo(tick("EQ1", "-1"));
    assertThat(new String(letter.getRecordKey().array())).isEqualTo("EQ1");
  }

  @Test
  void ordersKeepPricingAtTheLastAcceptedPrice() {
    flow.ticks.pipeInput("EQ1", tick("EQ1", "0"));
    flow.ticks.pipeInput("EQ1", tick("EQ1", "-100"));
    flow.driver.advanceWallClockTime(Duration.ofMillis(200));
    assertThat(flow.deadTicks.readValuesToList()).hasSize(2);
    var result = flow.buy("A1", "EQ1", 1);
    assertThat(result.getStatus()).isEqualTo(OrderStatus.ACCEPTED);
    assertThat(result.getFillPrice()).isEqualTo(FlowFixture.money("100"));
  }

  @Test
  void everyTickIsFoldedOrDeadLettered() {
    flow.equity("EQ2", "ACTIVE");
    List<PriceTick> sent =
        List.of(
            tick("EQ1", "101"),
            tick("EQ2", "5"),
            tick("EQ1", "0"),
            tick("EQ3", "1"),
            tick("EQ1", "102"));
    sent.forEach(t -> flow.ticks.pipeInput(t.getInstrumentId(), t));
    flow.driver.advanceWallClockTime(Duration.ofMillis(200));
    var latest = flow.pricesOut.readKeyValuesToMap();
    assertThat(latest.get("EQ1").getPrice()).isEqualTo(FlowFixture.money("102"));
    assertThat(latest.get("EQ2").getPrice()).isEqualTo(FlowFixture.money("5"));
    assertThat(flow.deadTicks.readValuesToList())
        .extracting(DeadLetter::getErrorClass)
        .containsExactly("NON_POSITIVE_PRICE", "UNKNOWN_INSTRUMENT");
  }

  @Test
  void theFoldKeepsTheLatestTicksInMemory() {
    // only the record cache's flush reads the fold's store: on disk it cost a write per flushed
    // tick
    assertThat(flow.driver.getTimestampedKeyValueStore(StoreNames.LATEST_TICKS).persistent())
        .isFalse();
  }
}
