package io.brokerstream.streams.topology;

import static org.assertj.core.api.Assertions.assertThat;

import io.brokerstream.avro.Order;
import io.brokerstream.avro.OrderStatus;
import io.brokerstream.avro.ReasonCode;
import io.brokerstream.avro.Side;
import io.brokerstream.money.Micros;
import java.time.Instant;
import java.time.LocalDate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Expiry and time to maturity come from when the broker received the order, never the client's
 * clock.
 */
class BrokerTimeTest {
  private static final LocalDate EXPIRED = LocalDate.parse("2026-10-16");
  private final FlowFixture flow =
      new FlowFixture()
          .standard()
          .option("OLD", "EQ1", "CALL", "EUROPEAN", "95", EXPIRED)
          .option("C", "EQ1", "CALL", "EUROPEAN", "100", LocalDate.parse("2027-11-20"));

  @AfterEach
  void close() {
    flow.close();
  }

  @Test
  void aClientTimestampBeforeExpiryDoesNotBuyAnExpiredOption() {
    Order order = flow.order("A1", "OLD", Side.BUY, 1, null);
    order.setClientTs(Instant.ofEpochMilli(1_760_000_000_000L)); // 2025-10-09, before expiry
    var result = flow.send("M1", order);
    assertThat(result.getStatus()).isEqualTo(OrderStatus.REJECTED);
    assertThat(result.getReason()).isEqualTo(ReasonCode.OPTION_EXPIRED);
    assertThat(result.getReasonDetail()).contains("reached the broker on 2026-11-20");
    // reported, not used
    assertThat(result.getClientTs()).isEqualTo(Instant.ofEpochMilli(1_760_000_000_000L));
    assertThat(result.getIngestTs()).isEqualTo(FlowFixture.NOW);
  }

  @Test
  void theClientClockDoesNotMoveTheModelPrice() {
    Order honest = flow.order("A1", "C", Side.BUY, 1, null);
    Order early = flow.order("A1", "C", Side.BUY, 1, null);
    early.setClientTs(Instant.parse("2020-01-01T00:00:00Z"));
    long a = Micros.of(flow.send("M1", honest).getFillPrice());
    long b = Micros.of(flow.send("M1", early).getFillPrice());
    assertThat(b).isEqualTo(a);
  }

  @Test
  void theBrokersClockDoes() {
    long now = Micros.of(flow.send("M1", flow.order("A1", "C", Side.BUY, 1, null)).getFillPrice());
    long later =
        Micros.of(
            flow.sendAt(
                    "M1",
                    flow.order("A1", "C", Side.BUY, 1, null),
                    FlowFixture.NOW.plusSeconds(180L * 86400))
                .getFillPrice());
    assertThat(later).isLessThan(now); // less time value left
  }
}
