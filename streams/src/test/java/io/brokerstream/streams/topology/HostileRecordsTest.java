package io.brokerstream.streams.topology;

import static org.assertj.core.api.Assertions.assertThat;

import io.brokerstream.avro.DeadLetter;
import io.brokerstream.avro.Order;
import io.brokerstream.avro.OrderAction;
import io.brokerstream.avro.OrderCommand;
import io.brokerstream.avro.OrderResult;
import io.brokerstream.avro.OrderStatus;
import io.brokerstream.avro.OrderTrigger;
import io.brokerstream.avro.PriceTick;
import io.brokerstream.avro.Side;
import io.brokerstream.rules.BoundedLetters;
import io.brokerstream.streams.Topics;
import java.time.Instant;
import java.util.Map;
import org.apache.kafka.streams.TestInputTopic;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Records written around the gateway, straight to the flow's input topics, by someone who means
 * harm: each is dead-lettered with its cause (bounded, whatever its size), changes nothing, and the
 * member tasks go on deciding everyone else's orders. At-least-once here for the reason
 * DeadLettersTest gives; the real-stack tests run the same records under exactly-once.
 */
class HostileRecordsTest {
  private static final String HUGE = "A".repeat(380_000);

  private final FlowFixture flow =
      new FlowFixture(Map.of("streams.processing.guarantee", "at_least_once")).standard();
  private final TestInputTopic<String, OrderCommand> commands = flow.commands;

  @AfterEach
  void close() {
    flow.close();
  }

  private OrderCommand cancel(String orderId) {
    return OrderCommand.newBuilder()
        .setOrderId(orderId)
        .setAction(OrderAction.CANCEL)
        .setClientTs(FlowFixture.NOW)
        .build();
  }

  /** The flow still decides an ordinary order of the member, as if nothing had happened. */
  private void stillDeciding() {
    OrderResult r = flow.buy("A1", "EQ1", 1);
    assertThat(r.getStatus()).isEqualTo(OrderStatus.ACCEPTED);
  }

  private DeadLetter onlyLetter() {
    DeadLetter letter = flow.deadLetters.readValue();
    assertThat(flow.deadLetters.isEmpty()).isTrue();
    return letter;
  }

  @Test
  void aCancelNamingA380KbOrderIdIsDeadLetteredBoundedAndTheTaskGoesOn() {
    commands.pipeInput("M1", cancel(HUGE));
    DeadLetter letter = onlyLetter();
    assertThat(letter.getSourceTopic()).isEqualTo(Topics.ORDER_COMMANDS);
    assertThat(letter.getErrorClass()).endsWith("UndecidableRecord");
    assertThat(letter.getMessage())
        .contains("order_id must be 1 to 64 characters, got 380000")
        .contains("kept]");
    assertThat(letter.getRecordValue().remaining()).isEqualTo(BoundedLetters.MAX_VALUE_BYTES);
    assertThat(flow.events.isEmpty()).isTrue();
    stillDeciding();
  }

  @Test
  void ordersWhoseKeyIsNotAMemberIdAreDeadLettered() {
    for (String key : new String[] {null, "", "M1|A1", "M 1", "\uff2d1", HUGE}) {
      flow.orders.pipeInput(key, flow.order("A1", "EQ1", Side.BUY, 1, null));
      DeadLetter letter = onlyLetter();
      assertThat(letter.getMessage())
          .as("key %s", key == null ? "null" : key.length() > 10 ? "huge" : key)
          .contains("key must be the member id");
      assertThat(letter.getRecordKey() == null ? 0 : letter.getRecordKey().remaining())
          .isLessThanOrEqualTo(BoundedLetters.MAX_KEY_BYTES);
    }
    assertThat(flow.results.isEmpty()).isTrue();
    assertThat(flow.position("A1", "EQ1")).isNull();
    stillDeciding();
  }

  @Test
  void ordersCarryingIdsThatBreakTheRuleAreDeadLettered() {
    String[][] bad = {
      {"o|1", "A1", "EQ1"}, {"o-1", "A1\u0000", "EQ1"}, {"o-2", "A1", HUGE}, {HUGE, "A1", "EQ1"}
    };
    for (String[] ids : bad) {
      flow.orders.pipeInput(
          "M1",
          Order.newBuilder(flow.order(ids[1], ids[2], Side.BUY, 1, null))
              .setOrderId(ids[0])
              .build());
      assertThat(onlyLetter().getErrorClass()).endsWith("UndecidableRecord");
    }
    flow.orders.pipeInput(
        "M1",
        Order.newBuilder(flow.order("A1", "EQ1", Side.BUY, 1, null)).setTraceId(HUGE).build());
    assertThat(onlyLetter().getMessage()).contains("trace_id");
    assertThat(flow.results.isEmpty()).isTrue();
    stillDeciding();
  }

  @Test
  void forgedTriggersThatBreakTheRuleAreDeadLettered() {
    OrderTrigger zero =
        OrderTrigger.newBuilder()
            .setOrderId("o-1")
            .setInstrumentId("EQ1")
            .setPrice(FlowFixture.money("0"))
            .setTickSequence(1)
            .setTriggeredTs(FlowFixture.NOW)
            .build();
    flow.fastTriggersIn.pipeInput("M1", zero);
    assertThat(onlyLetter().getMessage()).contains("price must be above 0");
    flow.triggersIn.pipeInput(
        "M1",
        OrderTrigger.newBuilder(zero).setOrderId(HUGE).setPrice(FlowFixture.money("1")).build());
    assertThat(onlyLetter().getMessage()).contains("order_id");
    stillDeciding();
  }

