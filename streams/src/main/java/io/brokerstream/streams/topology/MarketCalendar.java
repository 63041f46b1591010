package io.brokerstream.streams.topology;

import java.time.DayOfWeek;
import java.time.Instant;
import java.time.LocalTime;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.util.HashMap;
import java.util.Map;

/**
 * When each exchange closes: a DAY order works until the first close of its instrument's exchange
 * after the broker received it. Closes are a local time in the exchange's zone (so daylight saving
 * follows the exchange), Monday to Friday; there is no holiday calendar, so a DAY order placed on a
 * holiday expires at that day's nominal close.
 */
public final class MarketCalendar {
  private record Close(LocalTime time, ZoneId zone) {}

  private final Map<String, Close> closes = new HashMap<>();
  private final Close fallback;

  /**
   * @param closes exchange MIC -> "HH:MM@Zone", e.g. XNYS -> 16:00@America/New_York
   * @param fallback the close of an exchange not listed, same form
   */
  public MarketCalendar(Map<String, String> closes, String fallback) {
    closes.forEach((mic, close) -> this.closes.put(mic, parse(mic, close)));
    this.fallback = parse("(default)", fallback);
  }

  private static Close parse(String mic, String close) {
    String[] parts = close.split("@", 2);
    if (parts.length != 2) {
      throw new IllegalArgumentException(
          "market close of " + mic + ": expected HH:MM@Zone, got '" + close + "'");
    }
    return new Close(LocalTime.parse(parts[0].trim()), ZoneId.of(parts[1].trim()));
  }

  /**
   * The first close of {@code exchange} strictly after {@code after}, a weekday in the exchange's
   * zone.
   */
  public Instant nextClose(String exchange, Instant after) {
    Close close = exchange == null ? fallback : closes.getOrDefault(exchange, fallback);
    ZonedDateTime local = after.atZone(close.zone());
    ZonedDateTime candidate = local.toLocalDate().atTime(close.time()).atZone(close.zone());
    while (!candidate.toInstant().isAfter(after) || weekend(candidate.getDayOfWeek())) {
      candidate = candidate.toLocalDate().plusDays(1).atTime(close.time()).atZone(close.zone());
    }
    return candidate.toInstant();
  }

  /**
   * The first close of any exchange (the listed ones and the default) strictly after {@code after}.
   */
  public Instant nextAnyClose(Instant after) {
    Instant soonest = nextClose(null, after);
    for (String exchange : closes.keySet()) {
      Instant close = nextClose(exchange, after);
      if (close.isBefore(soonest)) {
        soonest = close;
      }
    }
    return soonest;
  }

  private static boolean weekend(DayOfWeek day) {
    return day == DayOfWeek.SATURDAY || day == DayOfWeek.SUNDAY;
  }
}
