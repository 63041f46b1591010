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
 * <p>The broker's own pre-trade controls (the market access rule's): the member's trading state
 * (HALTED: nothing trades; REDUCING: only fills that reduce), its limits per order (quantity,
 * notional), an erroneous limit far from the price, a halted or stale price, stale marks.
 *
 * <p>Buying power is {@link BuyingPower}'s rule: a fill whose opening leg adds exposure must leave
 * the value committed at cost, with what working orders reserve, within the member's buying power
 * after the P&L the fill itself realizes; a fill that only reduces or closes is always allowed.
 */
public final class OrderDecider {
  private final OptionPricer pricer;
  private final DecisionLimits limits;
  private final long maxPrice;
  private final long maxQuantity;

  public OrderDecider(OptionPricer pricer, long maxPriceMicros, long maxQuantity) {
    this(pricer, DecisionLimits.basic(maxPriceMicros, maxQuantity));
  }

  public OrderDecider(OptionPricer pricer, DecisionLimits limits) {
    this.pricer = pricer;
    this.limits = limits;
    this.maxPrice = limits.maxPrice();
    this.maxQuantity = limits.maxQuantity();
  }

  public DecisionLimits limits() {
    return limits;
  }

  public Decision decide(
      Order order,
      String memberKey,
      Instant received,
      ReferenceData ref,
      PositionState position,
      RiskState risk) {
    return decide(order, memberKey, received, ref, position, risk, null, 0, false);
  }

  /**
   * The same decision with {@code reserved} of the member's buying power held for its other working
   * orders, at a price the broker already has instead of the latest one when {@code atPrice} is set
   * (a working order's level, when checking whether it may rest).
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
    return decide(order, memberKey, received, ref, position, risk, atPrice, reserved, false);
  }

  /**
   * A working order that a tick crossed, decided at the crossing tick's price and time: that price
   * was accepted when it crossed, so neither a halt announced since nor the age of the latest price
   * refuses it; everything else is checked again.
   */
  public Decision decideTriggered(
      Order order,
      String memberKey,
      Instant triggered,
      ReferenceData ref,
      PositionState position,
      RiskState risk,
      long crossingPrice,
      long reserved) {
    return decide(order, memberKey, triggered, ref, position, risk, crossingPrice, reserved, true);
  }

  private Decision decide(
      Order order,
      String memberKey,
      Instant received,
      ReferenceData ref,
      PositionState position,
      RiskState risk,
      Long atPrice,
      long reserved,
      boolean triggered) {
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
    String tradingState = member.getTradingState() == null ? "ACTIVE" : member.getTradingState();
    if (!"ACTIVE".equals(tradingState) && !"REDUCING".equals(tradingState)) {
      // HALTED, and any state this code does not know, trades nothing
      return reject(
          ReasonCode.MEMBER_HALTED,
          "member " + member.getMemberId() + " is halted by the broker: no order may trade");
    }
    if (member.getMaxOrderQuantity() != null && quantity > member.getMaxOrderQuantity()) {
      return reject(
          ReasonCode.ORDER_TOO_LARGE,
          "quantity "
              + quantity
              + " is above member "
              + member.getMemberId()
              + "'s limit of "
              + member.getMaxOrderQuantity()
              + " per order");
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
    if (!triggered) {
      String halt = ref.halt(underlying);
      if (halt != null) {
        return reject(
            ReasonCode.INSTRUMENT_HALTED,
            (option ? instrument.getInstrumentId() + " is halted with its underlying: " : "")
                + underlying
                + " is halted: "
                + halt);
      }
    }
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
    double band = limits.limitBandFactor();
    if (limit != null
        && !option
        && atPrice == null
        && band > 0
        && (limit > fill * band || limit * band < fill)) {
      // a limit this far from the market is a slip of the finger, not an intention (the market
      // access rule's erroneous-order control): a buy there would fill at once at the market, a
      // sell far below it too, and one on the far side would rest for nothing. Not for options: a
      // model value near 0 (far out of the money) makes any ratio band refuse sensible limits.
      return reject(
          ReasonCode.PRICE_OUT_OF_BAND,
          "limit "
              + Micros.format(limit)
              + " is more than "
              + band
              + "x away from the price "
              + Micros.format(fill));
    }
    if (limit != null && (buy ? fill > limit : fill < limit)) {
      return reject(
          ReasonCode.LIMIT_NOT_MET,
          (buy ? "buy" : "sell")
              + " limit "
              + Micros.format(limit)
              + ", price "
              + Micros.format(fill));
    }

    if (!triggered && atPrice == null) {
      // it would fill now at the latest price: not at one the feed left behind long ago (an order
      // whose limit that price does not meet may still rest, and fills at a later tick's)
      Long priced = ref.priceTimeMs(underlying);
      long age = priced == null ? 0 : received.toEpochMilli() - priced;
      if (limits.maxPriceAgeMs() > 0 && age > limits.maxPriceAgeMs()) {
        return reject(
            ReasonCode.STALE_PRICE,
            "the latest price of "
                + underlying
                + " is "
                + age / 1000
                + " s old, more than the "
                + limits.maxPriceAgeMs() / 1000
                + " s an order may fill at");
      }
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
      if (member.getMaxOrderNotional() != null) {
        long notional = Math.multiplyExact(Micros.times(fill, quantity), multiplier);
        long most = Micros.of(member.getMaxOrderNotional());
        if (notional > most) {
          return reject(
              ReasonCode.ORDER_TOO_LARGE,
              "the order is worth "
                  + Micros.format(notional)
                  + ", above member "
                  + member.getMemberId()
                  + "'s limit of "
                  + Micros.format(most)
                  + " per order");
        }
      }
      PositionMath.Trade trade = PositionMath.apply(position, signed, fill, multiplier);
      long committed =
          Math.addExact(
              Math.subtractExact(risk.committed(), PositionMath.exposure(position, multiplier)),
              PositionMath.exposure(trade.after(), multiplier));
      long realized = Math.addExact(risk.realized(), trade.realized());
      boolean adds = PositionMath.addsExposure(position.quantity(), signed);
      if (adds && "REDUCING".equals(tradingState)) {
        return reject(
            ReasonCode.REDUCE_ONLY,
            "member "
                + member.getMemberId()
                + " may only reduce or close positions; this fill would add exposure");
      }
      if (adds) {
        MemberMarks marks = ref.marks(member.getMemberId());
        // whether positions are open is the member's own books' word, not the (maybe stale) marks'
        if (marks != null
            && (marks.positions() > 0 || risk.committed() > 0)
            && limits.maxMarksAgeMs() > 0
            && received.toEpochMilli() - marks.computedMs() > limits.maxMarksAgeMs()) {
          return reject(
              ReasonCode.STALE_MARKS,
              "the marks of member "
                  + member.getMemberId()
                  + "'s open positions are "
                  + (received.toEpochMilli() - marks.computedMs()) / 1000
                  + " s old, more than the "
                  + limits.maxMarksAgeMs() / 1000
                  + " s its margin may rest on");
        }
        BuyingPower power =
            new BuyingPower(
                    ref.depositedCash(member.getMemberId()),
                    Micros.of(member.getCreditLimit()),
                    risk.realized(),
                    marks == null ? 0 : marks.unrealizedLoss())
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
                      : "")
                  + (power.unrealizedLoss() != 0
                      ? " (with " + Micros.format(power.unrealizedLoss()) + " lost at the marks)"
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
