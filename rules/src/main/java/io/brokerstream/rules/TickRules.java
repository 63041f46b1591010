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
 *   <li>it is within a factor of the last accepted price (a decimal slip, 100x, is refused; a
 *       genuine crash of 90 % in one tick passes at the default factor of 10);
 *   <li>its event time is not ahead of the broker's clock by more than a minute;
 *   <li>its event time is not before that of the last accepted tick of its instrument: a tick
 *       delayed or replayed must not overwrite a newer price, nor trigger working orders at a price
 *       already gone.
 * </ul>
 */
public final class TickRules {
  public enum Fault {
    UNKNOWN_INSTRUMENT,
    NOT_AN_EQUITY,
    INSTRUMENT_INACTIVE,
    NON_POSITIVE_PRICE,
    PRICE_TOO_HIGH,
    PRICE_JUMP,
    FUTURE_EVENT_TIME,
    OUT_OF_ORDER,
    /** Not a rule of the tick itself: a tick keyed by anything but its own instrument id. */
    KEY_MISMATCH
  }

  public record Rejection(Fault fault, String detail) {}

  static final long MAX_AHEAD_MS = 60_000;

  private final long maxPrice;
  private final double maxJump;

  public TickRules(long maxPriceMicros, double maxJumpFactor) {
    if (!(maxJumpFactor > 1)) {
      throw new IllegalArgumentException("the jump factor must be above 1, got " + maxJumpFactor);
    }
    this.maxPrice = maxPriceMicros;
    this.maxJump = maxJumpFactor;
  }

  /** Null when the tick may be used; with no event time known for the last accepted price. */
  public Rejection check(PriceTick tick, Instrument instrument, Long lastPrice, Instant received) {
    return check(tick, instrument, lastPrice, null, received);
  }

  /**
   * Null when the tick may be used. {@code lastPrice} and {@code lastEventTs} are the last accepted
   * tick's of the instrument (null when none is known).
   */
  public Rejection check(
      PriceTick tick,
      Instrument instrument,
      Long lastPrice,
      Instant lastEventTs,
      Instant received) {
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
    if (lastPrice != null
        && lastPrice > 0
        && (price > lastPrice * maxJump || price * maxJump < lastPrice)) {
      return new Rejection(
          Fault.PRICE_JUMP,
          "price "
              + Micros.format(price)
              + " of "
              + id
              + " is more than "
              + maxJump
              + "x away from the last accepted "
              + Micros.format(lastPrice));
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
}
