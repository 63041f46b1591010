package io.brokerstream.loadgen;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class OrderMixTest {
  private static Plan plan(double optionShare) {
    return new Plan(
        "http://127.0.0.1:1",
        null,
        "b",
        "r",
        List.of(
            new Plan.Client("M1", "k1", List.of("A1", "A2")),
            new Plan.Client("M2", "k2", List.of("A3"))),
        List.of("EQ1", "EQ2", "EQ3"),
        List.of("OP1", "OP2"),
        optionShare,
        7,
        0,
        0,
        100,
        0,
        0,
        0,
        null,
        null,
        null);
  }

  @Test
  void aPlanWithoutTheGatewayListHasTheOneGateway() {
    assertThat(plan(0).gatewayUrls()).containsExactly("http://127.0.0.1:1");
  }

  @Test
  void everySellClosesWhatTheAccountBoughtSoPositionsStayBounded() {
    OrderMix mix = new OrderMix(plan(0.3));
    Map<String, Long> held = new HashMap<>();
    for (int i = 0; i < 100_000; i++) {
      OrderMix.Next o = mix.next();
      String key = o.account() + "|" + o.instrument();
      long before = held.getOrDefault(key, 0L);
      if (o.buy()) {
        assertThat(before).isZero();
      } else {
        assertThat(o.quantity()).isEqualTo(before);
      }
      held.put(key, before + (o.buy() ? o.quantity() : -o.quantity()));
      assertThat(o.client().accounts()).contains(o.account());
    }
    assertThat(held.values()).allMatch(q -> q >= 0 && q <= 20);
  }

  @Test
  void optionsTakeTheirShareAndPopularNamesComeFirst() {
    OrderMix mix = new OrderMix(plan(0.3));
    Map<String, Integer> count = new HashMap<>();
    for (int i = 0; i < 100_000; i++) {
      count.merge(mix.next().instrument(), 1, Integer::sum);
    }
    int options = count.getOrDefault("OP1", 0) + count.getOrDefault("OP2", 0);
    // buys draw 30 % options and sells follow what was bought
    assertThat(options / 100_000.0).isBetween(0.27, 0.33);
    assertThat(count.get("EQ1")).isGreaterThan(count.get("EQ3"));
  }

  @Test
  void theSameSeedGivesTheSameOrders() {
    OrderMix a = new OrderMix(plan(0.3));
    OrderMix b = new OrderMix(plan(0.3));
    for (int i = 0; i < 1000; i++) {
      assertThat(a.next()).isEqualTo(b.next());
    }
  }
}
