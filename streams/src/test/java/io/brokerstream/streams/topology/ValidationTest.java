package io.brokerstream.streams.topology;

import static io.brokerstream.avro.ReasonCode.ACCOUNT_INACTIVE;
import static io.brokerstream.avro.ReasonCode.INSTRUMENT_INACTIVE;
import static io.brokerstream.avro.ReasonCode.INSUFFICIENT_BUYING_POWER;
import static io.brokerstream.avro.ReasonCode.INVALID_PRICE;
import static io.brokerstream.avro.ReasonCode.INVALID_QUANTITY;
import static io.brokerstream.avro.ReasonCode.LIMIT_NOT_MET;
import static io.brokerstream.avro.ReasonCode.MEMBER_INACTIVE;
import static io.brokerstream.avro.ReasonCode.MEMBER_MISMATCH;
import static io.brokerstream.avro.ReasonCode.NO_PRICE;
import static io.brokerstream.avro.ReasonCode.OPTION_EXPIRED;
import static io.brokerstream.avro.ReasonCode.SHORT_NOT_ALLOWED;
import static io.brokerstream.avro.ReasonCode.UNKNOWN_ACCOUNT;
import static io.brokerstream.avro.ReasonCode.UNKNOWN_INSTRUMENT;
import static io.brokerstream.avro.ReasonCode.UNKNOWN_MEMBER;
import static org.assertj.core.api.Assertions.assertThat;

import io.brokerstream.avro.OrderResult;
import io.brokerstream.avro.OrderStatus;
import io.brokerstream.avro.PriceTick;
import io.brokerstream.avro.ReasonCode;
import io.brokerstream.avro.Side;
import java.time.LocalDate;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Every rule and every reason code, through the topology. */
class ValidationTest {
  private final FlowFixture flow = new FlowFixture().standard();
  private final Set<ReasonCode> seen = EnumSet.noneOf(ReasonCode.class);

  @AfterEach
  void close() {
    flow.close();
  }

  private void assertRejected(OrderResult result, ReasonCode reason, String detailPart) {
    assertThat(result.getStatus()).isEqualTo(OrderStatus.REJECTED);
    assertThat(result.getReason()).isEqualTo(reason);
    assertThat(result.getReasonDetail()).contains(detailPart);
    assertThat(result.getFillPrice()).isNull();
    seen.add(reason);
  }

  @Test
  void aValidOrderIsAcceptedAtTheLatestPrice() {
    OrderResult r = flow.buy("A1", "EQ1", 10);
    assertThat(r.getStatus()).isEqualTo(OrderStatus.ACCEPTED);
    assertThat(r.getReason()).isNull();
    assertThat(r.getFillPrice()).isEqualTo(FlowFixture.money("100"));
    assertThat(r.getMemberId()).isEqualTo("M1");
    assertThat(r.getProcessedTs()).isNotNull();
  }

  @Test
  void malformedValues() {
    malformedValues(flow);
  }

  private void malformedValues(FlowFixture flow) {
    assertRejected(flow.buy("A1", "EQ1", 0), INVALID_QUANTITY, "got 0");
    assertRejected(flow.buy("A1", "EQ1", -5), INVALID_QUANTITY, "got -5");
    assertRejected(flow.buy("A1", "EQ1", 2_000_000_000L), INVALID_QUANTITY, "got 2000000000");
    assertRejected(
        flow.send("M1", flow.order("A1", "EQ1", Side.BUY, 1, "0")), INVALID_PRICE, "got 0.000000");
    assertRejected(
        flow.send("M1", flow.order("A1", "EQ1", Side.BUY, 1, "-1")), INVALID_PRICE, "-1.000000");
    assertRejected(
        flow.send("M1", flow.order("A1", "EQ1", Side.BUY, 1, "5000000")), INVALID_PRICE, "5000000");
  }

  @Test
  void accountsAndMembers() {
    accountsAndMembers(flow);
  }

