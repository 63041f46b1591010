package io.brokerstream.streams.topology;

import io.brokerstream.avro.Order;
import io.brokerstream.avro.OrderCommand;
import io.brokerstream.avro.OrderTrigger;
import io.brokerstream.rules.OrderInputs;
import io.brokerstream.streams.errors.UndecidableRecord;

/**
 * The member tasks' inputs (orders, order-commands, order-triggers) held to {@link OrderInputs}
 * before anything is decided from them. The gateway writes nothing else; a record written around it
 * (straight to Kafka) that fails is dead-lettered with the reason, before it reads or changes any
 * state, and the task goes on.
 */
final class InputGuard {
  private InputGuard() {}

  static String order(String key, Order order) {
    return check(key, OrderInputs.problem(key, order));
  }

  static String command(String key, OrderCommand command) {
    return check(key, OrderInputs.problem(key, command));
  }

  static String trigger(String key, OrderTrigger trigger) {
    return check(key, OrderInputs.problem(key, trigger));
  }

  private static String check(String key, String problem) {
    if (problem != null) {
      throw new UndecidableRecord(problem);
    }
    return key;
  }
}
