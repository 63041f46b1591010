package io.brokerstream.streams.topology;

import io.brokerstream.avro.Order;
import io.brokerstream.avro.ReasonCode;
import io.brokerstream.avro.Side;
import io.brokerstream.avro.TimeInForce;
import io.brokerstream.money.Micros;
import io.brokerstream.rules.BuyingPower;
import io.brokerstream.rules.Decision;
import io.brokerstream.rules.OrderDecider;
import io.brokerstream.rules.PositionState;
import io.brokerstream.rules.ReferenceData;
import io.brokerstream.rules.RiskState;
import java.time.Instant;

/**
 * Whether an order arriving (or a working one amended) is decided now or rests, and on what terms.
 * An IOC order is decided now. A DAY or GTC limit order whose limit the price does not meet rests;
 * a DAY or GTC stop order rests until a tick touches its stop, and is decided now (as the market
 * order it becomes) when the price already touches it. Either rests only if it could fill at its
 * level (its limit, or its stop): the decision is run there, so short rules and buying power are
 * checked at placement, and it holds what that fill would take from the member's available buying
 * power ({@link BuyingPower#hold}).
 */
final class Placement {
  sealed interface Outcome {}

  /** Decided now: a fill or a rejection. */
  record Now(Decision decision) implements Outcome {}

  /** It rests at {@code level} (micros; a stop's stop), holding {@code hold} of buying power. */
  record Rests(long level, boolean stop, long hold, String underlyingId) implements Outcome {}

  private final OrderDecider decider;

  Placement(OrderDecider decider) {
    this.decider = decider;
  }

  Outcome place(
      Order order,
      String member,
      Instant at,
      ReferenceData ref,
      PositionState position,
      RiskState risk,
      long reserved) {
    boolean works = order.getTimeInForce() != TimeInForce.IOC;
    if (works && order.getStopPrice() != null) {
      long stop = Micros.of(order.getStopPrice());
      Long now = decider.marketPrice(order.getInstrumentId(), ref, at);
      if (now != null && touched(order.getSide(), now, stop)) {
        return new Now(decider.decide(order, member, at, ref, position, risk, null, reserved));
      }
      return restAt(order, member, at, ref, position, risk, reserved, stop, true);
    }
    Decision decision = decider.decide(order, member, at, ref, position, risk, null, reserved);
    if (works
        && decision instanceof Decision.Rejected r
        && r.reason() == ReasonCode.LIMIT_NOT_MET) {
      return restAt(
          order,
          member,
          at,
          ref,
          position,
          risk,
          reserved,
          Micros.of(order.getLimitPrice()),
          false);
    }
    return new Now(decision);
  }

  private Outcome restAt(
      Order order,
      String member,
      Instant at,
      ReferenceData ref,
      PositionState position,
      RiskState risk,
      long reserved,
      long level,
      boolean stop) {
    Decision atLevel = decider.decide(order, member, at, ref, position, risk, level, reserved);
    if (atLevel instanceof Decision.Filled fill) {
      return new Rests(
          level,
          stop,
          BuyingPower.hold(
              fill.addsExposure(), fill.risk().committed() - risk.committed(), fill.realized()),
          fill.underlyingId());
    }
    return new Now(atLevel);
  }

  /** Whether {@code price} triggers a working order at {@code level}. */
  static boolean crosses(Side side, boolean stop, long price, long level) {
    return stop ? touched(side, price, level) : side == Side.BUY ? price <= level : price >= level;
  }

  /** A buy stop triggers when the price rises to its stop, a sell stop when it falls to it. */
  private static boolean touched(Side side, long price, long stop) {
    return side == Side.BUY ? price >= stop : price <= stop;
  }
}
