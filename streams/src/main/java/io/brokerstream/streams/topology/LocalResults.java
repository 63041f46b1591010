package io.brokerstream.streams.topology;

import io.brokerstream.avro.OrderResult;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * The results stores of the tasks running in this instance, by partition, as their processors
 * opened them. A long poll reads its order's result here directly: looking a store up through Kafka
 * Streams (which gathers every task of every thread into new sets on each call) was a third of the
 * gateway's own CPU. A store leaves when its task closes (it moved, or is being revived); a
 * partition not here is read through Kafka Streams, which knows whether it is restoring, elsewhere
 * or gone.
 */
public final class LocalResults {
  private final ConcurrentHashMap<Integer, KeyValueStore<String, OrderResult>> stores =
      new ConcurrentHashMap<>();

  void opened(int partition, KeyValueStore<String, OrderResult> store) {
    stores.put(partition, store);
  }

  void closed(int partition, KeyValueStore<String, OrderResult> store) {
    stores.remove(partition, store);
  }

  /** This instance's results store of a partition, or null when no task here holds it open. */
  public KeyValueStore<String, OrderResult> store(int partition) {
    return stores.get(partition);
  }
}
