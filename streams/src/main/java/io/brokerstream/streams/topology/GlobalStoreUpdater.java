package io.brokerstream.streams.topology;

import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;

/** Keeps a global store as its topic says (a null value deletes) and drops the key from the cache. */
final class GlobalStoreUpdater<V> implements Processor<String, V, Void, Void> {
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
    if (record.key() == null) {
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
