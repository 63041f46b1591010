package io.brokerstream.streams.topology;

import io.brokerstream.avro.OrderResult;
import java.util.function.BiConsumer;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Committed results into the results store (by member|order id), for the gateway's reads and the
 * task's dedup ({@link DecidedOrders}), and each one to the long polls waiting for it. The store's
 * only source is the order-results topic, which is also what it is restored from: no changelog of
 * its own. It runs in the member task: order-results is partitioned by member, like orders.
 */
final class ResultsProcessor implements Processor<String, OrderResult, Void, Void> {
  private final LocalResults local;
  private final BiConsumer<String, OrderResult> onResult;
  private KeyValueStore<String, OrderResult> store;
  private DecidedOrders decided;
  private int partition;

  ResultsProcessor(LocalResults local, BiConsumer<String, OrderResult> onResult) {
    this.local = local;
    this.onResult = onResult;
  }

  @Override
  public void init(ProcessorContext<Void, Void> context) {
    decided = new DecidedOrders(context);
    store = decided.results();
    partition = context.taskId().partition();
    local.opened(partition, store);
  }

  @Override
  public void process(Record<String, OrderResult> record) {
    if (record.key() == null || record.value() == null) {
      return; // nothing a poll could be waiting for
    }
    decided.readBack(record.key(), record.value());
    onResult.accept(record.key(), record.value());
  }

  @Override
  public void close() {
    local.closed(partition, store);
  }
}
