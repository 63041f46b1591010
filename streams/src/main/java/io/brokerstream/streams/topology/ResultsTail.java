package io.brokerstream.streams.topology;

import io.brokerstream.avro.OrderResult;
import java.util.function.BiConsumer;

/**
 * The results a member task committed but had not read back when it stopped: what its partition of
 * order-results holds past the offset the app's group committed for it.
 *
 * <p>A task that starts restores its results store from order-results only up to that committed
 * offset (Kafka Streams restores a store whose changelog is a source topic that far), and reads the
 * rest as input, ordered by timestamp against its orders: a retry of an order decided just before
 * the stop could come first. The task reads the tail into its results store before its first
 * record, so every committed result counts from the start; reading them again as input later puts
 * the same values.
 */
@FunctionalInterface
public interface ResultsTail {
  /** No tail (the topology test driver feeds every result back at once). */
  ResultsTail NONE = (partition, each) -> {};

  /** Hands on each result committed past the group's offset in this partition of order-results. */
  void read(int partition, BiConsumer<String, OrderResult> each);
}