  @Test
  void aTickKeyedByAnotherInstrumentOrAHugeKeyIsRefusedWithABoundedLetter() {
    flow.ticks.pipeInput(HUGE, FlowFixture.tick("EQ1", "101", 2));
    DeadLetter letter = flow.deadTicks.readValue();
    assertThat(letter.getErrorClass()).isEqualTo("KEY_MISMATCH");
    assertThat(letter.getRecordKey().remaining()).isEqualTo(BoundedLetters.MAX_KEY_BYTES);
    flow.ticks.pipeInput("EQ1", FlowFixture.tick(HUGE, "101", 3));
    assertThat(flow.deadTicks.readValue().getErrorClass()).isEqualTo("KEY_MISMATCH");
    assertThat(flow.pricesOut.isEmpty()).isTrue();
  }

  @Test
  void aTickOlderThanTheLastAcceptedOneIsRefusedAndPricesNothing() {
    Instant t = FlowFixture.NOW.plusSeconds(10);
    flow.driver.advanceWallClockTime(java.time.Duration.ofSeconds(10)); // t is the broker's now
    flow.ticks.pipeInput("EQ1", tickAt("101", t, 2));
    flow.ticks.pipeInput("EQ1", tickAt("99", t.minusMillis(1), 3)); // delayed or replayed
    flow.ticks.pipeInput("EQ1", tickAt("102", t, 4)); // the same instant is not older
    DeadLetter stale = flow.deadTicks.readValue();
    assertThat(stale.getErrorClass()).isEqualTo("OUT_OF_ORDER");
    assertThat(stale.getMessage()).contains("before that of its last accepted tick");
    assertThat(flow.deadTicks.isEmpty()).isTrue();
    // prices.latest is folded per commit: whatever it emitted, 99 is never among it
    assertThat(flow.pricesOut.readValuesToList())
        .extracting(p -> p.getPrice().toPlainString())
        .doesNotContain("99.000000");
  }

  @Test
  void aTickOlderThanPricesLatestIsRefusedAfterARestartToo() {
    // A fresh task knows no tick of its own: prices.latest's (event time NOW) is the last accepted.
    flow.ticks.pipeInput("EQ1", tickAt("98", FlowFixture.NOW.minusSeconds(1), 2));
    assertThat(flow.deadTicks.readValue().getErrorClass()).isEqualTo("OUT_OF_ORDER");
  }

  private static PriceTick tickAt(String price, Instant eventTs, long sequence) {
    return PriceTick.newBuilder(FlowFixture.tick("EQ1", price, sequence))
        .setEventTs(eventTs)
        .build();
  }

  @Test
  void aReferenceRecordWithAnIdThatBreaksTheRuleIsSkipped() {
    flow.member("M|2", "ACTIVE", "1000")
        .account("A|9", "M1", "ACTIVE", "1000", true)
        .account("A9", "M|2", "ACTIVE", "1000", true);
    // A9 was skipped for its member id: it is unknown, not an account of "M|2" (whose index key
    // would break)
    assertThat(flow.buy("A9", "EQ1", 1).getReasonDetail()).contains("no account A9");
    assertThat(flow.send("M1", "A9", "EQ1", Side.BUY, 1).getReason().name())
        .isEqualTo("UNKNOWN_ACCOUNT");
  }

  @Test
  void anAccountNeverMovesToAnotherMember() {
    assertThat(flow.buy("A1", "EQ1", 2).getStatus()).isEqualTo(OrderStatus.ACCEPTED);
    flow.member("M2", "ACTIVE", "1000000").account("A1", "M2", "ACTIVE", "500000", true);
    OrderResult fromNewMember = flow.send("M2", "A1", "EQ1", Side.BUY, 1);
    assertThat(fromNewMember.getReason().name()).isEqualTo("MEMBER_MISMATCH");
    // and not by a delete and an insert either
    flow.deleteAccount("A1").account("A1", "M2", "ACTIVE", "500000", true);
    assertThat(flow.send("M2", "A1", "EQ1", Side.BUY, 1).getReason().name())
        .isIn("MEMBER_MISMATCH", "UNKNOWN_ACCOUNT");
    flow.account("A1", "M1", "ACTIVE", "500000", true);
    assertThat(flow.buy("A1", "EQ1", 1).getStatus()).isEqualTo(OrderStatus.ACCEPTED);
    assertThat(flow.position("A1", "EQ1").quantity()).isEqualTo(3);
  }

  @Test
  void idsAtTheirLongestStillMakeSmallRecords() {
    flow.orders.pipeInput(
        "M1",
        Order.newBuilder(flow.order("NOPE", "EQ1", Side.BUY, 1, null))
            .setOrderId("a".repeat(64))
            .setTraceId("t".repeat(128))
            .build());
    OrderResult r = flow.results.readValue();
    assertThat(r.getReasonDetail().length()).isLessThan(200);
    assertThat(r.getOrderId()).hasSize(64);
  }
}
