package io.brokerstream.streams.topology;

import io.brokerstream.avro.OrderTrigger;

/**
 * Where the book sends each trigger a second time, outside its task's transaction. A trigger in the
 * transaction (order-triggers) reaches the member task only after the book's commit, and the
 * member's result only after the member's next commit: two commit intervals. The copy sent here is
 * readable as soon as the broker has it, so the decision waits for one commit only. It is at least
 * once (a book task that fails before its commit triggers the same orders again) and may be lost (a
 * failed send); the member task decides an order once whichever copy comes first, because each copy
 * starts by taking the order out of the member's working orders, and the transactional copy is
 * always there behind it.
 */
@FunctionalInterface
public interface FastTriggers extends AutoCloseable {
  /** None: the member task waits for the transactional copy. */
  FastTriggers NONE = (member, trigger, timestamp) -> {};

  void send(String member, OrderTrigger trigger, long timestamp);

  @Override
  default void close() {}
}
