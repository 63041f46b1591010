package io.brokerstream.streams.topology;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ExpiryChecksTest {
  // New York closes 21:00 UTC in November, London 16:30 UTC, any other exchange 17:00 UTC
  private static final ExpiryChecks CHECKS =
      new ExpiryChecks(
          new MarketCalendar(
              Map.of("XNYS", "16:00@America/New_York", "XLON", "16:30@Europe/London"), "17:00@UTC"),
          1_000,
          10_000);

  @ParameterizedTest(name = "at {0}, earliest stored {1}: next check in {2} ms")
  @CsvSource({
    // nothing stored, the next close hours away: an idle task looks every max ms
    "2026-11-20T15:00:00Z, , 10000",
    // nothing stored, London closes in 3 s: the check is at its close
    "2026-11-20T16:29:57Z, , 3000",
    // a close 0.5 s away: no sooner than min
    "2026-11-20T16:29:59.500Z, , 1000",
    // a stored expiry 4 s away, before any close
    "2026-11-20T15:00:00Z, 2026-11-20T15:00:04Z, 4000",
    // a stored expiry already due (more than one check's worth expired at once, or a late order)
    "2026-11-20T15:00:00Z, 2026-11-20T14:00:00Z, 1000",
    // a stored expiry later than the next close: the close comes first
    "2026-11-20T16:29:58Z, 2026-11-20T21:00:00Z, 2000",
    // Saturday: the next close is Monday's
    "2026-11-21T16:29:58Z, , 10000",
  })
  void theNextCheckIsAtTheSoonestMomentAnythingCanBeDueWithinItsBounds(
      String now, String earliestStored, long expectedMs) {
    long stored = earliestStored == null ? -1 : Instant.parse(earliestStored).toEpochMilli();
    assertThat(CHECKS.delayMs(Instant.parse(now).toEpochMilli(), stored)).isEqualTo(expectedMs);
  }

  @Test
  void boundsOutOfOrderAreRefused() {
    MarketCalendar calendar = new MarketCalendar(Map.of(), "16:00@America/New_York");
    assertThatThrownBy(() -> new ExpiryChecks(calendar, 0, 10))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new ExpiryChecks(calendar, 1_000, 999))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void theNextCloseOfAnyExchangeIsTheSoonestOfTheListedAndTheDefault() {
    MarketCalendar calendar =
        new MarketCalendar(
            Map.of("XNYS", "16:00@America/New_York", "XLON", "16:30@Europe/London"), "17:00@UTC");
    assertThat(calendar.nextAnyClose(Instant.parse("2026-11-20T15:00:00Z")))
        .isEqualTo(Instant.parse("2026-11-20T16:30:00Z")); // London
    assertThat(calendar.nextAnyClose(Instant.parse("2026-11-20T16:30:00Z")))
        .isEqualTo(Instant.parse("2026-11-20T17:00:00Z")); // the default, strictly after
    assertThat(calendar.nextAnyClose(Instant.parse("2026-11-20T20:00:00Z")))
        .isEqualTo(Instant.parse("2026-11-20T21:00:00Z")); // New York
    assertThat(calendar.nextAnyClose(Instant.parse("2026-11-20T21:00:00Z")))
        .isEqualTo(Instant.parse("2026-11-23T16:30:00Z")); // Monday's first
  }
}
