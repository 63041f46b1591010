package io.brokerstream.streams.topology;

import io.brokerstream.rules.Identifiers;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps a global store as its topic says (a null value deletes) and drops the key from the cache. A
 * key that is not an id by the one id rule (Postgres refuses such ids; this guards a record written
 * around it) is skipped with a warning: ids are joined with '|' in the flow's keys and scanned by
 * prefix.
 */
final class GlobalStoreUpdater<V> implements Processor<String, V, Void, Void> {
  private static final Logger log = LoggerFactory.getLogger(GlobalStoreUpdater.class);
  private final String storeName;
  private final ReferenceCache cache;
  private KeyValueStore<String, V> store;

  GlobalStoreUpdater(String storeName, ReferenceCache cache) {
    this.storeName = storeName;
    this.cache = cache;
  }

  @Override
  public void init(ProcessorContext<Void, Void> context) {
    store = context.getStateStore(storeName);
  }

  @Override
  public void process(Record<String, V> record) {
    if (!Identifiers.isId(record.key())) {
      log.warn(
          "{}: skipped a record whose key is not an id ({})",
          storeName,
          Identifiers.problem(record.key(), Identifiers.MAX_ID));
      return;
    }
    if (record.value() == null) {
      store.delete(record.key());
    } else {
      store.put(record.key(), record.value());
    }
    cache.invalidate(storeName, record.key());
  }
}
