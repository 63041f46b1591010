package io.brokerstream.streams.topology;

import static org.assertj.core.api.Assertions.assertThat;

import io.brokerstream.avro.Order;
import io.brokerstream.avro.OrderAction;
import io.brokerstream.avro.OrderCommand;
import io.brokerstream.avro.OrderResult;
import io.brokerstream.avro.OrderStatus;
import io.brokerstream.avro.Side;
import io.brokerstream.avro.TimeInForce;
import io.brokerstream.streams.state.OpenOrder;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Random sequences of what a member and a feed can send (market and limit orders, working orders
 * resting and crossed, amends, cancels, ticks up and down, flips and closes) against a member with
 * little buying power, checked after every step against a model of the books of its own: exact cost
 * bases in BigDecimal, folded from the results alone.
 *
 * <p>The invariants: the flow's committed value and realized P&L are the model's; and after any
 * fill whose opening leg added exposure, committed + what the other working orders reserve never
 * exceeds the buying power left (deposits + realized, no credit here).
 */
class RiskPropertyTest {
  private static final BigDecimal DEPOSIT = new BigDecimal("10000");
  private static final String[] EQUITIES = {"EQ1", "EQ2"};

  /** The model's position: quantity and the exact cost of its open units. */
  private record Held(long quantity, BigDecimal cost) {}

