package io.brokerstream.rules;

import io.brokerstream.avro.Instrument;
import io.brokerstream.avro.PriceTick;
import io.brokerstream.money.Micros;
import java.time.Instant;

/**
 * Whether a price tick may price anything: a tick is a claim from a feed, and a broker checks it
 * before an order fills or a position is marked at it. The first failed check is the fault; nothing
 * here has side effects.
 *
 * <ul>
 *   <li>the instrument is a known, active equity (options have no ticks: they are priced from
 *       theirs);
 *   <li>the price is above zero and at most the absurd bound (orders.max-price);
 *   <li>its event time is not ahead of the broker's clock by more than a minute;
 *   <li>its event time is not before that of the last accepted tick of its instrument: a tick
 *       delayed or replayed must not overwrite a newer price, nor trigger working orders at a price
 *       already gone.
 * </ul>
 *
 * <p>A tick that passes may still be in doubt: one far from the last accepted price halts its
 * instrument ({@link PriceBand}); that is not a fault of the record, which is held, not refused.
 */
public final class TickRules {
  public enum Fault {
    UNKNOWN_INSTRUMENT,
    NOT_AN_EQUITY,
    INSTRUMENT_INACTIVE,
    NON_POSITIVE_PRICE,
    PRICE_TOO_HIGH,
    FUTURE_EVENT_TIME,
    OUT_OF_ORDER,
    /** Not a rule of the tick itself: a tick keyed by anything but its own instrument id. */
    KEY_MISMATCH
  }

  public record Rejection(Fault fault, String detail) {}

  static final long MAX_AHEAD_MS = 60_000;

  private final long maxPrice;

  public TickRules(long maxPriceMicros) {
    this.maxPrice = maxPriceMicros;
  }

  /**
   * Null when the tick may be used. {@code lastEventTs} is the event time of the instrument's last
   * accepted (or held) tick, as the broker took it: never later than the broker's clock when it
   * arrived ({@link #takenAt}), so a tick stamped ahead cannot make the ticks after it look old.
   */
  public Rejection check(
      PriceTick tick, Instrument instrument, Instant lastEventTs, Instant received) {
    String id = tick.getInstrumentId();
    if (instrument == null) {
      return new Rejection(Fault.UNKNOWN_INSTRUMENT, "no instrument " + id);
    }
    if (!"EQUITY".equals(instrument.getInstrumentType())) {
      return new Rejection(
          Fault.NOT_AN_EQUITY,
          id
              + " is an "
              + instrument.getInstrumentType()
              + ": only equities tick, options are priced from their underlying");
    }
    if (!"ACTIVE".equals(instrument.getStatus())) {
      return new Rejection(Fault.INSTRUMENT_INACTIVE, id + " is " + instrument.getStatus());
    }
    long price = Micros.of(tick.getPrice());
    if (price <= 0) {
      return new Rejection(Fault.NON_POSITIVE_PRICE, "price " + Micros.format(price) + " of " + id);
    }
    if (price > maxPrice) {
      return new Rejection(
          Fault.PRICE_TOO_HIGH,
          "price " + Micros.format(price) + " of " + id + " above " + Micros.format(maxPrice));
    }
    if (tick.getEventTs().toEpochMilli() > received.toEpochMilli() + MAX_AHEAD_MS) {
      return new Rejection(
          Fault.FUTURE_EVENT_TIME,
          "event time " + tick.getEventTs() + " is ahead of the broker's " + received);
    }
    if (lastEventTs != null && tick.getEventTs().isBefore(lastEventTs)) {
      return new Rejection(
          Fault.OUT_OF_ORDER,
          "event time "
              + tick.getEventTs()
              + " of "
              + id
              + " is before that of its last accepted tick, "
              + lastEventTs);
    }
    return null;
  }

  /**
   * The event time the broker keeps for a tick it took at {@code received}: the tick's own, or the
   * broker's clock if the tick claims a later one (a feed clock ahead by up to {@link
   * #MAX_AHEAD_MS}). What is kept is what later ticks are ordered against and what a price's age is
   * measured from.
   */
  public static Instant takenAt(PriceTick tick, Instant received) {
    return tick.getEventTs().isAfter(received) ? received : tick.getEventTs();
  }
}
