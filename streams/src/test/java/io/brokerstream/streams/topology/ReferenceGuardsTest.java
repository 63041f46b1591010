package io.brokerstream.streams.topology;

import static org.assertj.core.api.Assertions.assertThat;

import io.brokerstream.avro.DeadLetter;
import io.brokerstream.avro.Instrument;
import io.brokerstream.avro.OrderStatus;
import java.time.Duration;
import java.time.LocalDate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Reference data a model cannot use, written around Postgres's checks, is refused with its cause
 * and never reaches a decision or the book: what was there stays.
 */
class ReferenceGuardsTest {
  private final FlowFixture flow =
      new FlowFixture()
          .standard()
          .option("C1", "EQ1", "CALL", "EUROPEAN", "100", LocalDate.parse("2027-11-20"));

  @AfterEach
  void close() {
    flow.close();
  }

  @ParameterizedTest
  @ValueSource(doubles = {Double.NaN, Double.POSITIVE_INFINITY, 0, -0.2, 10.000001})
  void aVolatilityNoModelCanUseIsRefusedAndTheLastGoodOneStays(double sigma) {
    var first = flow.buy("A1", "C1", 1);
    assertThat(first.getStatus()).isEqualTo(OrderStatus.ACCEPTED);
    flow.volatility("EQ1", sigma);

    assertThat(flow.referenceLetters)
        .singleElement()
        .satisfies(
            l -> {
              assertThat(l.getErrorClass()).isEqualTo("INVALID_REFERENCE_DATA");
              assertThat(l.getSourceTopic()).isEqualTo("ref.equity-starts");
              assertThat(l.getMessage()).contains("volatility of EQ1");
            });
    var again = flow.buy("A1", "C1", 1);
    assertThat(again.getStatus()).isEqualTo(OrderStatus.ACCEPTED);
    assertThat(again.getFillPrice())
        .as("priced at the volatility it had")
        .isEqualTo(first.getFillPrice());
    // and the book still prices the options on it when the equity ticks
    flow.feed("EQ1", "101");
    flow.driver.advanceWallClockTime(Duration.ofMillis(200));
    assertThat(flow.deadLetters.isEmpty()).isTrue();
  }

  @Test
  void aMultiplierOrStrikeOutOfBoundsIsRefused() {
    Instrument c1 =
        Instrument.newBuilder()
            .setInstrumentId("C2")
            .setSymbol("C2")
            .setCurrency("USD")
            .setExchange("XCBO")
            .setName("C2")
            .setInstrumentType("OPTION")
            .setStatus("ACTIVE")
            .setUnderlyingId("EQ1")
            .setUnderlyingSymbol("EQ1")
            .setMaturity(LocalDate.parse("2027-11-20"))
            .setOptionType("CALL")
            .setStrike(FlowFixture.money("100"))
            .setMultiplier(0)
            .setExerciseStyle("EUROPEAN")
            .build();
    flow.instrument(c1);
    flow.instrument(
        Instrument.newBuilder(c1).setMultiplier(100).setStrike(FlowFixture.money("0")).build());
    assertThat(flow.referenceLetters)
        .extracting(DeadLetter::getMessage)
        .satisfiesExactly(
            m -> assertThat(m).contains("multiplier of C2"),
            m -> assertThat(m).contains("strike of C2"));
    assertThat(flow.buy("A1", "C2", 1).getReason())
        .as("never stored: unknown")
        .isEqualTo(io.brokerstream.avro.ReasonCode.UNKNOWN_INSTRUMENT);
  }
}
