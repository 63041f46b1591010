package io.brokerstream.streams.topology;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.brokerstream.avro.Order;
import io.brokerstream.avro.OrderStatus;
import io.brokerstream.avro.Side;
import io.brokerstream.money.Micros;
import io.brokerstream.pricing.MarketModel;
import java.time.LocalDate;
import java.time.ZoneOffset;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Option orders are priced from the underlying's latest price; checked against reference values.
 */
class OptionPricingTest {
  // Expiry is the end of the maturity day: an order 365 days before it has T = 1 year exactly.
  private static final LocalDate MATURITY = LocalDate.of(2027, 11, 20);
  private final FlowFixture flow = new FlowFixture().standard();

  @AfterEach
  void close() {
    flow.close();
  }

  private double fill(String option) {
    Order order = flow.order("A1", option, Side.BUY, 1, null);
    // a year before the end of the maturity day, by the broker's clock (the record's append time)
    var result =
        flow.sendAt(
            "M1",
            order,
            MATURITY.plusDays(1).atStartOfDay(ZoneOffset.UTC).minusDays(365).toInstant());
    assertThat(result.getStatus()).isEqualTo(OrderStatus.ACCEPTED);
    return Micros.toModel(Micros.of(result.getFillPrice()));
  }

  @Test
  void europeanOptionsMatchTheReferenceValues() {
    // S=100 (the latest price), K=100, T=1, r=0.05, sigma=0.2 (EQ1's volatility): the reference
    // values hold for the market model's rate
    assertThat(MarketModel.load().rate()).isEqualTo(0.05);
    flow.option("C", "EQ1", "CALL", "EUROPEAN", "100", MATURITY)
        .option("P", "EQ1", "PUT", "EUROPEAN", "100", MATURITY);
    assertThat(fill("C")).isCloseTo(10.4506, within(5e-5));
    assertThat(fill("P")).isCloseTo(5.5735, within(5e-5));
  }

  @Test
  void putCallParityHoldsOnFills() {
    flow.price("EQ1", "87.5");
    flow.option("C", "EQ1", "CALL", "EUROPEAN", "95", MATURITY)
        .option("P", "EQ1", "PUT", "EUROPEAN", "95", MATURITY);
    double call = fill("C");
    double put = fill("P");
    // fills are rounded to the micro: parity holds to two micros
    assertThat(call - put)
        .isCloseTo(87.5 - 95 * Math.exp(-MarketModel.load().rate()), within(2e-6));
  }

  @Test
  void americanPutsAreWorthAtLeastTheirEuropeanTwin() {
    flow.option("PA", "EQ1", "PUT", "AMERICAN", "100", MATURITY)
        .option("PE", "EQ1", "PUT", "EUROPEAN", "100", MATURITY)
        .option("CA", "EQ1", "CALL", "AMERICAN", "100", MATURITY);
    assertThat(fill("PA")).isCloseTo(6.0904, within(2e-2)).isGreaterThan(fill("PE"));
    assertThat(fill("CA")).isCloseTo(10.4506, within(5e-5));
  }

  @Test
  void theLatestTickIsThePriceUsed() {
    flow.option("C", "EQ1", "CALL", "EUROPEAN", "100", MATURITY);
    double before = fill("C");
    flow.price("EQ1", "120");
    assertThat(fill("C")).isGreaterThan(before + 15);
  }
}
