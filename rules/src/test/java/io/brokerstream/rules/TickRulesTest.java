package io.brokerstream.rules;

import static org.assertj.core.api.Assertions.assertThat;

import io.brokerstream.avro.Instrument;
import io.brokerstream.avro.PriceTick;
import io.brokerstream.money.Micros;
import java.math.BigDecimal;
import java.time.Instant;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Every fault of a tick, at its edge; the first failed check is the fault. */
class TickRulesTest {
  private static final Instant NOW = Instant.parse("2026-11-25T12:00:00Z");
  private final TickRules rules = new TickRules(Micros.parse("1000000"), 10);

  private static Instrument instrument(String type, String status) {
    return Instrument.newBuilder()
        .setInstrumentId("EQ1")
        .setSymbol("EQ1")
        .setCurrency("USD")
        .setExchange("XNYS")
        .setName("EQ1")
        .setInstrumentType(type)
        .setStatus(status)
        .setMultiplier(1)
        .build();
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '#',
      nullValues = "NULL",
      value = {
        "a good tick # EQUITY # ACTIVE # 100 # 0 # 100 # -1000 # NULL",
        "unknown # NONE # ACTIVE # 100 # 0 # 100 # -1000 # UNKNOWN_INSTRUMENT",
        "an option # OPTION # ACTIVE # 100 # 0 # 100 # -1000 # NOT_AN_EQUITY",
        "delisted # EQUITY # DELISTED # 100 # 0 # 100 # -1000 # INSTRUMENT_INACTIVE",
        "zero # EQUITY # ACTIVE # 0 # 0 # 100 # -1000 # NON_POSITIVE_PRICE",
        "above the bound # EQUITY # ACTIVE # 1000000.000001 # 0 # NULL # NULL # PRICE_TOO_HIGH",
        "at the bound # EQUITY # ACTIVE # 1000000 # 0 # NULL # NULL # NULL",
        "ten times up is allowed # EQUITY # ACTIVE # 1000 # 0 # 100 # -1000 # NULL",
        "past ten times up # EQUITY # ACTIVE # 1000.000001 # 0 # 100 # -1000 # PRICE_JUMP",
        "past ten times down # EQUITY # ACTIVE # 9.999999 # 0 # 100 # -1000 # PRICE_JUMP",
        "a minute ahead is allowed # EQUITY # ACTIVE # 100 # 60000 # 100 # -1000 # NULL",
        "further ahead # EQUITY # ACTIVE # 100 # 60001 # 100 # -1000 # FUTURE_EVENT_TIME",
        "as old as the last accepted # EQUITY # ACTIVE # 100 # -1000 # 100 # -1000 # NULL",
        "older than the last accepted # EQUITY # ACTIVE # 100 # -1001 # 100 # -1000 # OUT_OF_ORDER",
      })
  void faults(
      String what,
      String type,
      String status,
      String price,
      long aheadMs,
      String last,
      Long lastAheadMs,
      String fault) {
    PriceTick tick =
        PriceTick.newBuilder()
            .setInstrumentId("EQ1")
            .setPrice(new BigDecimal(price).setScale(6))
            .setEventTs(NOW.plusMillis(aheadMs))
            .setSequence(1)
            .build();
    TickRules.Rejection no =
        rules.check(
            tick,
            type.equals("NONE") ? null : instrument(type, status),
            last == null ? null : Micros.parse(last),
            lastAheadMs == null ? null : NOW.plusMillis(lastAheadMs),
            NOW);
    assertThat(no == null ? null : no.fault().name()).as(what).isEqualTo(fault);
  }
}
