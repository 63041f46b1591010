package io.brokerstream.rules;

import io.brokerstream.avro.Instrument;
import io.brokerstream.avro.Member;
import io.brokerstream.avro.Order;
import io.brokerstream.avro.ReasonCode;
import io.brokerstream.avro.Side;
import io.brokerstream.avro.TimeInForce;
import io.brokerstream.money.Micros;
import io.brokerstream.pricing.ExerciseStyle;
import io.brokerstream.pricing.OptionPricer;
import io.brokerstream.pricing.OptionType;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;

/**
 * The broker's decision on one order, in the order a clerk would check it: the order's own values,
 * the account and member, the instrument, the price, the limit, short selling, buying power. The
 * first failed check is the reason; nothing here has side effects.
 *
 * <p>Time is the broker's: when it received the order (its append time in the orders topic) decides
 * expiry and time to maturity, never the client's own timestamp.
 *
 * <p>Buying power is {@link BuyingPower}'s rule: a fill whose opening leg adds exposure must leave
 * the value committed at cost, with what working orders reserve, within the member's buying power
 * after the P&L the fill itself realizes; a fill that only reduces or closes is always allowed.
 */
public final class OrderDecider {
  private final OptionPricer pricer;
  private final long maxPrice;
  private final long maxQuantity;

  public OrderDecider(OptionPricer pricer, long maxPriceMicros, long maxQuantity) {
    this.pricer = pricer;
    this.maxPrice = maxPriceMicros;
    this.maxQuantity = maxQuantity;
  }

  public Decision decide(
      Order order,
      String memberKey,
      Instant received,
      ReferenceData ref,
      PositionState position,
      RiskState risk) {
    return decide(order, memberKey, received, ref, position, risk, null, 0);
  }

  /**
   * The same decision at a price the broker already has instead of the latest one (a crossing
   * tick's for a triggered working order; the limit, when checking whether a working order may
   * rest), with {@code reserved} of the member's buying power held for its other working orders.
   */
  public Decision decide(
      Order order,
      String memberKey,
      Instant received,
      ReferenceData ref,
      PositionState position,
      RiskState risk,
      Long atPrice,
      long reserved) {
    long quantity = order.getQuantity();
    if (quantity <= 0 || quantity > maxQuantity) {
      return reject(
          ReasonCode.INVALID_QUANTITY,
          "quantity must be between 1 and " + maxQuantity + ", got " + quantity);
    }
    Long limit = order.getLimitPrice() == null ? null : Micros.of(order.getLimitPrice());
    if (limit != null && (limit <= 0 || limit > maxPrice)) {
      return reject(
          ReasonCode.INVALID_PRICE,
          "limit price must be above 0 and at most "
              + Micros.format(maxPrice)
              + ", got "
              + Micros.format(limit));
    }
    if (order.getStopPrice() != null) {
      long stop = Micros.of(order.getStopPrice());
      if (stop <= 0 || stop > maxPrice) {
        return reject(
            ReasonCode.INVALID_PRICE,
            "stop price must be above 0 and at most "
                + Micros.format(maxPrice)
                + ", got "
                + Micros.format(stop));
      }
      if (limit != null) {
        return reject(
            ReasonCode.INVALID_PRICE,
            "a stop order becomes a market order when a tick touches its stop:"
                + " send it without a limit price (stop-limit orders are not supported)");
      }
      if (order.getTimeInForce() == TimeInForce.IOC) {
        return reject(
            ReasonCode.INVALID_PRICE,
            "a stop order works until a tick touches its stop:"
                + " time_in_force must be DAY or GTC, not IOC");
      }
    }

    AccountEntry account = ref.account(order.getAccountId());
    if (account == null) {
      return reject(ReasonCode.UNKNOWN_ACCOUNT, "no account " + order.getAccountId());
    }
    if (!account.memberId().equals(memberKey)) {
      return reject(
          ReasonCode.MEMBER_MISMATCH,
          "account "
              + account.accountId()
              + " belongs to member "
              + account.memberId()
              + ", the order came under member "
              + memberKey);
    }
    if (!account.active()) {
      return reject(
          ReasonCode.ACCOUNT_INACTIVE,
          "account " + account.accountId() + " is " + account.status());
    }
    Member member = ref.member(account.memberId());
    if (member == null) {
      return reject(ReasonCode.UNKNOWN_MEMBER, "no member " + account.memberId());
    }
    if (!"ACTIVE".equals(member.getStatus())) {
      return reject(
          ReasonCode.MEMBER_INACTIVE,
          "member " + member.getMemberId() + " is " + member.getStatus());
    }

    Instrument instrument = ref.instrument(order.getInstrumentId());
    if (instrument == null) {
      return reject(ReasonCode.UNKNOWN_INSTRUMENT, "no instrument " + order.getInstrumentId());
    }
    if (!"ACTIVE".equals(instrument.getStatus())) {
      return reject(
          ReasonCode.INSTRUMENT_INACTIVE,
          "instrument " + instrument.getInstrumentId() + " is " + instrument.getStatus());
    }
    boolean option = "OPTION".equals(instrument.getInstrumentType());
    LocalDate tradingDay = received.atZone(ZoneOffset.UTC).toLocalDate();
    if (option && tradingDay.isAfter(instrument.getMaturity())) {
      return reject(
          ReasonCode.OPTION_EXPIRED,
          "option "
              + instrument.getInstrumentId()
              + " expired on "
              + instrument.getMaturity()
              + ", the order reached the broker on "
              + tradingDay);
    }

    String underlying = option ? instrument.getUnderlyingId() : instrument.getInstrumentId();
    long fill;
    if (atPrice != null) {
      fill = atPrice;
    } else {
      Long spot = ref.priceMicros(underlying);
      if (spot == null) {
        return reject(ReasonCode.NO_PRICE, "no price yet for " + underlying);
      }
      Long priced = price(instrument, spot, ref.volatility(underlying), received);
      if (priced == null) {
        return reject(ReasonCode.NO_PRICE, "no volatility for " + underlying);
      }
      fill = priced;
    }
    if (fill <= 0) {
      // An option far out of the money on its last days is worth less than half a micro: at 0 a
      // fill would commit nothing, so buying power would never bound its quantity, and any later
      // mark would be P&L.
      return reject(
          ReasonCode.NO_PRICE,
          "the price of "
              + instrument.getInstrumentId()
              + " rounds to "
              + Micros.format(fill)
              + ": there is no price to trade it at");
    }
    boolean buy = order.getSide() == Side.BUY;
    if (limit != null && (buy ? fill > limit : fill < limit)) {
      return reject(
          ReasonCode.LIMIT_NOT_MET,
          (buy ? "buy" : "sell")
              + " limit "
              + Micros.format(limit)
              + ", price "
              + Micros.format(fill));
    }

    long signed = buy ? quantity : -quantity;
    if (!buy && position.quantity() + signed < 0 && !account.shortAllowed()) {
      return reject(
          ReasonCode.SHORT_NOT_ALLOWED,
          "account "
              + account.accountId()
              + " holds "
              + position.quantity()
              + " and may not sell "
              + quantity
              + " short");
    }

    // An open position trades at the multiplier it was booked with, in the decision as in the
    // member's totals; a flat one at the instrument's.
    int multiplier = position.quantity() != 0 ? position.multiplier() : instrument.getMultiplier();
    try {
      PositionMath.Trade trade = PositionMath.apply(position, signed, fill, multiplier);
      long committed =
          Math.addExact(
              Math.subtractExact(risk.committed(), PositionMath.exposure(position, multiplier)),
              PositionMath.exposure(trade.after(), multiplier));
      long realized = Math.addExact(risk.realized(), trade.realized());
      boolean adds = PositionMath.addsExposure(position.quantity(), signed);
      if (adds) {
        BuyingPower power =
            new BuyingPower(
                    ref.depositedCash(member.getMemberId()),
                    Micros.of(member.getCreditLimit()),
                    risk.realized(),
                    0)
                .afterRealizing(trade.realized());
        if (power.available(committed, reserved) < 0) {
          return reject(
              ReasonCode.INSUFFICIENT_BUYING_POWER,
              "member "
                  + member.getMemberId()
                  + " would commit "
                  + Micros.format(committed)
                  + (reserved > 0
                      ? " with " + Micros.format(reserved) + " reserved for working orders"
                      : "")
                  + " against buying power "
                  + Micros.format(power.total())
                  + (trade.realized() != 0
                      ? " (after the " + Micros.format(trade.realized()) + " this fill realizes)"
                      : ""));
        }
      }
      long cashDelta = -Math.multiplyExact(Micros.times(fill, signed), multiplier);
      return new Decision.Filled(
          fill,
          multiplier,
          underlying,
          trade.after(),
          new RiskState(committed, realized),
          trade.realized(),
          trade.closedQuantity(),
          trade.closedAvgCost(),
          cashDelta,
          adds);
    } catch (ArithmeticException overflow) {
      return reject(
          ReasonCode.INSUFFICIENT_BUYING_POWER, "order value beyond what any account can hold");
    }
  }

