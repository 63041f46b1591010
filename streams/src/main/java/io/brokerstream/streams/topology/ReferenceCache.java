package io.brokerstream.streams.topology;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * Decoded reference data in front of the global stores, shared by every stream thread.
 *
 * <p>Read-through: a miss loads from the store (the source of truth, restored by Kafka Streams).
 * Write-invalidate: the global store updaters drop a key after writing the store. A load runs under
 * the key's lock and the drop takes the same lock, so a value loaded before an update can never
 * outlive it. Each order used to decode four Avro records from RocksDB; now it reads four map
 * entries.
 */
public final class ReferenceCache {
  private static final int MAX_ENTRIES = 200_000;

  private final Map<String, Map<String, Object>> byStore = new ConcurrentHashMap<>();

  @SuppressWarnings("unchecked")
  public <V> V get(String store, String key, Function<String, V> load) {
    Map<String, Object> cache = byStore.computeIfAbsent(store, s -> new ConcurrentHashMap<>());
    if (cache.size() > MAX_ENTRIES) {
      cache.clear(); // crude, but bounded: the popular keys come back on their next use
    }
    return (V) cache.computeIfAbsent(key, load);
  }

  public void invalidate(String store, String key) {
    Map<String, Object> cache = byStore.get(store);
    if (cache != null) {
      cache.remove(key);
    }
  }
}
