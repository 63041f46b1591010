package io.brokerstream.rules;

import io.brokerstream.avro.Order;
import io.brokerstream.avro.OrderCommand;
import io.brokerstream.avro.OrderTrigger;

/**
 * What an order, command or trigger record must be before anything is decided from it, in both
 * architectures: a member id in its key (identity comes from the key, nothing else) and every id it
 * carries by the one id rule ({@link Identifiers}). Each check answers why not, or null. A record
 * that fails cannot be decided and is dead-lettered; the rule also bounds every text copied from it
 * into what the flow writes.
 */
public final class OrderInputs {
  private OrderInputs() {}

  public static String problem(String key, Order order) {
    String no = key(key);
    if (no != null) {
      return no;
    }
    if (order == null) {
      return "an order record without a value (tombstone) cannot be decided";
    }
    return first(
        id("order_id", order.getOrderId(), Identifiers.MAX_ID),
        id("account_id", order.getAccountId(), Identifiers.MAX_ID),
        id("instrument_id", order.getInstrumentId(), Identifiers.MAX_ID),
        order.getTraceId() == null
            ? null
            : id("trace_id", order.getTraceId(), Identifiers.MAX_TRACE_ID));
  }

  public static String problem(String key, OrderCommand command) {
    return first(
        key(key),
        id("order_id", command.getOrderId(), Identifiers.MAX_ID),
        command.getTraceId() == null
            ? null
            : id("trace_id", command.getTraceId(), Identifiers.MAX_TRACE_ID));
  }

  public static String problem(String key, OrderTrigger trigger) {
    return first(
        key(key),
        id("order_id", trigger.getOrderId(), Identifiers.MAX_ID),
        id("instrument_id", trigger.getInstrumentId(), Identifiers.MAX_ID),
        trigger.getPrice().signum() > 0 ? null : "a trigger's price must be above 0");
  }

  private static String key(String key) {
    String no = Identifiers.problem(key, Identifiers.MAX_ID);
    return no == null
        ? null
        : "the record's key must be the member id (it " + no + "): identity comes from the key";
  }

  private static String id(String field, String value, int max) {
    String no = Identifiers.problem(value, max);
    return no == null ? null : field + " " + no;
  }

  private static String first(String... problems) {
    for (String p : problems) {
      if (p != null) {
        return p;
      }
    }
    return null;
  }
}