  private void accountsAndMembers(FlowFixture flow) {
    flow.account("A3", "M1", "SUSPENDED", "1000", true)
        .account("A4", "M2", "ACTIVE", "1000", true)
        .account("A5", "M3", "ACTIVE", "1000", true)
        .member("M3", "SUSPENDED", "1000")
        .account("A6", "M9", "ACTIVE", "1000", true);
    assertRejected(flow.buy("NOPE", "EQ1", 1), UNKNOWN_ACCOUNT, "no account NOPE");
    assertRejected(flow.buy("A4", "EQ1", 1), MEMBER_MISMATCH, "belongs to member M2");
    assertRejected(flow.buy("A3", "EQ1", 1), ACCOUNT_INACTIVE, "A3 is SUSPENDED");
    assertRejected(flow.send("M9", "A6", "EQ1", Side.BUY, 1), UNKNOWN_MEMBER, "no member M9");
    assertRejected(flow.send("M3", "A5", "EQ1", Side.BUY, 1), MEMBER_INACTIVE, "M3 is SUSPENDED");
  }

  @Test
  void instrumentsAndExpiry() {
    instrumentsAndExpiry(flow);
  }

  private void instrumentsAndExpiry(FlowFixture flow) {
    flow.equity("EQ2", "DELISTED")
        .price("EQ2", "10")
        .option(
            "OPX",
            "EQ1",
            "CALL",
            "EUROPEAN",
            "100",
            FlowFixture.NOW.atZone(java.time.ZoneOffset.UTC).toLocalDate().minusDays(1))
        .option("OPT", "EQ1", "CALL", "EUROPEAN", "100", LocalDate.of(2026, 11, 20));
    assertRejected(flow.buy("A1", "XX", 1), UNKNOWN_INSTRUMENT, "no instrument XX");
    assertRejected(flow.buy("A1", "EQ2", 1), INSTRUMENT_INACTIVE, "EQ2 is DELISTED");
    assertRejected(flow.buy("A1", "OPX", 1), OPTION_EXPIRED, "expired on 2026-11-19");
    // on its maturity day an option still trades
    assertThat(flow.buy("A1", "OPT", 1).getStatus()).isEqualTo(OrderStatus.ACCEPTED);
  }

  @Test
  void pricesMustBeKnown() {
    pricesMustBeKnown(flow);
  }

  private void pricesMustBeKnown(FlowFixture flow) {
    flow.equity("EQ3", "ACTIVE")
        .volatility("EQ3", 0.3)
        .equity("EQ4", "ACTIVE")
        .price("EQ4", "50")
        .option("OP3", "EQ3", "PUT", "AMERICAN", "10", LocalDate.of(2027, 6, 18))
        .option("OP4", "EQ4", "PUT", "AMERICAN", "10", LocalDate.of(2027, 6, 18));
    assertRejected(flow.buy("A1", "EQ3", 1), NO_PRICE, "no price yet for EQ3");
    assertRejected(flow.buy("A1", "OP3", 1), NO_PRICE, "no price yet for EQ3");
    assertRejected(flow.buy("A1", "OP4", 1), NO_PRICE, "no volatility for EQ4");
    // A call far out of the money on its last day is worth less than half a micro: nothing to trade
    // at, not a free fill of any size (at 0 it would commit no buying power).
    LocalDate today = FlowFixture.NOW.atZone(java.time.ZoneOffset.UTC).toLocalDate();
    flow.option("OPZ", "EQ1", "CALL", "EUROPEAN", "1000", today);
    assertRejected(flow.buy("A1", "OPZ", 1_000_000_000), NO_PRICE, "rounds to 0.000000");
    assertRejected(flow.sell("A1", "OPZ", 1), NO_PRICE, "rounds to 0.000000");
  }

  @Test
  void limitsAreRespectedBothWays() {
    limitsAreRespectedBothWays(flow);
  }

