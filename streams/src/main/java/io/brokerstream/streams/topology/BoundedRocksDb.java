package io.brokerstream.streams.topology;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.streams.state.RocksDBConfigSetter;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.Cache;
import org.rocksdb.LRUCache;
import org.rocksdb.Options;
import org.rocksdb.WriteBufferManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every RocksDB store of the process shares one block cache and one write-buffer budget. By default
 * each store (and each partition of it) gets its own, which on a small machine multiplies into
 * gigabytes of RSS.
 *
 * <p>Indexes and filters are cached whole, unpinned. With {@link #INDEX_FILTER_HIGH_PRIORITY} they
 * go to the cache's high-priority pool (a tenth of it), where data blocks cannot push them out:
 * most reads miss (an order id not seen yet), a miss is answered by a table's filter alone, and a
 * filter evicted by data blocks is read from its file and parsed again for the next miss.
 * Partitioned, pinned ones cut the streams process's CPU per order by about a quarter too, but with
 * them the process died without a word right after a restart onto a large backlog in two of five
 * full test runs, and the cause was not found: they stay out until it is.
 *
 * <p>The memtables' budget must hold a full memtable of every open instance (each store, each
 * partition of it, the global stores: 22 with four partitions). A store that was filled and then
 * left alone (a global store after its restore) keeps its memtable; once such memtables fill the
 * budget, every write to any other store flushes that store's memtable, a table file of a few
 * records each time, and flushing and merging them costs the process three quarters as much CPU as
 * its stream thread. The process warns when its open instances' memtables could outgrow the budget.
 */
public final class BoundedRocksDb implements RocksDBConfigSetter {
  /** Streams configuration keys (from the app's rocksdb.* settings). */
  public static final String CACHE_BYTES = "brokerstream.rocksdb.block-cache-bytes";

  public static final String WRITE_BUFFER_BYTES = "brokerstream.rocksdb.write-buffer-bytes";
  public static final String INDEX_FILTER_HIGH_PRIORITY =
      "brokerstream.rocksdb.index-filter-high-priority";

  static final long DEFAULT_CACHE_BYTES = 192L << 20;
  static final long DEFAULT_WRITE_BUFFER_BYTES = 128L << 20;

  /** Each store's memtable: small, so an idle store holds little; flushed when full. */
  static final long MEMTABLE_BYTES = 4L << 20;

  static final double MEMTABLE_BLOOM_RATIO = 0.1;

  private static final Logger log = LoggerFactory.getLogger(BoundedRocksDb.class);

  // One cache and budget per pair of sizes (a process configures every store alike, so one),
  // never closed: stores open and close as tasks move.
  private static final Map<List<Long>, Shared> shared = new HashMap<>();
  private static final AtomicInteger open = new AtomicInteger();
  private static volatile boolean warned;

  private record Shared(Cache cache, WriteBufferManager writeBuffers) {}

  @Override
  public void setConfig(String storeName, Options options, Map<String, Object> configs) {
    BlockBasedTableConfig table = (BlockBasedTableConfig) options.tableFormatConfig();
    long budget = bytes(configs, WRITE_BUFFER_BYTES, DEFAULT_WRITE_BUFFER_BYTES);
    Shared s = shared(bytes(configs, CACHE_BYTES, DEFAULT_CACHE_BYTES), budget);
    table.setBlockCache(s.cache());
    table.setCacheIndexAndFilterBlocks(true);
    table.setCacheIndexAndFilterBlocksWithHighPriority(
        Boolean.parseBoolean(
            String.valueOf(configs.getOrDefault(INDEX_FILTER_HIGH_PRIORITY, true))));
    options.setWriteBufferManager(s.writeBuffers());
    // A Bloom filter of whole keys in each memtable: most reads miss (an order id not seen yet, a
    // result not there yet), and without one every miss walks both memtables' skip lists.
    options.setMemtablePrefixBloomSizeRatio(MEMTABLE_BLOOM_RATIO);
    options.setMemtableWholeKeyFiltering(true);
    options.setWriteBufferSize(MEMTABLE_BYTES);
    options.setMaxWriteBufferNumber(2);
    options.setTableFormatConfig(table);
    int instances = open.incrementAndGet();
    if (crowded(instances, budget) && !warned) {
      warned = true;
      log.warn(
          "{} RocksDB instances' memtables ({} MB each) can outgrow rocksdb.write-buffer-bytes"
              + " ({} MB): stores left full will make the others flush table files of a few"
              + " records; raise it",
          instances,
          MEMTABLE_BYTES >> 20,
          budget >> 20);
    }
  }

  /** Whether this many open instances' full memtables would not fit the budget. */
  static boolean crowded(int instances, long budget) {
    return instances * MEMTABLE_BYTES > budget;
  }

  private static synchronized Shared shared(long cacheBytes, long writeBufferBytes) {
    return shared.computeIfAbsent(
        List.of(cacheBytes, writeBufferBytes),
        k -> {
          // a tenth for the high-priority pool (indexes and filters, when they go there); the
          // memtables are charged to the cache, so the cache must be the larger of the two
          Cache cache = new LRUCache(cacheBytes, -1, false, 0.1);
          return new Shared(cache, new WriteBufferManager(writeBufferBytes, cache));
        });
  }

  private static long bytes(Map<String, Object> configs, String key, long fallback) {
    Object value = configs.get(key);
    return value == null ? fallback : Long.parseLong(value.toString().trim());
  }

  @Override
  public void close(String storeName, Options options) {
    // shared: the cache and buffer manager live as long as the process
    open.decrementAndGet();
  }
}
