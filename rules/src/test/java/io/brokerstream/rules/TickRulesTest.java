package io.brokerstream.rules;

import static org.assertj.core.api.Assertions.assertThat;

import io.brokerstream.avro.Instrument;
import io.brokerstream.avro.PriceTick;
import java.math.BigDecimal;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Every fault of a tick, at its edge; the first failed check is the fault. */
class TickRulesTest {
  private static final Instant NOW = Instant.parse("2026-11-25T12:00:00Z");
  private final TickRules rules = new TickRules(io.brokerstream.money.Micros.parse("1000000"));

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

  private static PriceTick tick(String price, long aheadMs) {
    return PriceTick.newBuilder()
        .setInstrumentId("EQ1")
        .setPrice(new BigDecimal(price).setScale(6))
        .setEventTs(NOW.plusMillis(aheadMs))
        .setSequence(1)
        .build();
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '#',
      nullValues = "NULL",
      value = {
        "a good tick                 # EQUITY # ACTIVE   # 100            # 0      # -1000 # NULL",
        "unknown                     # NONE   # ACTIVE   # 100            # 0      # -1000 # UNKNOWN_INSTRUMENT",
        "an option                   # OPTION # ACTIVE   # 100            # 0      # -1000 # NOT_AN_EQUITY",
        "delisted                    # EQUITY # DELISTED # 100            # 0      # -1000 # INSTRUMENT_INACTIVE",
        "zero                        # EQUITY # ACTIVE   # 0              # 0      # -1000 # NON_POSITIVE_PRICE",
        "above the bound             # EQUITY # ACTIVE   # 1000000.000001 # 0      # NULL  # PRICE_TOO_HIGH",
        "at the bound                # EQUITY # ACTIVE   # 1000000        # 0      # NULL  # NULL",
        "a hundred times up is a price in doubt, not a bad record # EQUITY # ACTIVE # 10000 # 0 # -1000 # NULL",
        "a minute ahead is allowed   # EQUITY # ACTIVE   # 100            # 60000  # -1000 # NULL",
        "further ahead               # EQUITY # ACTIVE   # 100            # 60001  # -1000 # FUTURE_EVENT_TIME",
        "as old as the last accepted # EQUITY # ACTIVE   # 100            # -1000  # -1000 # NULL",
        "older than the last accepted# EQUITY # ACTIVE   # 100            # -1001  # -1000 # OUT_OF_ORDER",
      })
  void faults(
      String what,
      String type,
      String status,
      String price,
      long aheadMs,
      Long lastAheadMs,
      String fault) {
    TickRules.Rejection no =
        rules.check(
            tick(price, aheadMs),
            type.equals("NONE") ? null : instrument(type, status),
            lastAheadMs == null ? null : NOW.plusMillis(lastAheadMs),
            NOW);
    assertThat(no == null ? null : no.fault().name()).as(what).isEqualTo(fault);
  }

  @Test
  void aTickStampedAheadIsTakenAtTheBrokersTimeSoTheRealTicksAfterItAreInOrder() {
    Instant ahead = TickRules.takenAt(tick("100", 59_000), NOW);
    assertThat(ahead).isEqualTo(NOW);
    // the feed's next real tick, 10 ms later and stamped 5 ms before it arrived
    Instant later = NOW.plusMillis(10);
    PriceTick real =
        PriceTick.newBuilder(tick("100.5", 5)).setEventTs(later.minusMillis(5)).build();
    assertThat(rules.check(real, instrument("EQUITY", "ACTIVE"), ahead, later)).isNull();
    assertThat(TickRules.takenAt(real, later)).isEqualTo(later.minusMillis(5));
  }
}