  private void limitsAreRespectedBothWays(FlowFixture flow) {
    assertRejected(
        flow.send("M1", flow.order("A1", "EQ1", Side.BUY, 1, "99.99")),
        LIMIT_NOT_MET,
        "buy limit 99.990000");
    assertThat(flow.send("M1", flow.order("A1", "EQ1", Side.BUY, 1, "100")).getStatus())
        .isEqualTo(OrderStatus.ACCEPTED);
    assertRejected(
        flow.send("M1", flow.order("A1", "EQ1", Side.SELL, 1, "100.01")),
        LIMIT_NOT_MET,
        "sell limit 100.010000");
    assertThat(flow.send("M1", flow.order("A1", "EQ1", Side.SELL, 1, "100")).getStatus())
        .isEqualTo(OrderStatus.ACCEPTED);
  }

  @Test
  void sellingMoreThanHeldNeedsShortPermission() {
    sellingMoreThanHeldNeedsShortPermission(flow);
  }

  private void sellingMoreThanHeldNeedsShortPermission(FlowFixture flow) {
    flow.buy("A2", "EQ1", 5);
    assertRejected(
        flow.sell("A2", "EQ1", 6), SHORT_NOT_ALLOWED, "holds 5 and may not sell 6 short");
    assertThat(flow.sell("A2", "EQ1", 5).getStatus()).isEqualTo(OrderStatus.ACCEPTED);
    assertThat(flow.sell("A1", "EQ1", 5).getStatus())
        .isEqualTo(OrderStatus.ACCEPTED); // A1 may short
    assertThat(flow.position("A1", "EQ1").quantity()).isEqualTo(-5);
  }

  @Test
  void buyingPowerIsCashOfAllAccountsPlusCreditPlusRealized() {
    buyingPowerIsCashOfAllAccountsPlusCreditPlusRealized(flow);
  }

  private void buyingPowerIsCashOfAllAccountsPlusCreditPlusRealized(FlowFixture flow) {
    // deposited 500,000 + 250,000, credit 1,000,000: 1,750,000 of exposure at most
    assertThat(flow.buy("A1", "EQ1", 17_500).getStatus()).isEqualTo(OrderStatus.ACCEPTED);
    assertRejected(
        flow.buy("A2", "EQ1", 1),
        INSUFFICIENT_BUYING_POWER,
        "would commit 1750100.000000 against buying power 1750000.000000");
    // reducing exposure is always allowed, even at the limit
    assertThat(flow.sell("A1", "EQ1", 100).getStatus()).isEqualTo(OrderStatus.ACCEPTED);
    // realized profit adds buying power: sell 100 at 110 realizes 1,000
    flow.price("EQ1", "110");
    assertThat(flow.sell("A1", "EQ1", 100).getRealizedPnl()).isEqualTo(FlowFixture.money("1000"));
    flow.price("EQ1", "100");
    assertThat(flow.buy("A2", "EQ1", 210).getStatus()).isEqualTo(OrderStatus.ACCEPTED);
    assertRejected(
        flow.buy("A2", "EQ1", 1), INSUFFICIENT_BUYING_POWER, "against buying power 1751000.000000");
    // an absurd order is unaffordable, not an overflow
    flow.equity("BIG", "ACTIVE").price("BIG", "999999");
    assertRejected(flow.buy("A1", "BIG", 999_999_999L), INSUFFICIENT_BUYING_POWER, "");
  }

  @Test
  void depositsAndAccountChangesAreSeenImmediately() {
    depositsAndAccountChangesAreSeenImmediately(flow);
  }

  private void depositsAndAccountChangesAreSeenImmediately(FlowFixture flow) {
    assertRejected(
        flow.buy("A1", "EQ1", 30_000), INSUFFICIENT_BUYING_POWER, "buying power 1750000.000000");
    flow.account("A7", "M1", "ACTIVE", "1500000", false); // a new account with cash
    assertThat(flow.buy("A1", "EQ1", 30_000).getStatus()).isEqualTo(OrderStatus.ACCEPTED);
    flow.account("A1", "M1", "SUSPENDED", "500000", true);
    assertRejected(flow.buy("A1", "EQ1", 1), ACCOUNT_INACTIVE, "SUSPENDED");
    flow.deleteAccount("A7");
    assertRejected(flow.buy("A7", "EQ1", 1), UNKNOWN_ACCOUNT, "no account A7");
    // A7's cash no longer counts: 30,000 x 100 committed against 1,750,000
    assertRejected(
        flow.buy("A2", "EQ1", 1), INSUFFICIENT_BUYING_POWER, "against buying power 1750000.000000");
  }

