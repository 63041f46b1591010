package io.brokerstream.streams.topology;

import io.brokerstream.avro.OrderResult;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * The orders a member task has decided, by member|order id, for its dedup: every result committed
 * to order-results (the results store, which the task reads back from its own partition of the
 * topic, partitioned by member) and those it emitted since, until they are read back.
 *
 * <p>No changelog of its own: the result is the record. Exactly-once holds because a task that
 * starts (after a crash, a move or a restart) has its results store restored up to the offset it
 * had read, then reads the rest of its partition's committed results into it ({@link #catchUp})
 * before its first record, so it knows every committed result; what it emitted in a transaction
 * that aborted was never committed, and the orders that made it are read again. The unread ones are
 * in memory: between an emit and its read-back, about a commit interval.
 */
final class DecidedOrders {
  private final KeyValueStore<String, OrderResult> results;
  private final KeyValueStore<String, Long> unread;

  DecidedOrders(ProcessorContext<?, ?> context) {
    results = context.getStateStore(StoreNames.ORDER_RESULTS);
    unread = context.getStateStore(StoreNames.RESULTS_UNREAD);
  }

  /** Whether a result of this order was emitted: committed, or in this task's transaction. */
  boolean decided(String resultKey) {
    return unread.get(resultKey) != null || results.get(resultKey) != null;
  }

  /** A result emitted now, at `at` (the input's broker time). */
  void emitted(String resultKey, long at) {
    unread.put(resultKey, at);
  }

  /** The committed results past what the store was restored to, into the store. */
  void catchUp(ResultsTail tail, int partition) {
    tail.read(partition, results::put);
  }

  /** A result read back from order-results: into the results store, no longer unread. */
  void readBack(String resultKey, OrderResult result) {
    results.put(resultKey, result);
    unread.delete(resultKey);
  }

  KeyValueStore<String, OrderResult> results() {
    return results;
  }
}
