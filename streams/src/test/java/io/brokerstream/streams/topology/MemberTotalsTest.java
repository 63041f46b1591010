package io.brokerstream.streams.topology;

import static org.assertj.core.api.Assertions.assertThat;

import io.brokerstream.avro.Order;
import io.brokerstream.avro.OrderStatus;
import io.brokerstream.avro.Position;
import io.brokerstream.avro.Side;
import io.brokerstream.avro.TimeInForce;
import io.brokerstream.rules.RiskState;
import io.brokerstream.streams.Topics;
import io.brokerstream.streams.state.OpenOrder;
import java.time.LocalDate;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.streams.state.KeyValueStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A member's risk and reservations are sums over its task's positions and open orders: what the
 * decisions kept up to date one difference at a time equals what a starting task sums again.
 */
class MemberTotalsTest {
  private static final LocalDate MATURITY = LocalDate.parse("2027-11-20");

  private final FlowFixture flow =
      new FlowFixture()
          .standard()
          .member("M2", "ACTIVE", "50000")
          .account("B1", "M2", "ACTIVE", "100000", true)
          .equity("EQ2", "ACTIVE")
          .volatility("EQ2", 0.3)
          .price("EQ2", "37.125")
          .option("C1", "EQ1", "CALL", "EUROPEAN", "95", MATURITY)
          .option("P1", "EQ2", "PUT", "AMERICAN", "40", MATURITY);

  @AfterEach
  void close() {
    flow.close();
  }

  /**
   * member, account, instrument, side, quantity, limit (null: market), GTC; or a new price:
   * "PRICE", equity, price.
   */
  private static final Object[][] ORDERS = {
    {"M1", "A1", "EQ1", Side.BUY, 10L, null, false},
    {"PRICE", "EQ1", "103.25"},
    {"M1", "A1", "EQ1", Side.BUY, 7L, "104.5", false}, // fills: the price meets the limit
    {"PRICE", "EQ1", "98.000001"},
    {"M1", "A1", "EQ1", Side.SELL, 25L, null, false}, // closes 17 at a loss and goes 8 short
    {"M1", "A2", "EQ1", Side.BUY, 3L, null, false},
    {"M1", "A2", "C1", Side.BUY, 4L, null, false}, // an option: multiplier 100
    {"PRICE", "EQ1", "101"},
    {"M1", "A2", "C1", Side.SELL, 1L, null, false},
    {"M1", "A1", "EQ2", Side.BUY, 33L, null, false},
    {"M1", "A1", "EQ1", Side.BUY, 5L, "90", true}, // rests, holds nothing: it covers a short
    {"M1", "A1", "EQ2", Side.BUY, 2L, "30", true}, // rests, holds what it would commit
    {"M1", "A2", "EQ1", Side.BUY, 1_000_000L, null, false}, // refused: buying power
    {"M2", "B1", "EQ2", Side.SELL, 11L, null, false}, // short
    {"M2", "B1", "P1", Side.BUY, 2L, null, false},
    {"PRICE", "EQ2", "36"},
    {"M2", "B1", "EQ2", Side.BUY, 11L, null, false}, // flat again, with a gain kept
    {"M2", "B1", "EQ2", Side.BUY, 1L, "20", true},
  };

  private void placeAll() {
    long at = 1;
    for (Object[] row : ORDERS) {
      if (row[0].equals("PRICE")) {
        flow.price((String) row[1], (String) row[2]);
        continue;
      }
      Order o =
          flow.order(
              (String) row[1], (String) row[2], (Side) row[3], (Long) row[4], (String) row[5]);
      if ((Boolean) row[6]) {
        o.setTimeInForce(TimeInForce.GTC);
      }
      flow.orders.pipeInput((String) row[0], o, FlowFixture.NOW.plusMillis(at++));
    }
  }

  private KeyValueStore<String, RiskState> risk() {
    return flow.driver.getKeyValueStore(StoreNames.MEMBER_RISK);
  }

  private KeyValueStore<String, Long> reserved() {
    return flow.driver.getKeyValueStore(StoreNames.MEMBER_RESERVED);
  }

  private static <V> Map<String, V> contents(KeyValueStore<String, V> store) {
    Map<String, V> out = new HashMap<>();
    try (var it = store.all()) {
      it.forEachRemaining(kv -> out.put(kv.key, kv.value));
    }
    return out;
  }

  private MemberTotals.Rebuilt rebuild() {
    return MemberTotals.rebuild(
        flow.driver.<String, Position>getKeyValueStore(StoreNames.POSITIONS),
        flow.driver.<String, OpenOrder>getKeyValueStore(StoreNames.OPEN_ORDERS),
        risk(),
        reserved());
  }

  @Test
  void theTotalsSummedAtAStartAreTheOnesTheDecisionsKept() {
    placeAll();
    var results = flow.results.readValuesToList();
    assertThat(results).extracting(r -> r.getStatus()).contains(OrderStatus.REJECTED);
    assertThat(results).filteredOn(r -> r.getStatus() == OrderStatus.ACCEPTED).hasSize(10);
    Map<String, RiskState> kept = contents(risk());
    Map<String, Long> held = contents(reserved());
    assertThat(kept.keySet()).containsExactlyInAnyOrder("M1", "M2");
    assertThat(kept.get("M1").realized()).isNotZero();
    assertThat(kept.get("M2").realized()).isNotZero();
    assertThat(held).containsOnlyKeys("M1", "M2").doesNotContainValue(0L);

    // What a task's state holds when it starts: stale or lost totals, e.g. a member whose first
    // fill was in an aborted transaction.
    risk().put("GHOST", new RiskState(1, 2));
    risk().put("M1", new RiskState(0, 0));
    risk().delete("M2");
    reserved().put("GHOST", 5L);
    reserved().delete("M1");

    MemberTotals.Rebuilt rebuilt = rebuild();

    assertThat(contents(risk())).isEqualTo(kept);
    assertThat(contents(reserved())).isEqualTo(held);
    assertThat(rebuilt).isEqualTo(new MemberTotals.Rebuilt(2, 2, 6));
  }

  @Test
  void theNextDecisionsGoOnFromTheSummedTotals() {
    placeAll();
    flow.results.readValuesToList();
    RiskState before = risk().get("M2");
    long price = FlowFixture.micros("36");
    assertThat(before.committed()).isGreaterThan(price); // the put it holds
    long power = FlowFixture.micros("150000") + before.realized(); // cash, credit, realized
    // what its working buy holds counts too
    long fits = (power - before.committed() - reserved().get("M2")) / price;
    // Lost, M2's committed value would let one more share through.
    risk().delete("M2");
    rebuild();
    assertThat(flow.send("M2", "B1", "EQ2", Side.BUY, fits + 1).getStatus())
        .isEqualTo(OrderStatus.REJECTED);
    assertThat(flow.send("M2", "B1", "EQ2", Side.BUY, fits).getStatus())
        .isEqualTo(OrderStatus.ACCEPTED);
    RiskState after = risk().get("M2");
    assertThat(after.committed()).isEqualTo(before.committed() + fits * price);
    rebuild();
    assertThat(risk().get("M2")).isEqualTo(after);
  }

  @Test
  void theTotalsWriteNoChangelogAndThePositionsDo() {
    placeAll();
    assertThat(flow.driver.producedTopicNames())
        .contains(Topics.POSITIONS)
        .noneMatch(t -> t.contains(StoreNames.MEMBER_RISK))
        .noneMatch(t -> t.contains(StoreNames.MEMBER_RESERVED));
  }
}