  @Test
  void preTradeControls() {
    try (FlowFixture fresh =
        new FlowFixture(java.util.Map.of("orders.max-price-age-ms", "60000")).standard()) {
      preTradeControls(fresh);
    }
  }

  /** The broker's own controls, each by the reason code it answers with. */
  private void preTradeControls(FlowFixture flow) {
    flow.member("M5", "ACTIVE", 10L, "500", null)
        .account("A5", "M5", "ACTIVE", "100000", true)
        .member("M6", "REDUCING", null, null, null)
        .account("A6", "M6", "ACTIVE", "100000", false)
        .member("M7", "HALTED", null, null, null)
        .account("A7", "M7", "ACTIVE", "100000", false);
    assertRejected(
        flow.send("M5", "A5", "EQ1", Side.BUY, 11), ReasonCode.ORDER_TOO_LARGE, "limit of 10");
    assertRejected(
        flow.send("M5", "A5", "EQ1", Side.BUY, 6), ReasonCode.ORDER_TOO_LARGE, "limit of 500");
    assertRejected(
        flow.send("M6", "A6", "EQ1", Side.BUY, 1), ReasonCode.REDUCE_ONLY, "only reduce");
    assertRejected(flow.send("M7", "A7", "EQ1", Side.BUY, 1), ReasonCode.MEMBER_HALTED, "halted");
    assertRejected(
        flow.send("M1", flow.order("A1", "EQ1", Side.BUY, 1, "500.000001")),
        ReasonCode.PRICE_OUT_OF_BAND,
        "5.0x away");
    // marks older than 30 s refuse new exposure for a member with open positions
    flow.marks("M5", "-10", 1, FlowFixture.NOW.minusSeconds(31));
    assertRejected(flow.send("M5", "A5", "EQ1", Side.BUY, 1), ReasonCode.STALE_MARKS, "31 s old");
    // a price older than the bound (here 60 s) fills nothing
    flow.equity("EQ8", "ACTIVE");
    PriceTick old = FlowFixture.tick("EQ8", "50", 1);
    old.setEventTs(FlowFixture.NOW.minusSeconds(61));
    flow.latest(old);
    assertRejected(flow.buy("A1", "EQ8", 1), ReasonCode.STALE_PRICE, "61 s old");
    // a halted equity trades nothing
    flow.control("EQ1", "HALT", "news pending");
    flow.driver.advanceWallClockTime(java.time.Duration.ofMillis(200));
    assertRejected(flow.buy("A1", "EQ1", 1), ReasonCode.INSTRUMENT_HALTED, "news pending");
  }

  @Test
  void everyReasonCodeIsReachable() {
    List<Consumer<FlowFixture>> scenarios =
        List.of(
            this::malformedValues,
            this::accountsAndMembers,
            this::instrumentsAndExpiry,
            this::pricesMustBeKnown,
            this::limitsAreRespectedBothWays,
            this::sellingMoreThanHeldNeedsShortPermission,
            this::buyingPowerIsCashOfAllAccountsPlusCreditPlusRealized,
            this::preTradeControls);
    for (Consumer<FlowFixture> scenario : scenarios) {
      try (FlowFixture fresh =
          new FlowFixture(java.util.Map.of("orders.max-price-age-ms", "60000")).standard()) {
        scenario.accept(fresh);
      }
    }
    EnumSet<ReasonCode> all = EnumSet.allOf(ReasonCode.class);
    all.remove(ReasonCode.OTHER);
    assertThat(seen).containsExactlyInAnyOrderElementsOf(all);
  }
}