  @ParameterizedTest(name = "seed {0}")
  @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8})
  void noFillThatAddsExposureLeavesCommittedAndReservedBeyondBuyingPower(long seed) {
    Random rng = new Random(seed);
    try (FlowFixture flow = new FlowFixture()) {
      flow.member("M9", "ACTIVE", "0")
          .account("A9", "M9", "ACTIVE", DEPOSIT.toPlainString(), true)
          .equity("EQ1", "ACTIVE")
          .equity("EQ2", "ACTIVE")
          .volatility("EQ1", 0.2)
          .volatility("EQ2", 0.2);
      Map<String, BigDecimal> price = new HashMap<>(Map.of("EQ1", bd("100"), "EQ2", bd("40")));
      price.forEach((e, p) -> flow.price(e, p.toPlainString()));
      Map<String, Held> model = new HashMap<>();
      BigDecimal realized = BigDecimal.ZERO;
      List<String> working = new ArrayList<>();
      int exposureFills = 0;
      Instant t = FlowFixture.NOW;
      for (int step = 0; step < 400; step++) {
        t = t.plusMillis(1);
        String equity = EQUITIES[rng.nextInt(EQUITIES.length)];
        int what = rng.nextInt(10);
        if (what < 3) {
          // the feed moves the price by up to 40 %
          BigDecimal p =
              price
                  .get(equity)
                  .multiply(BigDecimal.valueOf(0.6 + rng.nextDouble() * 0.8))
                  .setScale(2, RoundingMode.HALF_EVEN);
          price.put(equity, p);
          flow.feed(equity, p.toPlainString());
        } else if (what == 5 && model.containsKey(equity) && model.get(equity).quantity() != 0) {
          // a flip: the whole position and more, the other way (after a move, at a gain or a loss)
          long held = model.get(equity).quantity();
          Order o =
              flow.order(
                  "A9",
                  equity,
                  held > 0 ? Side.SELL : Side.BUY,
                  Math.abs(held) + 1 + rng.nextInt((int) Math.min(Math.abs(held) * 2, 400)),
                  null);
          flow.orders.pipeInput("M9", o, t);
        } else if (what < 7) {
          Order o =
              flow.order(
                  "A9",
                  equity,
                  rng.nextBoolean() ? Side.BUY : Side.SELL,
                  1 + rng.nextInt(rng.nextInt(10) == 0 ? 400 : 60),
                  null);
          if (what == 6 && working.size() < 4) {
            // a working limit a little away from the price
            BigDecimal off = BigDecimal.valueOf(0.8 + rng.nextDouble() * 0.4);
            o.setLimitPrice(price.get(equity).multiply(off).setScale(6, RoundingMode.HALF_EVEN));
            o.setTimeInForce(TimeInForce.GTC);
            working.add(o.getOrderId());
          }
          flow.orders.pipeInput("M9", o, t);
        } else if (!working.isEmpty()) {
          String id = working.get(rng.nextInt(working.size()));
          OrderCommand.Builder c =
              OrderCommand.newBuilder().setOrderId(id).setClientTs(FlowFixture.NOW);
          if (what == 7) {
            c.setAction(OrderAction.CANCEL);
          } else {
            c.setAction(OrderAction.AMEND).setQuantity((long) (1 + rng.nextInt(120)));
          }
          flow.commands.pipeInput("M9", c.build(), t);
        }
        flow.driver.advanceWallClockTime(java.time.Duration.ofMillis(150));

        List<OrderResult> results = flow.results.readValuesToList();
        for (OrderResult r : results) {
          working.remove(r.getOrderId());
          if (r.getStatus() != OrderStatus.ACCEPTED) {
            continue;
          }
          String key = r.getInstrumentId();
          Held before = model.getOrDefault(key, new Held(0, BigDecimal.ZERO));
          long signed = r.getSide() == Side.BUY ? r.getQuantity() : -r.getQuantity();
          boolean adds =
              before.quantity() == 0
                  || Long.signum(before.quantity()) == Long.signum(signed)
                  || Math.abs(signed) > Math.abs(before.quantity());
          BigDecimal fill = r.getFillPrice();
          Held after;
          BigDecimal gain = BigDecimal.ZERO;
          if (before.quantity() == 0 || Long.signum(before.quantity()) == Long.signum(signed)) {
            after =
                new Held(
                    before.quantity() + signed,
                    before.cost().add(fill.multiply(BigDecimal.valueOf(Math.abs(signed)))));
          } else {
            long open = Math.abs(before.quantity());
            long closed = Math.min(open, Math.abs(signed));
            BigDecimal share =
                closed == open
                    ? before.cost()
                    : before
                        .cost()
                        .multiply(BigDecimal.valueOf(closed))
                        .divide(BigDecimal.valueOf(open), 6, RoundingMode.HALF_EVEN);
            BigDecimal proceeds = fill.multiply(BigDecimal.valueOf(closed));
            gain = before.quantity() > 0 ? proceeds.subtract(share) : share.subtract(proceeds);
            long q = before.quantity() + signed;
            after =
                new Held(
                    q,
                    q == 0
                        ? BigDecimal.ZERO
                        : Long.signum(q) == Long.signum(before.quantity())
                            ? before.cost().subtract(share)
                            : fill.multiply(BigDecimal.valueOf(Math.abs(q))));
          }
          assertThat(r.getRealizedPnl())
              .as("seed %d step %d: realized", seed, step)
              .isEqualByComparingTo(gain);
          realized = realized.add(gain);
          model.put(key, after);
          if (adds && results.size() == 1) {
            // one fill this step: what the others reserve now is what they reserved at its decision
            exposureFills++;
            BigDecimal committed = committed(model);
            BigDecimal reserved = micros(reserved(flow));
            assertThat(committed.add(reserved))
                .as("seed %d step %d: committed + reserved after %s", seed, step, r)
                .isLessThanOrEqualTo(DEPOSIT.add(realized));
          }
        }
        io.brokerstream.rules.RiskState risk =
            flow.risk("M9") == null ? io.brokerstream.rules.RiskState.NONE : flow.risk("M9");
        assertThat(micros(risk.committed()))
            .as("seed %d step %d: committed", seed, step)
            .isEqualByComparingTo(committed(model));
        assertThat(micros(risk.realized()))
            .as("seed %d step %d: realized", seed, step)
            .isEqualByComparingTo(realized);
        working.removeIf(id -> working(flow, id) == null);
      }
      assertThat(exposureFills).as("the sequence tried the rule").isGreaterThan(20);
    }
  }

  private static BigDecimal committed(Map<String, Held> model) {
    return model.values().stream().map(Held::cost).reduce(BigDecimal.ZERO, BigDecimal::add);
  }

  private static long reserved(FlowFixture flow) {
    Long r = flow.driver.<String, Long>getKeyValueStore(StoreNames.MEMBER_RESERVED).get("M9");
    return r == null ? 0 : r;
  }

  private static OpenOrder working(FlowFixture flow, String orderId) {
    return flow.driver
        .<String, OpenOrder>getKeyValueStore(StoreNames.OPEN_ORDERS)
        .get("M9|" + orderId);
  }

  private static BigDecimal bd(String s) {
    return new BigDecimal(s);
  }

  private static BigDecimal micros(long m) {
    return BigDecimal.valueOf(m, 6);
  }
}
