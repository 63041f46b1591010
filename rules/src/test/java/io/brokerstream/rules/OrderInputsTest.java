package io.brokerstream.rules;

import static org.assertj.core.api.Assertions.assertThat;

import io.brokerstream.avro.Order;
import io.brokerstream.avro.OrderAction;
import io.brokerstream.avro.OrderCommand;
import io.brokerstream.avro.OrderTrigger;
import io.brokerstream.avro.Side;
import java.math.BigDecimal;
import java.time.Instant;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * What an order, command or trigger record must be before either architecture decides anything from
 * it.
 */
class OrderInputsTest {
  private static Order order(String orderId, String account, String instrument, String trace) {
    return Order.newBuilder()
        .setOrderId(orderId)
        .setAccountId(account)
        .setInstrumentId(instrument)
        .setSide(Side.BUY)
        .setQuantity(1)
        .setLimitPrice(null)
        .setShortSale(false)
        .setClientTs(Instant.EPOCH)
        .setTraceId(trace)
        .build();
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '#',
      nullValues = "NULL",
      value = {
        "a good order # M1 # o-1 # A1 # EQ1 # NULL # NULL",
        "no key # NULL # o-1 # A1 # EQ1 # NULL # the record's key must be the member id",
        "a key joining ids # M1|A1 # o-1 # A1 # EQ1 # NULL # the record's key must be the member id",
        "a bar in the order id # M1 # o|1 # A1 # EQ1 # NULL # order_id",
        "a space in the account # M1 # o-1 # A 1 # EQ1 # NULL # account_id",
        "an instrument of 65 # M1 # o-1 # A1 # IIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIII # NULL # instrument_id",
        "a trace id with a bar # M1 # o-1 # A1 # EQ1 # t|1 # trace_id",
      })
  void orders(
      String what,
      String key,
      String orderId,
      String account,
      String instrument,
      String trace,
      String says) {
    String problem = OrderInputs.problem(key, order(orderId, account, instrument, trace));
    if (says == null) {
      assertThat(problem).as(what).isNull();
    } else {
      assertThat(problem).as(what).contains(says);
    }
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '#',
      nullValues = "NULL",
      value = {
        "a good cancel # M1 # o-1 # 1 # NULL", "a 1 KB id # M1 # LONG # 1 # order_id",
        "a trigger at 0 # M1 # o-1 # 0 # price must be above 0",
            "a trigger below 0 # M1 # o-1 # -1 # price"
      })
  void commandsAndTriggers(String what, String key, String orderId, String price, String says) {
    String id = orderId.equals("LONG") ? "o".repeat(1000) : orderId;
    OrderCommand cancel =
        OrderCommand.newBuilder()
            .setOrderId(id)
            .setAction(OrderAction.CANCEL)
            .setClientTs(Instant.EPOCH)
            .build();
    OrderTrigger trigger =
        OrderTrigger.newBuilder()
            .setOrderId(id)
            .setInstrumentId("EQ1")
            .setPrice(new BigDecimal(price).setScale(6))
            .setTickSequence(1)
            .setTriggeredTs(Instant.EPOCH)
            .build();
    String problem =
        what.contains("trigger")
            ? OrderInputs.problem(key, trigger)
            : OrderInputs.problem(key, cancel);
    if (says == null) {
      assertThat(problem).as(what).isNull();
    } else {
      assertThat(problem).as(what).contains(says);
    }
  }
}