  /**
   * What the instrument would fill at now, at broker time {@code at}: its equity's latest price, or
   * an option's model value from it; null when the instrument is unknown or has no price yet.
   */
  public Long marketPrice(String instrumentId, ReferenceData ref, Instant at) {
    Instrument instrument = ref.instrument(instrumentId);
    if (instrument == null) {
      return null;
    }
    Long spot = ref.priceMicros(underlyingOf(instrument));
    return spot == null ? null : priceAt(instrument, spot, ref, at);
  }

  /**
   * What the instrument is worth when its equity is at {@code spot} (null: an option with no
   * volatility).
   */
  public Long priceAt(Instrument instrument, long spot, ReferenceData ref, Instant at) {
    return price(instrument, spot, ref.volatility(underlyingOf(instrument)), at);
  }

  private static String underlyingOf(Instrument instrument) {
    return instrument.getUnderlyingId() == null
        ? instrument.getInstrumentId()
        : instrument.getUnderlyingId();
  }

  /**
   * An instrument's price per unit at its equity's price {@code spot}, at broker time {@code at}:
   * the equity's own price, or an option's model value (null when the equity has no volatility to
   * price it with).
   */
  public Long price(Instrument instrument, long spot, Double sigma, Instant at) {
    if (!"OPTION".equals(instrument.getInstrumentType())) {
      return spot;
    }
    if (sigma == null) {
      return null;
    }
    return Micros.ofModel(
        pricer.price(
            OptionType.of(instrument.getOptionType()),
            ExerciseStyle.valueOf(instrument.getExerciseStyle()),
            Micros.toModel(spot),
            Micros.toModel(Micros.of(instrument.getStrike())),
            pricer.yearsToExpiry(instrument.getMaturity().toEpochDay(), at.toEpochMilli()),
            sigma));
  }

  private static Decision reject(ReasonCode reason, String detail) {
    return new Decision.Rejected(reason, detail);
  }
}
